import { formatMinor } from '../rows/money.js';

/** PRODUCT.md row statuses, defined once. */
export const ROW_STATUSES = [
  'valid',
  'invalid',
  'submitted',
  'completed',
  'failed',
  'unknown',
  'skipped',
] as const;
export type RowStatus = (typeof ROW_STATUSES)[number];

/** Statuses that make the exit code 1 (PRODUCT.md "Exit codes"). */
export const NOT_OK_STATUSES: ReadonlySet<RowStatus> = new Set(['invalid', 'failed', 'unknown']);

/** A row's amount (minor units) and where it is, for a guard that names the row. */
export interface LargestAmount {
  minor: bigint;
  rowNumber: number;
  reference: string;
}

/** Counts per status and amounts per currency, in minor units (never floats). */
export class BatchSummary {
  rows = 0;
  readonly byStatus: Record<RowStatus, number> = {
    valid: 0,
    invalid: 0,
    submitted: 0,
    completed: 0,
    failed: 0,
    unknown: 0,
    skipped: 0,
  };
  /** Sum of every row's amount (valid or not) per currency: the sheet's control totals. */
  readonly sheetTotals = new Map<string, bigint>();
  /** Sum of the amounts of rows that are valid (or were sent), per currency. */
  readonly validTotals = new Map<string, bigint>();
  /** Amounts read from a grouped form such as "1,250.00", which the summary reports. */
  groupedAmounts = 0;
  /** The first row whose quote inside an unquoted cell was read as a character (CSV). */
  strayQuoteRow: number | undefined = undefined;
  /** What each totals row said (totals-row.ts): not counted as rows, reported once. */
  readonly totalsRows: string[] = [];

  /** The largest amount of a valid (or sent) row per currency, with its row: `--max-amount`. */
  readonly largestValid = new Map<string, LargestAmount>();

  /** Counts one row. */
  count(status: RowStatus): void {
    this.rows += 1;
    this.byStatus[status] += 1;
  }

  /** Adds an amount to a per-currency total. */
  static add(totals: Map<string, bigint>, currency: string, minor: bigint): void {
    totals.set(currency, (totals.get(currency) ?? 0n) + minor);
  }

  /** Keeps `row` as its currency's largest valid amount if it is larger than the one so far. */
  noteLargest(currency: string, minor: bigint, rowNumber: number, reference: string): void {
    // Called for every valid row: allocates only when the row is the new largest.
    const largest = this.largestValid.get(currency);
    if (largest === undefined || minor > largest.minor)
      this.largestValid.set(currency, { minor, rowNumber, reference });
  }

  /** True when no row is invalid, failed or unknown. */
  get allOk(): boolean {
    return [...NOT_OK_STATUSES].every((s) => this.byStatus[s] === 0);
  }

  /** Per-currency totals as decimal strings, sorted by currency. */
  static formatTotals(totals: Map<string, bigint>): Record<string, string> {
    return Object.fromEntries(
      [...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, m]) => [c, formatMinor(m)]),
    );
  }

  /** The statuses that occurred, with counts, for the JSON summary. */
  statusCounts(): Partial<Record<RowStatus, number>> {
    return Object.fromEntries(
      ROW_STATUSES.filter((s) => this.byStatus[s] > 0).map((s) => [s, this.byStatus[s]]),
    );
  }
}

/** "1,234,567.89" for people; files and JSON keep the plain decimal string. */
export function formatAmountForPeople(minor: bigint): string {
  const [whole = '0', cents = '00'] = formatMinor(minor).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  return `${negative ? '-' : ''}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}
