import type { ColumnIndex } from '../columns/columns.js';
import { BatchDigest, inDigest } from './digest.js';
import type { EarlierResult } from './earlier.js';
import type { PreparedRow } from './prepare.js';
import { LISTED_SHOWN, type SincePrevious, type SincePreviousComparison, sinceOf } from './since-previous.js';
import { BatchSummary, NOT_OK_STATUSES, type RowStatus } from './summary.js';
import {
  heldReason,
  messagesOf,
  NEW_PAYEE_ONLY,
  NO_WARNINGS,
  newPayeeMessage,
  type RowWarning,
  WarningTally,
} from './warnings.js';

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
  /** The approver's warnings of the row (warnings.ts), in words. */
  warnings?: readonly string[];
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

/**
 * The verdict of a valid row to a payee the register never paid (a first sheet: every row): its
 * one warning names the payee, and the worker sends it as that name alone (worker-codec.ts).
 */
export interface NewPayeeVerdict extends RowVerdict {
  newPayee: string;
}

export function validNewPayee(name: string): NewPayeeVerdict {
  return { ...VALID, warnings: [newPayeeMessage(name)], newPayee: name };
}

/** What `validate` learnt of the whole sheet. */
export interface SheetFindings {
  summary: BatchSummary;
  digest: string;
  invalidSamples: RowSample[];
  /** Totals rows that did not match the rows above them (totals-row.ts): a batch guard. */
  totalsMismatches: string[];
  /** References used by more than one row, with those rows: their first rows need a second reading. */
  repeats: [string, number[]][];
  /** Payments (payee, amount, currency) on more than one row: their first rows need it too. */
  duplicates: [string, number[]][];
  /** The sheet's tag (digest.ts): names its payouts in the payee history. */
  tag: string;
  /**
   * The batches that last changed the payee histories read, left out as the sheet's own or held
   * against its rows: a wrong guess of its own (warnings.ts judgedRight) needs another reading.
   */
  historyOwn: string[];
  historyOther: string[];
  warnings: WarningTally;
  /** What changed since the previous batch the register paid (since-previous.ts); null: none. */
  since: SincePrevious | null;
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
  readonly warnings: WarningTally;
  private comparisons: readonly SincePreviousComparison[] = [];
  /**
   * While the comparisons are read elsewhere (compareLater): the payee, amount and currency of
   * each row they will count, in sheet order, for compareWith to add.
   */
  private waiting: { payees: (string | undefined)[]; minors: bigint[]; currencies: string[] } | undefined;

  constructor(
    index: ColumnIndex,
    private readonly sampleSize: number,
    /**
     * Keep every warned reference and every payee listed since the previous batch (for
     * `--json`), not only the counts and the first rows.
     */
    private readonly keepReferences = true,
    /** `--hold-changed-payees`: a row whose payee's bank details changed would not be sent. */
    private readonly hold = false,
    /** Where the valid rows are hashed (BatchDigest): 'elsewhere' gives finish their tag. */
    rowsHashed: 'here' | 'elsewhere' = 'here',
  ) {
    this.digest = new BatchDigest(index, rowsHashed);
    this.warnings = new WarningTally(keepReferences);
  }

