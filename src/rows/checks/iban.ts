import { countrySpecs } from 'ibantools';
import { IBAN_REGISTRY } from './iban-registry.js';

/** docs/service.md "Rail details": the shape the service demands before it looks the IBAN up. */
export const IBAN_PATTERN = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$/;

/** The registry's character classes (upper case only: the electronic format). */
const CHARACTER_CLASS = { n: '[0-9]', a: '[A-Z]', c: '[A-Z0-9]' } as const;

/** A registry BBAN structure such as "4!a6!n8!n" as an anchored pattern for the whole IBAN. */
export function ibanPatternOf(country: string, bbanStructure: string): RegExp {
  let pattern = `^${country}[0-9]{2}`;
  for (const [, count, kind] of bbanStructure.matchAll(/([0-9]+)!([nac])/g)) {
    pattern += `${CHARACTER_CLASS[kind as keyof typeof CHARACTER_CLASS]}{${count}}`;
  }
  return new RegExp(`${pattern}$`);
}

// Each country's pattern is compiled on its first IBAN, so importing costs nothing.
const PATTERNS = new Map<string, RegExp>();

/** The registry pattern of `country`, or undefined when it is no IBAN country. */
function registryPattern(country: string): RegExp | undefined {
  let pattern = PATTERNS.get(country);
  if (pattern === undefined && Object.hasOwn(IBAN_REGISTRY, country)) {
    pattern = ibanPatternOf(country, IBAN_REGISTRY[country]!);
    PATTERNS.set(country, pattern);
  }
  return pattern;
}

/**
 * True when the ISO 7064 mod 97-10 check over the rearranged IBAN gives 1 and the check digits
 * are 02-98, the only ones the scheme produces (00 would pass wherever 97 is right, 01 for 98).
 */
export function hasValidIbanChecksum(iban: string): boolean {
  const checkDigits = Number(iban.slice(2, 4));
  if (!(checkDigits >= 2 && checkDigits <= 98)) return false;
  // Country and check digits go to the end; letters count as 10-35. Digit by digit, so no BigInt.
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i);
    if (code >= 48 && code <= 57) remainder = (remainder * 10 + (code - 48)) % 97;
    else if (code >= 65 && code <= 90) remainder = (remainder * 100 + (code - 55)) % 97;
    else return false;
  }
  return remainder === 1;
}

/**
 * Offline stand-in for the service's "iban is invalid" (not in the IBAN directory): the country
 * is one of the SWIFT IBAN Registry (iban-registry.ts names the release; ibantools also knows
 * countries outside it), the length and BBAN structure are the registry's, the
 * mod-97 check digits hold, and so does the national check digit where the country has one
 * (ibantools' checks for 17 countries: BE, ES, FR, NO, PL...). Electronic format only: no spaces.
 */
export function isValidIban(text: string): boolean {
  if (!IBAN_PATTERN.test(text)) return false;
  const country = text.slice(0, 2);
  const pattern = registryPattern(country);
  if (pattern === undefined || !pattern.test(text) || !hasValidIbanChecksum(text)) return false;
  const nationalCheck = countrySpecs[country]?.bban_validation_func;
  return nationalCheck === undefined || nationalCheck(text.slice(4));
}
