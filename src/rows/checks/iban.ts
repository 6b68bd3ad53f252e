import { isValidIBAN } from 'ibantools';

/** SPEC.md 2.4 / 7.2: the shape the service demands before it looks the IBAN up. */
export const IBAN_PATTERN = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$/;

/**
 * Offline stand-in for SPEC.md 7.2 "iban is invalid" (not in the IBAN directory): the country
 * is an IBAN country, the length and BBAN format are that country's (ISO 13616 registry, as
 * ibantools carries it) and the mod-97 check digits hold. Electronic format only: no spaces.
 */
export function isValidIban(text: string): boolean {
  return IBAN_PATTERN.test(text) && isValidIBAN(text);
}
