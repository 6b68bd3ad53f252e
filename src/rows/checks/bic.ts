import { isValidBIC } from 'ibantools';

/** docs/service.md "Rail details": the regex the service names in its swiftCode message. */
export const BIC_PATTERN = /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/**
 * Offline stand-in for the service's "swiftCode is invalid" (not in the SWIFT directory): the
 * code has the service's format and positions 5-6 name a country (ISO 9362). The country
 * table is ibantools': the ISO 3166-1 codes plus XK, which SWIFT assigns to Kosovo's banks.
 */
export function isValidBic(text: string): boolean {
  return BIC_PATTERN.test(text) && isValidBIC(text);
}
