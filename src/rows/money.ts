/**
 * Amounts (PRODUCT.md "The sheet": decimal with `.`, greater than 0, at most 2 decimals; money
 * is never a float). Text goes straight to an integer of minor units (cents) as a bigint:
 * no Number() or parseFloat ever sees an amount, so 0.1 + 0.2 cannot happen.
 */
import { AMOUNT_MESSAGES } from './messages.js';

/** A parsed amount: minor units and the normalised text ("1234.50"), or why it is refused. */
export type ParsedAmount = { ok: true; minor: bigint; text: string } | { ok: false; message: string };

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
const EXPONENT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+$/;
/** 1,234,567.89 / 1 234.50 / 1'234.50 (also no-break and narrow no-break spaces). */
const GROUPED_BY_COMMA = /^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?$/;
const GROUPED_BY_SPACE = /^[0-9]{1,3}(?:[ \u00a0\u202f'][0-9]{3})+(?:\.[0-9]*)?$/;

/** Parses an amount cell. Leading and trailing white space is ignored; nothing else is repaired. */
export function parseAmount(text: string): ParsedAmount {
  const amount = text.trim();
  if (amount === '') return { ok: false, message: AMOUNT_MESSAGES.required };
  if (EXPONENT.test(amount)) return { ok: false, message: AMOUNT_MESSAGES.exponent(amount) };
  if (/^-\s*[0-9.]/.test(amount)) return { ok: false, message: AMOUNT_MESSAGES.negative(amount) };
  if (/^\+\s*[0-9.]/.test(amount)) return { ok: false, message: AMOUNT_MESSAGES.sign(amount) };
  if (isGroupedByThousands(amount)) return { ok: false, message: AMOUNT_MESSAGES.thousandsSeparator(amount) };

  const match = DECIMAL.exec(amount);
  if (match === null) return { ok: false, message: AMOUNT_MESSAGES.notDecimal(amount) };
  const units = match[1]!;
  const decimals = match[2] ?? '';
  if (decimals.length > 2) return { ok: false, message: AMOUNT_MESSAGES.tooManyDecimals(amount) };

  const minor = BigInt(units) * 100n + BigInt(decimals.padEnd(2, '0'));
  if (minor === 0n) return { ok: false, message: AMOUNT_MESSAGES.notPositive(amount) };
  return { ok: true, minor, text: formatMinor(minor) };
}

/** Minor units as a decimal string with exactly 2 decimals: 123450n → "1234.50". */
export function formatMinor(minor: bigint): string {
  const sign = minor < 0n ? '-' : '';
  const magnitude = minor < 0n ? -minor : minor;
  const cents = (magnitude % 100n).toString().padStart(2, '0');
  return `${sign}${magnitude / 100n}.${cents}`;
}

/**
 * "1,250" alone may be 1250 or 1.250 written the European way, so a single comma group
 * without a "." is left to the plain "not a decimal number" message.
 */
function isGroupedByThousands(amount: string): boolean {
  if (GROUPED_BY_SPACE.test(amount)) return true;
  if (!GROUPED_BY_COMMA.test(amount)) return false;
  return amount.includes('.') || amount.split(',').length > 2;
}
