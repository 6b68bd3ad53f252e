import type { PayoutsError } from '../errors.js';
import { openResultsWriter } from '../sheet/results.js';
import type { SheetFormat } from '../sheet/types.js';
import { BatchDigest } from './digest.js';
import { type ControlTotals, checkControlTotals } from './guards.js';
import { resultsPathFor } from './paths.js';
import { type PreparedRow, prepareSheet, type SheetOptions } from './prepare.js';
import { BatchSummary, type RowStatus } from './summary.js';

export interface ValidateOptions extends SheetOptions {
  /** Results file; default `<sheet dir>/<sheet name>.results.<ext>` (PRODUCT.md `--out`). */
  outPath?: string;
  controls?: ControlTotals;
  /** Called as rows go by, for a progress indicator. */
  onProgress?: (rowsDone: number) => void;
  /** How many invalid rows to keep for the human summary. */
  sampleSize?: number;
}

/** One invalid row, for the summary a person reads. */
export interface RowSample {
  rowNumber: number;
  reference: string;
  messages: string[];
}

/** What `payouts validate` found: the data behind the human summary and `--json`. */
export interface ValidateReport {
  sheetPath: string;
  format: SheetFormat;
  summary: BatchSummary;
  digest: string;
  resultsPath: string;
  unknownColumns: string[];
  invalidSamples: RowSample[];
  /** Set when control totals did not match (exit 4); the results file is still written. */
  guardError?: PayoutsError;
}

/**
 * The dry run of PRODUCT.md: read, map and pre-validate every row, no network, and write the
 * results file atomically. Throws SheetError/UsageError (exit 2) before writing anything when
 * the sheet cannot be read; never leaves a partial results file.
 */
export async function validateSheet(options: ValidateOptions): Promise<ValidateReport> {
  const prepared = await prepareSheet(options);
  const resultsPath = options.outPath ?? resultsPathFor(options.sheetPath, prepared.sheet.format);
  const writer = await openResultsWriter({
    path: resultsPath,
    format: prepared.sheet.format,
    inputHeaders: prepared.sheet.headers,
    delimiter: prepared.sheet.dialect.delimiter,
  });
  const summary = new BatchSummary();
  const digest = new BatchDigest(prepared.header.index);
  const invalidSamples: RowSample[] = [];
  const sampleSize = options.sampleSize ?? 20;
  try {
    for await (const row of prepared.rows) {
      const status: RowStatus = row.issues.length === 0 ? 'valid' : 'invalid';
      tally(summary, row, status);
      if (status === 'valid') digest.add(row);
      else if (invalidSamples.length < sampleSize) invalidSamples.push(sampleOf(row));
      const pending = writer.write({
        cells: row.raw.cells,
        rowNumber: row.raw.rowNumber,
        status,
        errors: row.issues.map((i) => i.message),
        errorColumns: row.errorColumns,
        beneficiaryId: row.payout.beneficiary.kind === 'existing' ? row.payout.beneficiary.id : undefined,
        recipientId: row.payout.recipient.kind === 'existing' ? row.payout.recipient.id : undefined,
      });
      // write() returns a promise only when the output stream asks us to wait (backpressure).
      if (pending) await pending;
      options.onProgress?.(summary.rows);
    }
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  const report: ValidateReport = {
    sheetPath: options.sheetPath,
    format: prepared.sheet.format,
    summary,
    digest: digest.finish(),
    resultsPath,
    unknownColumns: prepared.header.unknown,
    invalidSamples,
  };
  if (options.controls) {
    try {
      checkControlTotals(summary, options.controls);
    } catch (error) {
      report.guardError = error as PayoutsError;
    }
  }
  return report;
}

/** Counts a row and adds its amount to the sheet's (and, if valid, the valid) totals. */
export function tally(summary: BatchSummary, row: PreparedRow, status: RowStatus): void {
  summary.count(status);
  const { amount, currency } = row.payout;
  if (amount && currency) {
    BatchSummary.add(summary.sheetTotals, currency, amount.minor);
    if (status !== 'invalid') BatchSummary.add(summary.validTotals, currency, amount.minor);
  }
}

function sampleOf(row: PreparedRow): RowSample {
  return {
    rowNumber: row.raw.rowNumber,
    reference: row.payout.reference,
    messages: row.issues.map((i) => i.message),
  };
}
