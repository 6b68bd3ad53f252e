import { clabe } from 'clabe-validator';

/** "clabe must be 18 digits long" (docs/service.md "Validation messages"). */
export const CLABE_PATTERN = /^[0-9]{18}$/;

/**
 * The check digit of a CLABE from its first 17 digits: weights 3, 7, 1 repeated, each product
 * taken mod 10, and (10 - sum mod 10) mod 10 (Banxico). clabe-validator's computeChecksum is
 * exactly that; its full `validate` also rejects unknown bank and city codes, which the service's
 * messages do not ask for, so only the check digit is used.
 */
export function clabeCheckDigit(first17: string): number | undefined {
  if (!/^[0-9]{17}$/.test(first17)) return undefined;
  return clabe.computeChecksum(first17) ?? undefined;
}

/** True when `text` is 18 digits whose last digit is the check digit of the first 17. */
export function hasValidClabeChecksum(text: string): boolean {
  return CLABE_PATTERN.test(text) && clabeCheckDigit(text.slice(0, 17)) === Number(text[17]);
}
