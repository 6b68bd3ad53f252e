/**
 * The totals row of a sheet: a row at the bottom with `TOTAL` and a SUM is not a
 * payout. It is reported once, left out of the counts, totals, --expect-count and the digest,
 * and its amount is checked against the rows above it: a control total that comes for free.
 */
import { GuardError } from '../errors.js';
import type { PayoutRow } from '../rows/types.js';
import { quoteCell } from '../sheet/quote.js';
import type { Cell } from '../sheet/types.js';
import { formatAmountForPeople } from './summary.js';

// "TOTAL", "Total:", "Totals", "Grand total", "Subtotal", "Sum", in any case.
const TOTAL_LABEL = /^(?:grand\s+)?(?:sub\s*)?totals?\s*:?$|^sum\s*:?$/i;
// The longest label above, with room for spaces: longer cells need no regular expression.
const LONGEST_LABEL = 16;

// Called on every row's reference: out on the length or the first character before any regex.
function isLabel(text: string): boolean {
  if (text.length === 0 || text.length > LONGEST_LABEL + 4) return false;
  const first = text.charCodeAt(0) | 0x20;
  // t(otal), s(um, ubtotal), g(rand total), or a space before them.
  if (first !== 0x74 && first !== 0x73 && first !== 0x67 && text.charCodeAt(0) > 0x20) return false;
  return TOTAL_LABEL.test(text.trim().replace(/\s+/g, ' '));
}

/**
 * Whether a row is the totals row: its reference cell is empty (or the label itself), and a
 * cell holds a label such as TOTAL, or the amount cell is a SUM formula. Column positions are
 * -1 when the sheet has no such column.
 */
export function isTotalsRow(cells: readonly Cell[], referenceAt: number, amountAt: number): boolean {
  const reference = referenceAt < 0 ? undefined : cells[referenceAt];
  // Most rows have a reference: out after a length check.
  if (reference !== undefined && !isLabel(reference.text) && reference.text.trim() !== '') return false;
  if (amountAt >= 0 && cells[amountAt]?.sum === true) return true;
  for (const cell of cells) if (cell.kind === 'string' && isLabel(cell.text)) return true;
  return false;
}

/** What the results file says of a totals row, and the guard problem when it does not match. */
export interface TotalsRowFinding {
  message: string;
  mismatch?: string;
}

/** Sums the payout rows as they go by and judges each totals row against the rows above it. */
export class TotalsRowCheck {
  private readonly sums = new Map<string, bigint>();
  private rows = 0;

  /** Adds a payout row (valid or not) whose amount and currency could be read. */
  add(payout: PayoutRow): void {
    this.rows += 1;
    const { amount, currency } = payout;
    if (amount !== undefined && currency !== undefined)
      this.sums.set(currency, (this.sums.get(currency) ?? 0n) + amount.minor);
  }

  /** The finding on a totals row, from its own amount (and currency, if it names one). */
  judge(row: PayoutRow, amountText: string | undefined): TotalsRowFinding {
    const what = `row ${row.rowNumber} is the totals row, not a payout`;
    if (amountText === undefined) return { message: `${what}: it has no amount, so it was not checked` };
    if (row.amount === undefined)
      return {
        message: `${what}: its amount ${quoteCell(amountText)} cannot be read, so it was not checked against the rows above it`,
      };
    const currencies = [...this.sums.keys()];
    const currency = row.currency ?? (currencies.length === 1 ? currencies[0] : undefined);
    if (currency === undefined) {
      return {
        message: `${what}: the rows above it are in ${currencies.length === 0 ? 'no currency' : `several currencies (${currencies.sort().join(', ')})`} and it names none, so it was not checked`,
      };
    }
    const said = `${currency} ${formatAmountForPeople(row.amount.minor)}`;
    const sum = this.sums.get(currency) ?? 0n;
    const rows = `${this.rows.toLocaleString('en-US')} row${this.rows === 1 ? '' : 's'}`;
    if (sum === row.amount.minor)
      return { message: `${what}: its amount ${said} matches the ${rows} above it` };
    const actual = `${currency} ${formatAmountForPeople(sum)}`;
    return {
      message: `${what}: its amount ${said} does not match the ${rows} above it, which add up to ${actual}. Check for a missing, extra or changed row`,
      mismatch: `the totals row (row ${row.rowNumber}) says ${said} but the ${rows} above it add up to ${actual}`,
    };
  }
}

/** The batch guard for totals rows that did not match (exit 4, like a failed --expect-total). */
export function totalsRowGuard(mismatches: readonly string[]): GuardError | undefined {
  if (mismatches.length === 0) return undefined;
  return new GuardError(`control totals do not match, so nothing was sent: ${mismatches.join(', and ')}`);
}
