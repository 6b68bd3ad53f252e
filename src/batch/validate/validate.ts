import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../clock.js';
import type { PayoutsError } from '../../errors.js';
import { chooseScope, declaredService, type ScopeHint } from '../../register/choose.js';
import {
  missingRegister,
  type RegisterSource,
  shownLocation,
  sourceInWords,
} from '../../register/location.js';
import { openExistingRegister } from '../../register/open.js';
import type { Register, ScopeInfo, ScopeStore } from '../../register/types.js';
import type { ResultRecord, ResultsWriter } from '../../sheet/results.js';
import type { OpenedSheet, RawRow, SheetFormat } from '../../sheet/types.js';
import { CellDigestRows } from '../digest.js';
import { type ControlTotals, checkControlTotals } from '../guards.js';
import {
  expectedRowsOf,
  type KnownRepeats,
  openResultsFor,
  type PreparedSheet,
  prepareSheet,
  rawBatches,
  type SheetOptions,
  sheetNumbers,
} from '../prepare.js';
import { RegisterCheck } from '../register-check.js';
import { compareChoiceOf, comparedBatches, type SincePrevious, sinceCandidates } from '../since-previous.js';
import type { BatchSummary } from '../summary.js';
import { totalsRowGuard } from '../totals-row.js';
import { type RowSample, type RowVerdict, type SheetFindings, ValidationTally } from '../verdicts.js';
import { judgedRight, NO_WARNINGS, PayeeWarnings, type WarningTally } from '../warnings.js';
import { CheckingWorker, IN_FLIGHT, WORKER_OLD_GENERATION_MB, workerOutOfMemory } from './parallel.js';
import { digestedAt, NO_VERDICTS, packRows, type RowBatch, unpackRows, verdictAt } from './worker-codec.js';

export interface ValidateOptions extends SheetOptions {
  /** Results file; default `<sheet dir>/<sheet name>.results.<ext>` (README, `--out`). */
  outPath?: string;
  /** `--compare-with SHEET|DIGEST`: the earlier batch `sincePrevious` compares with. */
  compareWith?: string;
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
  /** The worker's old generation limit in MB (parallel.ts WORKER_OLD_GENERATION_MB by default). */
  workerOldGenerationMb?: number;
  /** Called when the worker reached that limit, before the rows are checked again on this thread. */
  onWorkerOutOfMemory?: (limitMb: number) => void;
  /**
   * The register to read (docs/register.md "The rules": `validate` reads it too, read-only and
   * offline), and which of its scopes: a missing register is no error, the rows are then checked
   * as sheets.
   */
  register?: { location: string; from?: RegisterSource } & ScopeHint;
  /** The moment the approver's warnings count earlier payouts back from (ms); now by default. */
  asOf?: number;
  /** Keep every warned reference (`--json` lists them all); else counts and the first rows. */
  warnedReferences?: boolean;
  /** `--hold-changed-payees`: show rows whose payee's bank details changed as `run` would hold them. */
  holdChangedPayees?: boolean;
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
  register?: string;
  /**
   * The service whose scope was read for the hint's: another one when the operator declared the
   * hint's the same service as it (`run --same-service-as`). Absent without a service hint.
   */
  service?: string;
  registerNote?: string;
  /** The approver's warnings (warnings.ts). */
  warnings: WarningTally;
  /** What changed since the previous batch this register paid; null without one. */
  sincePrevious: SincePrevious | null;
}

/**
 * The dry run (README "Commands", `validate`): read, map and pre-validate every row, no network,
 * and write the results file atomically. Throws SheetError/UsageError (exit 2) before writing
 * anything when the sheet cannot be read; never leaves a partial results file.
 */
