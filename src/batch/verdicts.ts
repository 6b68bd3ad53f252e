import type { ColumnIndex } from '../columns/columns.js';
import { BatchDigest } from './digest.js';
import type { EarlierResult } from './earlier.js';
import type { PreparedRow } from './prepare.js';
import { BatchSummary, type RowStatus } from './summary.js';

/** One invalid row, for the summary a person reads. */
export interface RowSample {
  rowNumber: number;
  reference: string;
  messages: string[];
}

/** What the results file says of a row in `validate` (its `result.*` columns and marks). */
export interface RowVerdict {
  status: RowStatus;
  errors: readonly string[];
  errorColumns: readonly number[];
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
}

/** The verdict of most rows: valid, nothing to name. Shared, never changed. */
export const VALID: RowVerdict = Object.freeze({
  status: 'valid',
  errors: Object.freeze([]) as readonly string[],
  errorColumns: Object.freeze([]) as readonly number[],
});

/** What `validate` learnt of the whole sheet. */
export interface SheetFindings {
  summary: BatchSummary;
  digest: string;
  invalidSamples: RowSample[];
  /** Totals rows that did not match the rows above them (totals-row.ts): a batch guard. */
  totalsMismatches: string[];
  /** References used by more than one row, with those rows: their first rows need a second reading. */
  repeats: [string, number[]][];
}

/**
 * The dry run's view of the rows, in sheet order: each row's verdict, and the counts, totals,
 * digest and invalid samples of the summary.
 */
export class ValidationTally {
  readonly summary = new BatchSummary();
  private readonly digest: BatchDigest;
  private readonly invalidSamples: RowSample[] = [];
  private readonly totalsMismatches: string[] = [];

  constructor(
    index: ColumnIndex,
    private readonly sampleSize: number,
  ) {
    this.digest = new BatchDigest(index);
  }

  /**
   * Counts a row and returns its verdict; `earlier` is what the register says of a valid row
   * (register-check.ts). The digest is of the sheet's valid rows whatever the register says,
   * so `run --approve` compares the same thing.
   */
  add(row: PreparedRow, earlier?: EarlierResult): RowVerdict {
    // The totals row is no payout: not counted, not hashed, `skipped` with what it says.
    if (row.totals !== undefined) {
      tally(this.summary, row, 'skipped');
      if (row.totals.mismatch !== undefined) this.totalsMismatches.push(row.totals.mismatch);
      return { status: 'skipped', errors: [row.totals.message], errorColumns: VALID.errorColumns };
    }
    const valid = row.issues.length === 0;
    if (valid) this.digest.add(row);
    if (earlier !== undefined) {
      tally(this.summary, row, earlier.status);
      if (earlier.status !== 'skipped' && this.invalidSamples.length < this.sampleSize) {
        this.invalidSamples.push({ ...sampleOf(row), messages: earlier.errors });
      }
      // Field by field, not a spread: against a register every row may come this way.
      return {
        status: earlier.status,
        errors: earlier.errors,
        errorColumns: VALID.errorColumns,
        beneficiaryId: earlier.beneficiaryId,
        recipientId: earlier.recipientId,
        simulationId: earlier.simulationId,
        transactionId: earlier.transactionId,
      };
    }
    const status: RowStatus = valid ? 'valid' : 'invalid';
    tally(this.summary, row, status);
    if (!valid && this.invalidSamples.length < this.sampleSize) this.invalidSamples.push(sampleOf(row));
    const { beneficiary, recipient } = row.payout;
    const beneficiaryId = beneficiary.kind === 'existing' ? beneficiary.id : undefined;
    const recipientId = recipient.kind === 'existing' ? recipient.id : undefined;
    if (valid && beneficiaryId === undefined && recipientId === undefined) return VALID;
    return {
      status,
      errors: valid ? VALID.errors : row.issues.map((i) => i.message),
      errorColumns: row.errorColumns,
      beneficiaryId,
      recipientId,
    };
  }

  /** The findings; call once, after the last row. */
  finish(): SheetFindings {
    return {
      summary: this.summary,
      digest: this.digest.finish(),
      invalidSamples: this.invalidSamples,
      totalsMismatches: this.totalsMismatches,
      repeats: [],
    };
  }
}

/** Counts a row and adds its amount to the sheet's (and, if valid, the valid) totals. */
export function tally(summary: BatchSummary, row: PreparedRow, status: RowStatus): void {
  if (row.raw.strayQuote) summary.strayQuoteRow ??= row.raw.rowNumber;
  if (row.totals !== undefined) {
    summary.totalsRows.push(row.totals.message);
    return;
  }
  summary.count(status);
  const { amount, currency } = row.payout;
  if (amount?.grouped) summary.groupedAmounts += 1;
  if (amount && currency) {
    BatchSummary.add(summary.sheetTotals, currency, amount.minor);
    if (status !== 'invalid') {
      BatchSummary.add(summary.validTotals, currency, amount.minor);
      summary.noteLargest(currency, amount.minor, row.raw.rowNumber, row.payout.reference);
    }
  }
}

function sampleOf(row: PreparedRow): RowSample {
  return {
    rowNumber: row.raw.rowNumber,
    reference: row.payout.reference,
    messages: row.issues.map((i) => i.message),
  };
}