  /**
   * Compares the sheet's valid rows with these earlier batches too (since-previous.ts), the rows
   * added while they were awaited (compareLater) first.
   */
  compareWith(comparisons: readonly SincePreviousComparison[]): void {
    this.comparisons = comparisons;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting === undefined) return;
    for (let i = 0; i < waiting.payees.length; i++)
      for (const comparison of comparisons)
        comparison.add(waiting.payees[i], waiting.minors[i]!, waiting.currencies[i]!);
  }

  /**
   * The earlier batches are still being read (by another thread): the rows are counted now and
   * compared once compareWith gives them, before finish.
   */
  compareLater(): void {
    this.waiting = { payees: [], minors: [], currencies: [] };
  }

  /**
   * Whether `add` compares this row with earlier batches by its payee: then it wants the row's
   * keyed payee identity. A keyed hash costs as much as checking the row: none is taken for a row
   * that is not compared (invalid, refused by the register), nor where the earlier batches name
   * no payee.
   */
  wantsPayee(row: PreparedRow, earlier?: EarlierResult): boolean {
    return (
      this.compares(row, earlier) &&
      (this.waiting !== undefined || this.comparisons.some((c) => c.needsPayees))
    );
  }

  /** Whether the row counts in the comparisons: a valid row the register does not refuse. */
  private compares(row: PreparedRow, earlier: EarlierResult | undefined): boolean {
    const { amount, currency } = row.payout;
    return (
      (this.comparisons.length > 0 || this.waiting !== undefined) &&
      row.totals === undefined &&
      row.issues.length === 0 &&
      earlier?.status !== 'invalid' &&
      amount !== undefined &&
      currency !== undefined
    );
  }

  /**
   * Counts a row and returns its verdict; `earlier` is what the register says of a valid row
   * (register-check.ts). The digest is of the sheet's valid rows whatever the register says,
   * so `run --approve` compares the same thing; it covers the row's warnings too. `payee` is the
   * row's keyed payee identity, when `wantsPayee`.
   */
  add(
    row: PreparedRow,
    earlier?: EarlierResult,
    warnings: readonly RowWarning[] = NO_WARNINGS,
    payee?: string,
  ): RowVerdict {
    // The totals row is no payout: not counted, not hashed, `skipped` with what it says.
    if (row.totals !== undefined) {
      tally(this.summary, row, 'skipped');
      if (row.totals.mismatch !== undefined) this.totalsMismatches.push(row.totals.mismatch);
      return { status: 'skipped', errors: [row.totals.message], errorColumns: VALID.errorColumns };
    }
    const valid = inDigest(row);
    // A row the register refuses (its reference was paid with other details) is invalid: no
    // warnings, in the digest either. One it knows otherwise (paid already, in doubt) keeps them
    // in the digest, so a resumed batch hashes as the first run did, but shows none: warnings
    // are for the rows that would be sent.
    if (valid) this.digest.add(row, earlier?.status === 'invalid' ? NO_WARNINGS : warnings);
    if (this.compares(row, earlier)) {
      const { amount, currency } = row.payout;
      if (this.waiting !== undefined) {
        this.waiting.payees.push(payee);
        this.waiting.minors.push(amount!.minor);
        this.waiting.currencies.push(currency!);
      } else {
        for (const comparison of this.comparisons) comparison.add(payee, amount!.minor, currency!);
      }
    }
    if (earlier !== undefined) {
      tally(this.summary, row, earlier.status, earlier.errors);
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
    const name = row.payee?.name;
    if (warnings.length > 0) this.warnings.add(row.raw.rowNumber, row.payout.reference, warnings, name);
    // In words only where a verdict carries them: a first sheet's every row is a new payee,
    // whose verdict makes its one message itself.
    const wordsOf = () => (warnings.length === 0 ? undefined : messagesOf(warnings, name));
    const held = this.hold && valid ? heldReason(warnings) : undefined;
    if (held !== undefined) {
      tally(this.summary, row, 'skipped');
      // A held row needs attention as much as an invalid one: listed with them.
      this.summary.errorGroups.add(row.raw.rowNumber, [held]);
      if (this.invalidSamples.length < this.sampleSize)
        this.invalidSamples.push({ ...sampleOf(row), messages: [held] });
      return { status: 'skipped', errors: [held], errorColumns: VALID.errorColumns, warnings: wordsOf() };
    }
    const status: RowStatus = valid ? 'valid' : 'invalid';
    const messages = valid ? VALID.errors : row.issues.map((i) => i.message);
    tally(this.summary, row, status, messages);
    if (!valid && this.invalidSamples.length < this.sampleSize) this.invalidSamples.push(sampleOf(row));
    const { beneficiary, recipient } = row.payout;
    const beneficiaryId = beneficiary.kind === 'existing' ? beneficiary.id : undefined;
    const recipientId = recipient.kind === 'existing' ? recipient.id : undefined;
    if (valid && beneficiaryId === undefined && recipientId === undefined) {
      if (warnings.length === 0) return VALID;
      if (warnings === NEW_PAYEE_ONLY && name !== undefined) return validNewPayee(name);
    }
    return {
      status,
      errors: messages,
      errorColumns: row.errorColumns,
      warnings: wordsOf(),
      beneficiaryId,
      recipientId,
    };
  }

  /**
   * The findings; call once, after the last row (the previous batch is read once more). `tag`:
   * the valid rows' hash, when they were hashed elsewhere (DigestRows).
   */
  async finish(tag?: string): Promise<SheetFindings> {
    if (this.waiting !== undefined)
      throw new Error('the rows were counted, but the earlier batches never came');
    const digest = this.digest.finish(tag);
    return {
      summary: this.summary,
      ...digest,
      historyOwn: [],
      historyOther: [],
      invalidSamples: this.invalidSamples,
      totalsMismatches: this.totalsMismatches,
      repeats: [],
      duplicates: [],
      warnings: this.warnings,
      // Listed payees are kept all only for the JSON summary, as warned references are.
      since: await sinceOf(this.comparisons, digest.digest, this.keepReferences ? undefined : LISTED_SHOWN),
    };
  }
}

