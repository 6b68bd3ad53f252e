/**
 * Amounts (docs/sheets.md, `amount`: decimal with `.`, greater than 0, at most 2 decimals; money
 * is never a float). Text goes straight to an integer of minor units (cents) as a bigint:
 * no Number() or parseFloat ever sees an amount, so 0.1 + 0.2 cannot happen.
 */
import { quoteCell } from '../sheet/quote.js';
import { AMOUNT_MESSAGES } from './messages.js';

/** A parsed amount: minor units and the normalised text ("1234.50"), or why it is refused. */
export type ParsedAmount = { ok: true; minor: bigint; text: string } | { ok: false; message: string };

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
const EXPONENT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+$/;
/** 1,234,567.89 / 1 234.50 / 1'234.50 (also no-break and narrow no-break spaces). */
const GROUPED_BY_COMMA = /^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?$/;
const GROUPED_BY_SPACE = /^[0-9]{1,3}(?:[ \u00a0\u202f'][0-9]{3})+(?:\.[0-9]*)?$/;

/** How a sheet writes its numbers: a semicolon-delimited CSV is where a comma marks the decimals. */
export interface SheetNumbers {
  decimalComma: boolean;
}

/** A sheet amount: as parseAmount, and `grouped` when it was read from a grouped form. */
export type SheetAmount =
  | { ok: true; minor: bigint; text: string; grouped?: true }
  | { ok: false; message: string };

// Grouped forms (Excel's CSV export writes the cell's format, "1,250.00").
const COMMA_GROUPS_DOT_DECIMALS = /^([1-9][0-9]{0,2}(?:,[0-9]{3})+)(?:\.([0-9]+))?$/;
const SPACE_GROUPS_DOT_DECIMALS = /^([1-9][0-9]{0,2}(?:[ \u00a0\u202f'\u2019][0-9]{3})+)(?:\.([0-9]+))?$/;
const DOT_GROUPS_COMMA_DECIMALS = /^([1-9][0-9]{0,2}(?:\.[0-9]{3})+)(?:,([0-9]+))?$/;
const SPACE_GROUPS_COMMA_DECIMALS = /^([1-9][0-9]{0,2}(?:[ \u00a0\u202f][0-9]{3})+),([0-9]+)$/;
const COMMA_DECIMALS = /^([0-9]+),([0-9]+)$/;
// One group of three after one separator: "1,250" and "1.250" read two ways.
const ONE_GROUP = /^([1-9][0-9]{0,2})[.,]([0-9]{3})$/;

/**
 * Parses an amount cell of a sheet: the plain form of parseAmount, and the grouped forms a
 * spreadsheet writes when it exports a formatted cell, where their reading is certain:
 * "1,250.00", "1 250.00", "1'250.00", "1,234,567"; "1.250,00", "1 250,00" and "12,50" only
 * in a sheet whose numbers use a decimal comma. "1,250" and "1.250" read two ways and are
 * refused with both readings.
 */
export function parseSheetAmount(text: string, numbers: SheetNumbers): SheetAmount {
  const amount = text.trim();
  // Most amounts are plain: "1250.00", where the fourth character from the end is no separator.
  const separator = amount.charCodeAt(amount.length - 4);
  if (separator !== 46 && separator !== 44 && DECIMAL.test(amount)) return parseAmount(amount);
  const one = ONE_GROUP.exec(amount);
  if (one !== null) {
    const grouped = `${one[1]}${one[2]}.00`;
    const decimal = formatDecimal(one[1]!, one[2]!);
    return { ok: false, message: AMOUNT_MESSAGES.ambiguousGrouping(amount, grouped, decimal) };
  }
  const dotDecimals = COMMA_GROUPS_DOT_DECIMALS.exec(amount) ?? SPACE_GROUPS_DOT_DECIMALS.exec(amount);
  if (dotDecimals !== null) return groupedAmount(amount, dotDecimals[1]!, dotDecimals[2]);
  const commaDecimals =
    DOT_GROUPS_COMMA_DECIMALS.exec(amount) ??
    SPACE_GROUPS_COMMA_DECIMALS.exec(amount) ??
    COMMA_DECIMALS.exec(amount);
  if (commaDecimals !== null) {
    if (!numbers.decimalComma) {
      const reading = formatDecimal(commaDecimals[1]!.replace(/[^0-9]/g, ''), commaDecimals[2] ?? '');
      // "1.234.567" has no comma to speak of: its "." groups, where this sheet's "." marks decimals.
      const message =
        commaDecimals[2] === undefined
          ? AMOUNT_MESSAGES.dotGrouping(amount, reading)
          : AMOUNT_MESSAGES.decimalComma(amount, reading);
      return { ok: false, message };
    }
    return groupedAmount(amount, commaDecimals[1]!, commaDecimals[2]);
  }
  return parseAmount(amount);
}

// The amount of a grouped form, checked like a plain one (decimals, greater than 0).
function groupedAmount(original: string, units: string, decimals: string | undefined): SheetAmount {
  const plain =
    decimals === undefined ? units.replace(/[^0-9]/g, '') : `${units.replace(/[^0-9]/g, '')}.${decimals}`;
  const parsed = parseAmount(plain);
  if (!parsed.ok) return rephrase(parsed, plain, original);
  return { ...parsed, grouped: true };
}

// A refusal of the plain reading names the cell as the user wrote it.
function rephrase(parsed: { ok: false; message: string }, plain: string, original: string): SheetAmount {
  return { ok: false, message: parsed.message.replace(quoteCell(plain), quoteCell(original)) };
}

// "1" and "250" → "1.25" (trailing zeros of the decimals dropped down to two, as money shows them).
function formatDecimal(units: string, decimals: string): string {
  const trimmed = decimals.replace(/0+$/, '');
  return `${BigInt(units)}.${trimmed.padEnd(2, '0')}`;
}

/**
 * The normalised text itself ("1234.50", "0.05"): what the register writes and most sheets
 * hold. Read straight to minor units, it is its own normalised text; the checks below would
 * find nothing to say of it (a zero, which they refuse, is left to them).
 */
const NORMALISED = /^(?:0|[1-9][0-9]*)\.[0-9]{2}$/;

/** Parses an amount cell. Leading and trailing white space is ignored; nothing else is repaired. */
export function parseAmount(text: string): ParsedAmount {
  // A history of a million payees holds millions of these: the checks cost 1.5 s of them.
  if (NORMALISED.test(text)) {
    const minor = BigInt(`${text.slice(0, -3)}${text.slice(-2)}`);
    if (minor !== 0n) return { ok: true, minor, text };
  }
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
