/**
 * Spreadsheet damage in identifier columns (docs/sheets.md: "Spreadsheet damage is
 * reported, never repaired"). A spreadsheet that takes a routing, account, CLABE or
 * document number for a number drops its leading zeros, keeps only 15 significant digits, or
 * shows it in scientific notation; once saved, the lost digits cannot be recovered.
 */
import type { Cell } from '../sheet/types.js';
import { ROW_MESSAGES } from './messages.js';

/**
 * Scientific notation as spreadsheets and String(number) write it ("2.1E+08", "1e+21"). The
 * exponent sign is required so that an account number such as "12E45" is not mistaken for it.
 */
const SCIENTIFIC = /^[+-]?[0-9]+(?:\.[0-9]*)?[eE][+-][0-9]+$/;

/** IEEE doubles, and spreadsheets, hold 15 significant decimal digits for sure. */
const MAX_EXACT_DIGITS = 15;

/**
 * What damage an identifier column's cell shows, as a message naming the column and the fix;
 * undefined when the cell looks intact. Scientific notation is recognised in any cell (a CSV
 * saved by a spreadsheet carries it as text); the other two only in cells stored as numbers.
 */
export function identifierDamage(column: string, cell: Cell): string | undefined {
  return damageOf(column, cell.text.trim(), cell.kind);
}

/** identifierDamage of a cell whose text is already trimmed. */
export function damageOf(column: string, text: string, kind: Cell['kind']): string | undefined {
  if (SCIENTIFIC.test(text)) return ROW_MESSAGES.arrivedInScientificNotation(column, text);
  if (kind !== 'number') return undefined;
  if (significantDigits(text) > MAX_EXACT_DIGITS) return ROW_MESSAGES.arrivedWithTooManyDigits(column, text);
  return ROW_MESSAGES.arrivedAsNumber(column, text);
}

/** Significant digits of a plain decimal text: "32180000118359720" → 16, "0.0120" → 2. */
function significantDigits(text: string): number {
  const digits = text.replace(/[^0-9]/g, '');
  return digits.replace(/^0+/, '').replace(/0+$/, '').length;
}