/** What a currency's code looks like (ISO 4217: three letters; the sheet's are upper-cased). */
const CURRENCY_CODE = /^[A-Z]{3}$/;

/**
 * Counts a row and adds its amount to the sheet's (and, if valid, the valid) totals; `messages`
 * are the row's own when it is not ok (invalid, failed, unknown), grouped for the report.
 */
export function tally(
  summary: BatchSummary,
  row: PreparedRow,
  status: RowStatus,
  messages?: readonly string[],
): void {
  if (row.raw.strayQuote) summary.strayQuoteRow ??= row.raw.rowNumber;
  if (row.totals !== undefined) {
    summary.totalsRows.push(row.totals.message);
    return;
  }
  summary.count(status);
  const rail = row.payout.rail ?? '';
  summary.byRail.set(rail, (summary.byRail.get(rail) ?? 0) + 1);
  if (messages !== undefined && NOT_OK_STATUSES.has(status))
    summary.errorGroups.add(row.raw.rowNumber, messages);
  const { amount } = row.payout;
  // Totalled under a currency's code only: a row whose cells shifted (a stray comma) may hold
  // an amount where its currency should be, and "000.00" is no currency to show a total for.
  const currency =
    row.payout.currency !== undefined && CURRENCY_CODE.test(row.payout.currency)
      ? row.payout.currency
      : undefined;
  if (amount?.grouped) summary.groupedAmounts += 1;
  if (!amount || !currency) summary.untotalledRows += 1;
  if (amount && currency) {
    BatchSummary.add(summary.sheetTotals, currency, amount.minor);
    BatchSummary.add(summary.totalsOf(status), currency, amount.minor);
    // A dry run's `valid` rows are what `run` would send now (not paid, not held).
    if (status === 'valid') {
      BatchSummary.add(summary.sendTotals, currency, amount.minor);
      if (row.payout.rail !== undefined) summary.sendRails.add(row.payout.rail);
    }
    if (status !== 'invalid') BatchSummary.add(summary.validTotals, currency, amount.minor);
    // The largest payments an approver is shown are those sent or to be sent, not rows paid
    // already or held.
    if (TO_BE_SENT.has(status)) {
      summary.noteLargest(currency, amount.minor, row.raw.rowNumber, row.payout.reference);
      summary.noteLargePayment(currency, {
        minor: amount.minor,
        rowNumber: row.raw.rowNumber,
        reference: row.payout.reference,
      });
    }
  }
}

/** Statuses of rows sent, or (a dry run) to be sent. */
const TO_BE_SENT: ReadonlySet<RowStatus> = new Set(['valid', 'submitted', 'completed', 'failed', 'unknown']);

function sampleOf(row: PreparedRow): RowSample {
  return {
    rowNumber: row.raw.rowNumber,
    reference: row.payout.reference,
    messages: row.issues.map((i) => i.message),
  };
}
