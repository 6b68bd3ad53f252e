/**
 * ABA routing transit numbers (ACH/WIRE/SWIFT "routingNumber is invalid", docs/service.md
 * "Validation messages").
 *
 * The service answers "no known US bank"; offline we check what every assigned number
 * satisfies: nine digits and the 3-7-1 weighted check digit (ABA / Accuris rules), and then
 * either a Federal Reserve routing symbol in its first two digits or a place in the Federal
 * Reserve's routing directories (fed-directory.ts: the Treasury's 15xx numbers).
 */
import { FED_DIRECTORY_OUTSIDE_PREFIX_TABLE } from './fed-directory.js';

const NINE_DIGITS = /^[0-9]{9}$/;
const WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

/**
 * First two digits: 00 US government, 01-12 Federal Reserve districts, 21-32 thrift
 * institutions (district + 20), 61-72 electronic transactions (district + 60), 80 traveller's
 * cheques. Anything else (13-20, 33-60, 73-79, 81-99) is not a routing symbol; the directory
 * nevertheless lists a few such numbers (the Treasury's 154000008), so they are looked up.
 */
export function hasAssignedPrefix(digits: string): boolean {
  const prefix = Number(digits.slice(0, 2));
  return prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
}

/** True when the 3-7-1 weighted sum of the nine digits is a multiple of 10. */
export function hasValidAbaChecksum(digits: string): boolean {
  if (!NINE_DIGITS.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += Number(digits[i]) * WEIGHTS[i]!;
  return sum % 10 === 0;
}

/**
 * True for a plausible ABA routing number: 9 digits, not all zeros, a valid check digit, and
 * an assigned prefix or a Federal Reserve directory entry.
 */
export function isValidRoutingNumber(text: string): boolean {
  if (text === '000000000' || !hasValidAbaChecksum(text)) return false;
  return hasAssignedPrefix(text) || FED_DIRECTORY_OUTSIDE_PREFIX_TABLE.has(text);
}
