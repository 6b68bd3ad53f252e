import { formatMinor, parseAmount } from '../rows/money.js';

/** The row statuses (README "The sheet and the results file"), defined once. */
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

/** Statuses that make the exit code 1 (README "Exit codes"). */
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
  /** What `run` would send now, per currency: valid rows not paid already, not held. */
  readonly sendTotals = new Map<string, bigint>();
  /** Amounts per status and currency: what the metrics for cron say of each status. */
  readonly statusTotals = new Map<RowStatus, Map<string, bigint>>();
  /** Amounts read from a grouped form such as "1,250.00", which the summary reports. */
  groupedAmounts = 0;
  /** Rows whose amount or currency could not be read: in no total, which the summary says. */
  untotalledRows = 0;
  /** The first row whose quote inside an unquoted cell was read as a character (CSV). */
  strayQuoteRow: number | undefined = undefined;
  /** What each totals row said (totals-row.ts): not counted as rows, reported once. */
  readonly totalsRows: string[] = [];

  /** The largest amount of a valid (or sent) row per currency, with its row: `--max-amount`. */
  readonly largestValid = new Map<string, LargestAmount>();

  /** The rails of the rows `run` would send now: what an approval policy's `rails` looks at. */
  readonly sendRails = new Set<string>();
  /** Rows per rail ('' for a row without one), for the approver's report. */
  readonly byRail = new Map<string, number>();
  /** The largest valid (or sent) payments per currency, largest first, at most LARGEST_KEPT each. */
  readonly largestPayments = new Map<string, LargestAmount[]>();
  /** The messages of rows not ok, with how many rows and the first rows each (ErrorGroups). */
  readonly errorGroups = new ErrorGroups();

  /** Counts one row. */
  count(status: RowStatus): void {
    this.rows += 1;
    this.byStatus[status] += 1;
  }

  /** Adds an amount to a per-currency total. */
  static add(totals: Map<string, bigint>, currency: string, minor: bigint): void {
    totals.set(currency, (totals.get(currency) ?? 0n) + minor);
  }

  /** The per-currency totals of one status, made on first use. */
  totalsOf(status: RowStatus): Map<string, bigint> {
    let totals = this.statusTotals.get(status);
    if (totals === undefined) {
      totals = new Map();
      this.statusTotals.set(status, totals);
    }
    return totals;
  }

  /** Keeps `row` as its currency's largest valid amount if it is larger than the one so far. */
  noteLargest(currency: string, minor: bigint, rowNumber: number, reference: string): void {
    // Called for every valid row: allocates only when the row is the new largest.
    const largest = this.largestValid.get(currency);
    if (largest === undefined || minor > largest.minor)
      this.largestValid.set(currency, { minor, rowNumber, reference });
  }

  /** Keeps a valid row among its currency's LARGEST_KEPT largest payments. */
  noteLargePayment(currency: string, entry: LargestAmount): void {
    let list = this.largestPayments.get(currency);
    if (list === undefined) {
      list = [];
      this.largestPayments.set(currency, list);
    }
    // Most rows are smaller than the smallest kept: one comparison, no allocation.
    if (list.length === LARGEST_KEPT && entry.minor <= list[list.length - 1]!.minor) return;
    let at = list.length;
    while (at > 0 && list[at - 1]!.minor < entry.minor) at -= 1;
    list.splice(at, 0, entry);
    if (list.length > LARGEST_KEPT) list.pop();
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

/** Payments kept per currency for the report's "largest payments". */
export const LARGEST_KEPT = 20;

/** Rows kept per message, and distinct messages kept, for the report's errors by message. */
export const ROWS_PER_MESSAGE = 50;
export const MESSAGES_KEPT = 500;

/** One message of rows not ok: how many rows say it, and the first of them. */
export interface ErrorGroup {
  count: number;
  rows: number[];
}

/**
 * The messages of the rows not ok, each with its count and first ROWS_PER_MESSAGE rows, so
 * 1,834 rows with one problem read as one line. At most MESSAGES_KEPT distinct messages; the
 * rows of any others are counted in `otherRows`, so memory stays bounded for any sheet.
 */
export class ErrorGroups {
  readonly groups = new Map<string, ErrorGroup>();
  otherRows = 0;

  add(rowNumber: number, messages: readonly string[]): void {
    for (const message of messages) {
      let group = this.groups.get(message);
      if (group === undefined) {
        if (this.groups.size >= MESSAGES_KEPT) {
          this.otherRows += 1;
          continue;
        }
        group = { count: 0, rows: [] };
        this.groups.set(message, group);
      }
      group.count += 1;
      if (group.rows.length < ROWS_PER_MESSAGE) group.rows.push(rowNumber);
    }
  }

  /** Most frequent first. */
  sorted(): [string, ErrorGroup][] {
    return [...this.groups].sort(([, a], [, b]) => b.count - a.count);
  }

  /** Again after a structured clone (a worker's message), which keeps fields only. */
  static from(data: ErrorGroups): ErrorGroups {
    return Object.assign(new ErrorGroups(), data);
  }
}

/** A decimal text as the summaries write it ("3150000.00", "+100.00"), grouped for people. */
export function groupDecimalForPeople(text: string): string {
  const sign = text.startsWith('-') || text.startsWith('+') ? text[0]! : '';
  const parsed = parseAmount(text.slice(sign.length));
  return parsed.ok ? `${sign}${formatAmountForPeople(parsed.minor)}` : text;
}

/** "1,234,567.89" for people; files and JSON keep the plain decimal string. */
export function formatAmountForPeople(minor: bigint): string {
  const [whole = '0', cents = '00'] = formatMinor(minor).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  return `${negative ? '-' : ''}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

/** What a row came to in this run: its results-file columns. */
export interface RowResult {
  status: RowStatus;
  errors: string[];
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
  /**
   * An error that ends the run although this row's result stands: the register failed to
   * record an answer the service gave (the row is what the service said, not "not sent").
   */
  runError?: unknown;
}
