import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { PayoutsError } from '../errors.js';
import { chooseScope, type ScopeHint } from '../register/choose.js';
import { openRegister } from '../register/sqlite.js';
import type { Register, ScopeInfo, ScopeStore } from '../register/types.js';
import type { ResultRecord, ResultsWriter } from '../sheet/results.js';
import type { OpenedSheet, RawRow, SheetFormat } from '../sheet/types.js';
import { type ControlTotals, checkControlTotals } from './guards.js';
import { NO_VERDICTS, outOfStep, VerdictSource, verdictAt, WINDOW } from './parallel.js';
import {
  openResultsFor,
  type PreparedSheet,
  prepareSheet,
  rawBatches,
  type SheetOptions,
} from './prepare.js';
import { RegisterCheck } from './register-check.js';
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
  /**
   * The register to read (PRODUCT.md: `validate` reads it too, read-only and offline), and
   * which of its scopes: a missing register is no error, the rows are then checked as sheets.
   */
  register?: { path: string } & ScopeHint;
}

/** What validate learnt from the register, for the summary. */
export interface RegisterUse {
  path: string;
  /** The scope read ("service, integrator id"), or why none was. */
  scope?: string;
  note?: string;
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
  /** The register consulted, when there was one. */
  registerPath?: string;
  registerNote?: string;
}

/**
 * The dry run of PRODUCT.md: read, map and pre-validate every row, no network, and write the
 * results file atomically. Throws SheetError/UsageError (exit 2) before writing anything when
 * the sheet cannot be read; never leaves a partial results file.
 */
export async function validateSheet(options: ValidateOptions): Promise<ValidateReport> {
  const registered = await openRegisterScope(options.register);
  let prepared: PreparedSheet;
  try {
    prepared = await prepareSheet(options);
  } catch (error) {
    await registered.register?.close();
    throw error;
  }
  let findings: SheetFindings;
  let resultsPath: string;
  try {
    const writer = await openResultsFor(prepared, options);
    resultsPath = writer.path;
    const sampleSize = options.sampleSize ?? 20;
    try {
      const store = registered.scope ? await registered.register!.scopeStore(registered.scope) : undefined;
      findings = (await useWorker(options, prepared.sheet))
        ? await checkOnWorker(options, prepared, writer, sampleSize, registered.scope, store)
        : await checkHere(options, prepared, writer, sampleSize, store);
      await writer.commit();
    } catch (error) {
      await writer.abort();
      await prepared.sheet.close?.();
      throw error;
    }
  } finally {
    await registered.register?.close();
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
    ...(registered.scope && options.register ? { registerPath: options.register.path } : {}),
    ...(registered.note ? { registerNote: registered.note } : {}),
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

/**
 * The register of `options.register`, read-only, and the scope to check against; none when
 * the file does not exist yet (no run has happened) or no scope fits (then `note` says why).
 */
async function openRegisterScope(
  options: ValidateOptions['register'],
): Promise<{ register?: Register; scope?: ScopeInfo; note?: string }> {
  if (!options || !existsSync(options.path)) return {};
  const register = openRegister(options.path, { readonly: true });
  try {
    const chosen = chooseScope(await register.scopes(), options);
    return chosen.scope ? { register, scope: chosen.scope } : { register, note: chosen.why };
  } catch (error) {
    await register.close();
    throw error;
  }
}

/** Maps, checks and writes the rows on this thread. */
async function checkHere(
  options: ValidateOptions,
  prepared: PreparedSheet,
  writer: ResultsWriter,
  sampleSize: number,
  store?: ScopeStore,
): Promise<SheetFindings> {
  const tally = new ValidationTally(prepared.header.index, sampleSize);
  const check = store ? new RegisterCheck(store) : undefined;
  for await (const batch of prepared.batches) {
    const earlier = check ? await check.results(batch) : undefined;
    // write() returns a promise only when the output asks us to wait (backpressure); a batch
    // is small, so the wait comes after it.
    let pending: Promise<void> | undefined;
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i]!;
      pending = writer.write(resultOf(row.raw, tally.add(row, earlier?.[i]))) ?? pending;
    }
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
  scope?: ScopeInfo,
  store?: ScopeStore,
): Promise<SheetFindings> {
  const { sheetPath, sheetName, delimiter, encoding, columnsFile } = options;
  const source = new VerdictSource(
    WORKER_URL,
    {
      sheet: { sheetPath, sheetName, delimiter, encoding, columnsFile },
      sampleSize,
      window: WINDOW,
      ...(scope && options.register ? { register: { path: options.register.path, scope } } : {}),
    },
    store && ((references) => store.lookupText(references)),
  );
  try {
    let verdicts = NO_VERDICTS;
    let at = 0;
    let rows = 0;
    for await (const batch of rawBatches(prepared.sheet)) {
      let pending: Promise<void> | undefined;
      for (const raw of batch) {
        if (at === verdicts.rowNumbers.length) {
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
    if (at !== verdicts.rowNumbers.length) throw outOfStep(sheetPath, 'more rows were checked than read');
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
    simulationId: verdict.simulationId,
    transactionId: verdict.transactionId,
  };
}