export async function validateSheet(options: ValidateOptions): Promise<ValidateReport> {
  const registered = await openRegisterScope(options.register);
  let prepared: PreparedSheet;
  let findings: SheetFindings;
  let resultsPath: string;
  try {
    const store = registered.scope ? await registered.register!.scopeStore(registered.scope) : undefined;
    const asOf = options.asOf ?? systemClock.now();
    prepared = await prepareSheet(options);
    const first = prepared;
    const here = (again: PreparedSheet) =>
      checkAndWrite(options, again, (writer, sampleSize) =>
        checkHere(options, again, writer, sampleSize, asOf, store),
      );
    if (await useWorker(options, first.sheet)) {
      try {
        ({ findings, resultsPath } = await checkAndWrite(options, first, (writer, sampleSize) =>
          checkOnWorker(options, first, writer, sampleSize, asOf, registered.scope, store),
        ));
      } catch (error) {
        // A sheet the worker cannot hold within its limit is checked here, from the start: the
        // results written so far were thrown away with the failed reading.
        if (!workerOutOfMemory(error)) throw error;
        options.onWorkerOutOfMemory?.(options.workerOldGenerationMb ?? WORKER_OLD_GENERATION_MB);
        prepared = await prepareSheet(options);
        ({ findings, resultsPath } = await here(prepared));
      }
    } else {
      ({ findings, resultsPath } = await here(first));
    }
    // Every row sharing a reference is invalid, the first too, and none is in the digest; every
    // row of a repeated payment is a possible duplicate, the first too. The first was checked
    // before its repeat was met, so the sheet is read once more knowing them. A sheet a run
    // already paid in part finds its own payouts in the payee history: its rows are compared
    // with the history as it stood before (as run does), which needs the sheet's tag, known at
    // the end of a reading. A first reading guesses it (warnings.ts); a wrong guess is read
    // again knowing it, as are the repeats. A later reading knows the tag: at most one more.
    let known: KnownRepeats | undefined;
    let batch: string | undefined;
    for (;;) {
      const needKnown =
        known === undefined && (findings.repeats.length > 0 || findings.duplicates.length > 0);
      const right =
        batch !== undefined || judgedRight(findings.historyOwn, findings.historyOther, findings.tag);
      if (!needKnown && right) break;
      if (needKnown)
        known = { references: new Map(findings.repeats), payments: new Map(findings.duplicates) };
      batch = findings.tag;
      prepared = await prepareSheet(options, known);
      const again = prepared;
      const reading = batch;
      ({ findings, resultsPath } = await checkAndWrite(options, again, (writer, sampleSize) =>
        checkHere(options, again, writer, sampleSize, asOf, store, reading),
      ));
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
    warnings: findings.warnings,
    sincePrevious: findings.since,
    ...((registered.scope || registered.empty) && options.register
      ? { register: shownLocation(options.register.location) }
      : {}),
    ...(registered.note ? { registerNote: registered.note } : {}),
    ...(registered.service === undefined ? {} : { service: registered.service }),
  };
  // A totals row that does not match is reported like a failed --expect-total.
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

/** Checks the rows into a results file, committed once every row is written; aborted on error. */
async function checkAndWrite(
  options: ValidateOptions,
  prepared: PreparedSheet,
  check: (writer: ResultsWriter, sampleSize: number) => Promise<SheetFindings>,
): Promise<{ findings: SheetFindings; resultsPath: string }> {
  let writer: ResultsWriter;
  try {
    writer = await openResultsFor(prepared, options);
  } catch (error) {
    await prepared.sheet.close?.();
    throw error;
  }
  try {
    const findings = await check(writer, options.sampleSize ?? 20);
    await writer.commit();
    return { findings, resultsPath: writer.path };
  } catch (error) {
    await writer.abort();
    await prepared.sheet.close?.();
    throw error;
  }
}

/**
 * The register of `options.register`, read-only, and the scope to check against; none when no
 * scope fits, or when there is no register at the default location (then `note` says why). A
 * register named by --register or PAYOUTS_REGISTER that does not exist is an error (exit 2):
 * a dry run against a mistyped one would show paid rows as all to be sent.
 */
async function openRegisterScope(
  options: ValidateOptions['register'],
): Promise<{ register?: Register; scope?: ScopeInfo; empty?: true; note?: string; service?: string }> {
  if (!options) return {};
  const register = await openExistingRegister(options.location);
  if (register === undefined) {
    if (options.from !== undefined && options.from !== 'default')
      throw missingRegister(options.location, options.from);
    return {
      ...(options.service === undefined ? {} : { service: options.service }),
      note: `there is no register at ${shownLocation(options.location)} (${sourceInWords('default')}), so rows paid before would show as valid: pass --register (or set PAYOUTS_REGISTER) to check against yours`,
    };
  }
  try {
    // The scope run would pay from under this URL: the declared one, with its history.
    const service =
      options.service === undefined
        ? undefined
        : await declaredService(register, options.service, options.login);
    const scopes = await register.scopes();
    const named = service === undefined ? {} : { service };
    // A register that has paid nothing yet is checked all the same: nothing in it was paid.
    if (scopes.length === 0) return { register, empty: true, ...named };
    const chosen = chooseScope(scopes, { ...options, ...(service ? { service } : {}) });
    return chosen.scope
      ? { register, scope: chosen.scope, ...named }
      : { register, note: chosen.why, ...named };
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
  asOf: number,
  store?: ScopeStore,
  batch?: string,
): Promise<SheetFindings> {
  const tally = new ValidationTally(
    prepared.header.index,
    sampleSize,
    options.warnedReferences,
    options.holdChangedPayees,
  );
  const check = store ? new RegisterCheck(store) : undefined;
  const warnings = new PayeeWarnings(store, asOf, batch);
  tally.compareWith(await sinceCandidates(store, { choice: compareChoiceOf(options) }));
  for await (const batch of prepared.batches) {
    // A held row's warnings as it was sent with them, where the register kept them.
    const { earlier, stored } = (await check?.heldRows(batch)) ?? {};
    await warnings.load(batch, earlier, stored);
    // write() returns a promise only when the output asks us to wait (backpressure); a batch
    // is small, so the wait comes after it.
    let pending: Promise<void> | undefined;
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i]!;
      const payee = tally.wantsPayee(row, earlier?.[i]) ? warnings.payeeHash(row) : undefined;
      pending =
        writer.write(
          resultOf(
            row.raw,
            tally.add(
              row,
              earlier?.[i],
              earlier?.[i]?.status === 'invalid' ? NO_WARNINGS : warnings.of(row, stored?.[i]),
              payee,
            ),
          ),
        ) ?? pending;
    }
    if (pending) await pending;
    options.onProgress?.(tally.summary.rows);
  }
  return {
    ...(await tally.finish()),
    repeats: [...prepared.repeats()].map(([reference, rows]) => [reference, [...rows]]),
    duplicates: [...prepared.duplicates()].map(([payment, rows]) => [payment, [...rows]]),
    historyOwn: [...warnings.judgedOwn],
    historyOther: [...warnings.judgedOther],
  };
}

/**
 * Reads the rows and writes the results on this thread while a worker maps and checks them
 * (parallel.ts). Without a register the worker reads the sheet too; with one, each batch of
 * the reader is sent to it as it is read, and the worker reads the register on its own but
 * for the earlier batches the sheet is compared with: this thread reads them, a page between
 * two batches of rows, while the worker judges the first rows (the worker has the more work).
 */
async function checkOnWorker(
  options: ValidateOptions,
  prepared: PreparedSheet,
  writer: ResultsWriter,
  sampleSize: number,
  asOf: number,
  scope?: ScopeInfo,
  store?: ScopeStore,
): Promise<SheetFindings> {
  const register = scope && options.register ? { location: options.register.location, scope } : undefined;
  const batches = register && store ? await comparedBatches(store, compareChoiceOf(options)) : [];
  const worker = await startWorker(options, prepared, {
    sampleSize,
    asOf,
    register,
    comparisons: batches.length > 0,
  });
  let verdicts = NO_VERDICTS;
  let at = 0;
  let written = 0;
  // The valid rows hashed here as they are written: the worker is the busier thread.
  const digestRows = new CellDigestRows(prepared.header.index, sheetNumbers(prepared.sheet));
  /** Writes rows, each with its verdict; the promise to wait on when the output is behind. */
  const write = async (rows: Iterable<RawRow>): Promise<void> => {
    let pending: Promise<void> | undefined;
    for (const raw of rows) {
      if (at === verdicts.rowNumbers.length) {
        verdicts = await worker.nextBatch();
        at = 0;
      }
      if (verdicts.rowNumbers[at] !== raw.rowNumber) {
        throw worker.outOfStep(`row ${raw.rowNumber} was paired with row ${verdicts.rowNumbers[at]}`);
      }
      if (digestedAt(verdicts, at)) digestRows.add(raw);
      // write() returns a promise only when the output asks us to wait (backpressure).
      pending = writer.write(resultOf(raw, verdictAt(verdicts, at++))) ?? pending;
      written += 1;
    }
    if (pending) await pending;
    options.onProgress?.(written);
  };
  try {
    if (register) await sendBatches(prepared, worker, write, store, batches);
    else for await (const rows of rawBatches(prepared.sheet)) await write(rows);
    if (at !== verdicts.rowNumbers.length) throw worker.outOfStep('more rows were checked than read');
    return await worker.finish(digestRows.finish());
  } finally {
    await worker.close();
  }
}

/** The worker that maps, checks and judges the rows: given the sheet, or sent its rows. */
async function startWorker(
  options: ValidateOptions,
  prepared: PreparedSheet,
  how: {
    sampleSize: number;
    asOf: number;
    register: { location: string; scope: ScopeInfo } | undefined;
    comparisons: boolean;
  },
): Promise<CheckingWorker> {
  const { sheetPath, sheetName, delimiter, encoding, columnsFile } = options;
  const { register } = how;
  return new CheckingWorker(WORKER_URL, {
    ...(register ? { register } : { sheet: { sheetPath, sheetName, delimiter, encoding, columnsFile } }),
    comparisonsSent: how.comparisons,
    sheetPath,
    index: prepared.header.index,
    numbers: sheetNumbers(prepared.sheet),
    sampleSize: how.sampleSize,
    asOf: how.asOf,
    expectedRows: await expectedRowsOf(prepared.sheet),
    warnedReferences: options.warnedReferences ?? true,
    holdChangedPayees: options.holdChangedPayees ?? false,
    ...(options.workerOldGenerationMb === undefined
      ? {}
      : { oldGenerationMb: options.workerOldGenerationMb }),
  });
}

/**
 * The rows read here and sent to the worker a batch at a time, each written once its verdicts
 * came back, with the earlier batches the sheet is compared with read between the rows (a
 * failure there is thrown at the next batch).
 */
async function sendBatches(
  prepared: PreparedSheet,
  worker: CheckingWorker,
  write: (rows: Iterable<RawRow>) => Promise<void>,
  store: ScopeStore | undefined,
  batches: Awaited<ReturnType<typeof comparedBatches>>,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  const compared =
    batches.length === 0
      ? undefined
      : sinceCandidates(store, { batches, pause: nextTurn }).then(
          (comparisons) => worker.sendComparisons(comparisons),
          (error: unknown) => {
            failure = { error };
          },
        );
  // Batches sent and not yet written, oldest first, kept as they were sent: a text and
  // numbers, which the garbage collector moves and scans for nothing, unlike cells.
  const sent: RowBatch[] = [];
  for await (const rows of rawBatches(prepared.sheet)) {
    if (failure) throw failure.error;
    const batch = packRows(rows);
    // Done with once packed. Kept through the write of the batch before, they were alive
    // at each collection of the young generation that the write made, and V8, finding all
    // of them alive, then made every later row in the old generation (pretenuring): a full
    // collection every 0.5 s instead of every 2 s, and 40 to 50 MB more at the peak.
    rows.length = 0;
    worker.send(batch);
    sent.push(batch);
    if (sent.length > IN_FLIGHT) await write(unpackRows(sent.shift()!));
  }
  await compared;
  if (failure) throw failure.error;
  worker.end();
  for (const batch of sent) await write(unpackRows(batch));
}

/** Until the event loop's next turn: what waits on this thread (the worker's verdicts) runs first. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
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
    warnings: verdict.warnings,
    beneficiaryId: verdict.beneficiaryId,
    recipientId: verdict.recipientId,
    simulationId: verdict.simulationId,
    transactionId: verdict.transactionId,
  };
}
