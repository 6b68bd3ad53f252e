import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { PayoutsError } from '../errors.js';
import type { ResultRecord, ResultsWriter } from '../sheet/results.js';
import type { OpenedSheet, RawRow, SheetFormat } from '../sheet/types.js';
import { type ControlTotals, checkControlTotals } from './guards.js';
import { outOfStep, type VerdictBatch, VerdictSource, verdictAt, WINDOW } from './parallel.js';
import {
  openResultsFor,
  type PreparedSheet,
  prepareSheet,
  rawBatches,
  type SheetOptions,
} from './prepare.js';
import type { BatchSummary } from './summary.js';
import { totalsRowGuard } from './totals-row.js';
import { type RowSample, type RowVerdict, type SheetFindings, ValidationTally } from './verdicts.js';

export { type RowSample, tally } from './verdicts.js';

export interface ValidateOptions extends SheetOptions {
  /** Results file; default `<sheet dir>/<sheet name>.results.<ext>` (PRODUCT.md `--out`). */
  outPath?: string;
  controls?: ControlTotals;
  /** Called as rows go by, for a progress indicator. */
  onProgress?: (rowsDone: number) => void;
  /** How many invalid rows to keep for the human summary. */
  sampleSize?: number;
  /**
   * Map and check the rows on a worker thread while this one reads and writes (parallel.ts).
   * Default: for CSV sheets of 8 MB or more, on a machine with two cores or more.
   */
  worker?: boolean;
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
  const writer = await openResultsFor(prepared, options);
  const resultsPath = writer.path;
  const sampleSize = options.sampleSize ?? 20;
  let findings: SheetFindings;
  try {
    findings = (await useWorker(options, prepared.sheet))
      ? await checkOnWorker(options, prepared, writer, sampleSize)
      : await checkHere(options, prepared, writer, sampleSize);
    await writer.commit();
  } catch (error) {
    await writer.abort();
    await prepared.sheet.close?.();
    throw error;
  }
  const { summary } = findings;
  const report: ValidateReport = {
    sheetPath: options.sheetPath,
    format: prepared.sheet.format,
    summary,
    digest: findings.digest,
    resultsPath,
    unknownColumns: prepared.header.unknown,
    invalidSamples: findings.invalidSamples,
  };
  // A totals row that does not match is reported like a failed --expect-total (issue 8).
  report.guardError = totalsRowGuard(findings.totalsMismatches);
  if (options.controls && report.guardError === undefined) {
    try {
      checkControlTotals(summary, options.controls);
    } catch (error) {
      report.guardError = error as PayoutsError;
    }
  }
  return report;
}

/** Maps, checks and writes the rows on this thread. */
async function checkHere(
  options: ValidateOptions,
  prepared: PreparedSheet,
  writer: ResultsWriter,
  sampleSize: number,
): Promise<SheetFindings> {
  const tally = new ValidationTally(prepared.header.index, sampleSize);
  for await (const batch of prepared.batches) {
    // write() returns a promise only when the output asks us to wait (backpressure); a batch
    // is small, so the wait comes after it.
    let pending: Promise<void> | undefined;
    for (const row of batch) pending = writer.write(resultOf(row.raw, tally.add(row))) ?? pending;
    if (pending) await pending;
    options.onProgress?.(tally.summary.rows);
  }
  return tally.finish();
}

/**
 * Reads and writes the rows on this thread while a worker maps and checks them (parallel.ts):
 * each row read here is paired with the worker's verdict on the same row number.
 */
async function checkOnWorker(
  options: ValidateOptions,
  prepared: PreparedSheet,
  writer: ResultsWriter,
  sampleSize: number,
): Promise<SheetFindings> {
  const { sheetPath, sheetName, delimiter, encoding, columnsFile } = options;
  const source = new VerdictSource(WORKER_URL, {
    sheet: { sheetPath, sheetName, delimiter, encoding, columnsFile },
    sampleSize,
    window: WINDOW,
  });
  try {
    let verdicts: VerdictBatch = { rowNumbers: new Uint32Array(0), verdicts: [] };
    let at = 0;
    let rows = 0;
    for await (const batch of rawBatches(prepared.sheet)) {
      let pending: Promise<void> | undefined;
      for (const raw of batch) {
        if (at === verdicts.verdicts.length) {
          verdicts = await source.nextBatch();
          at = 0;
        }
        if (verdicts.rowNumbers[at] !== raw.rowNumber) {
          throw outOfStep(sheetPath, `row ${raw.rowNumber} was paired with row ${verdicts.rowNumbers[at]}`);
        }
        pending = writer.write(resultOf(raw, verdictAt(verdicts, at++))) ?? pending;
      }
      if (pending) await pending;
      rows += batch.length;
      options.onProgress?.(rows);
    }
    if (at !== verdicts.verdicts.length) throw outOfStep(sheetPath, 'more rows were checked than read');
    return await source.finish();
  } finally {
    await source.close();
  }
}

/** The worker thread's script, beside this module once built. */
const WORKER_URL = new URL('./validate-worker.js', import.meta.url);

/** Below this size the rows take less time than starting a worker. */
const WORKER_MIN_BYTES = 8 * 1024 * 1024;

/** Whether to check rows on a worker thread: `options.worker`, else large CSV sheets on 2+ cores. */
async function useWorker(options: ValidateOptions, sheet: OpenedSheet): Promise<boolean> {
  if (options.worker !== undefined) return options.worker;
  if (sheet.format !== 'csv' || sheet.batches === undefined || availableParallelism() < 2) return false;
  // Run from the TypeScript sources (tests), there is no built worker script.
  if (!existsSync(fileURLToPath(WORKER_URL))) return false;
  try {
    return (await stat(options.sheetPath)).size >= WORKER_MIN_BYTES;
  } catch {
    return false;
  }
}

function resultOf(raw: RawRow, verdict: RowVerdict): ResultRecord {
  return {
    cells: raw.cells,
    rowNumber: raw.rowNumber,
    status: verdict.status,
    errors: verdict.errors,
    errorColumns: verdict.errorColumns,
    beneficiaryId: verdict.beneficiaryId,
    recipientId: verdict.recipientId,
  };
}
