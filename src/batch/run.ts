/**
 * `payouts run`: validate the whole sheet, check the batch guards, then pay its valid rows
 * with bounded concurrency under a rate limit, journaling every step, and write the results
 * file rebuilt from what the checkpoint knows. PRODUCT.md "Never pay twice" and issue 4.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { createClient, type PayoutsClient } from '../api/client.js';
import type { Credentials } from '../api/token.js';
import { fingerprintSheet } from '../checkpoint/fingerprint.js';
import { type Journal, openJournal } from '../checkpoint/journal.js';
import { acquireLock } from '../checkpoint/lock.js';
import { GuardError } from '../errors.js';
import type { SheetFormat } from '../sheet/types.js';
import { BatchDigest } from './digest.js';
import { type ControlTotals, checkControlTotals } from './guards.js';
import { checkpointPathFor } from './paths.js';
import { openResultsFor, type PreparedRow, prepareSheet, type SheetOptions } from './prepare.js';
import { type RowResult, RowSteps } from './row-steps.js';
import { BatchSummary } from './summary.js';
import { totalsRowGuard } from './totals-row.js';
import { type RowSample, tally } from './validate.js';
import { applyWebhookOutcomes, awaitOutcomes } from './wait.js';

/** Where the service is and who we are to it (PRODUCT.md `--base-url`, `--auth-url`, env). */
export interface Connection {
  baseUrl: string;
  authUrl: string;
  credentials: Partial<Credentials>;
}

export interface RunOptions extends SheetOptions {
  connection: Connection;
  outPath?: string;
  checkpointPath?: string;
  controls?: ControlTotals;
  /** `--approve DIGEST`: refuse unless the batch digest matches. */
  approve?: string;
  /** `--retry-unknown`: re-send rows whose outcome is unknown, with the same key. */
  retryUnknown?: boolean;
  concurrency: number;
  /** Requests per second, all endpoints together; unlimited when omitted. */
  rate?: number;
  /** After sending, check transaction statuses for up to this many seconds (0: don't). */
  waitSeconds?: number;
  /** Webhook events recorded by `payouts webhooks listen --events FILE`: confirm outcomes. */
  eventsFile?: string;
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: stop taking rows, finish those under way, write results. */
  signal?: AbortSignal;
  /** Progress as rows finish: done of total valid rows. */
  onProgress?: (done: number, total: number) => void;
  /** Replaces the client (tests); by default one is built from `connection`. */
  client?: PayoutsClient;
}

export interface RunReport {
  sheetPath: string;
  format: SheetFormat;
  summary: BatchSummary;
  digest: string;
  batchId: string;
  resultsPath: string;
  checkpointPath: string;
  unknownColumns: string[];
  samples: RowSample[];
  interrupted: boolean;
}

/**
 * Runs the batch. Throws before sending anything for an unreadable sheet (exit 2), a batch
 * guard (exit 4: control totals, approval, foreign checkpoint, lock) or refused credentials
 * (exit 3). Row failures are in the report and the results file.
 */
export async function runBatch(options: RunOptions): Promise<RunReport> {
  const { logger } = options;
  const signal = options.signal ?? new AbortController().signal;
  const fingerprint = await fingerprintSheet(options.sheetPath);
  const lock = await acquireLock(options.sheetPath);
  let journal: Journal | undefined;
  let client: PayoutsClient | undefined;
  try {
    // Pass 1: the dry run of the whole sheet, so the guards see every row before any is sent.
    const checked = await checkSheet(options);
    if (options.controls) checkControlTotals(checked.summary, options.controls);
    if (options.approve !== undefined && options.approve.trim().toLowerCase() !== checked.digest) {
      throw new GuardError(
        `--approve ${options.approve.trim()} does not match this sheet's batch digest ${checked.digest}: the sheet changed since it was approved (or another sheet was approved); validate it again and approve the new digest. Nothing was sent.`,
      );
    }

    const checkpointPath = options.checkpointPath ?? checkpointPathFor(options.sheetPath);
    journal = await openJournal(checkpointPath, fingerprint);
    const resumed = journal.replay();
    if (!journal.created)
      logger.info({ checkpoint: checkpointPath, rows: resumed.rows.size }, 'resuming from the checkpoint');

    client =
      options.client ??
      createClient({
        ...options.connection,
        rate: options.rate,
        concurrency: options.concurrency,
        logger,
      });
    // Credentials first: refused ones end the run (exit 3) before any row is touched.
    await client.tokens.getToken();

    const steps = new RowSteps({
      client,
      journal,
      resumed,
      batchId: fingerprint.batchId,
      keySalt: fingerprint.keySalt,
      retryUnknown: options.retryUnknown ?? false,
      signal,
    });
    // Pass 2: send, at most `concurrency` rows in flight, fed from the sheet stream.
    const { results, fatal } = await sendRows(options, steps, checked.validRows, signal);
    if (fatal) {
      // The run cannot go on; the rows that were sent are written down before it ends.
      await journal.flush();
      await writeResults(options, results, { stoppedBy: fatal, journal });
      throw fatal;
    }
    if (options.eventsFile) {
      const confirmed = await applyWebhookOutcomes(options.eventsFile, journal, results);
      logger.info({ events: options.eventsFile, confirmed }, 'webhook outcomes applied');
    }
    if (options.waitSeconds && !signal.aborted) {
      await awaitOutcomes(client, journal, results, { seconds: options.waitSeconds, logger, signal });
    }
    await journal.flush();

    // Pass 3: the results file, in sheet order, from the row outcomes.
    const written = await writeResults(options, results, { interrupted: signal.aborted, journal });
    return {
      sheetPath: options.sheetPath,
      format: written.format,
      summary: written.summary,
      digest: checked.digest,
      batchId: fingerprint.batchId,
      resultsPath: written.resultsPath,
      checkpointPath,
      unknownColumns: written.unknownColumns,
      samples: written.samples,
      interrupted: signal.aborted,
    };
  } finally {
    await journal?.close();
    if (!options.client) await client?.close();
    await lock.release();
  }
}

/** A row's result with its sheet row number, for the checkpoint records written after sending. */
type SentRow = RowResult & { rowNumber: number };

interface CheckedSheet {
  summary: BatchSummary;
  digest: string;
  validRows: number;
}

async function checkSheet(options: RunOptions): Promise<CheckedSheet> {
  const prepared = await prepareSheet(options);
  const summary = new BatchSummary();
  const digest = new BatchDigest(prepared.header.index);
  for await (const row of prepared.rows) {
    if (row.totals !== undefined) {
      tally(summary, row, 'skipped');
      continue;
    }
    const valid = row.issues.length === 0;
    tally(summary, row, valid ? 'valid' : 'invalid');
    if (valid) digest.add(row);
  }
  // A totals row that does not match the rows above it refuses the batch (issue 8, exit 4).
  const mismatch = totalsRowGuard(prepared.totalsMismatches());
  if (mismatch !== undefined) throw mismatch;
  return { summary, digest: digest.finish(), validRows: summary.byStatus.valid };
}

/**
 * The send pass. A row's own failure is its result; an error that ends the run (refused
 * credentials mid-run, a checkpoint that cannot be written) stops the feeding, lets the rows
 * under way settle, and comes back as `fatal` so the results are still written.
 */
async function sendRows(
  options: RunOptions,
  steps: RowSteps,
  total: number,
  signal: AbortSignal,
): Promise<{ results: Map<string, SentRow>; fatal?: unknown }> {
  const prepared = await prepareSheet(options);
  const results = new Map<string, SentRow>();
  const limit = pLimit(options.concurrency);
  const inFlight = new Set<Promise<void>>();
  let fatal: { error: unknown } | undefined;
  let done = 0;
  for await (const row of prepared.rows) {
    if (signal.aborted || fatal) break;
    if (row.issues.length > 0 || row.totals !== undefined) continue;
    const task = limit(async () => {
      if (fatal) return;
      try {
        const result = await steps.process(row.payout, row.raw.rowNumber);
        results.set(row.payout.reference, { ...result, rowNumber: row.raw.rowNumber });
        logRow(options.logger, row, result);
        done += 1;
        options.onProgress?.(done, total);
      } catch (error) {
        fatal ??= { error };
      }
    });
    const tracked: Promise<void> = task.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    // Backpressure (STYLE.md): read the next row only when a slot is free.
    if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return fatal ? { results, fatal: fatal.error } : { results };
}

function logRow(logger: Logger, row: PreparedRow, result: RowResult): void {
  const fields = { row: row.raw.rowNumber, reference: row.payout.reference, status: result.status };
  if (result.status === 'failed' || result.status === 'unknown')
    logger.warn({ ...fields, errors: result.errors }, 'row not paid');
  else logger.debug({ ...fields, transactionId: result.transactionId }, 'row done');
}

const interruptedResult: RowResult = {
  status: 'skipped',
  errors: ['not sent: the run was interrupted before this row was paid; run again to send it'],
};

interface StopReason {
  /** SIGINT/SIGTERM: rows not reached were not sent. */
  interrupted?: boolean;
  /** An error that ended the run early. */
  stoppedBy?: unknown;
  journal: Journal;
}

/** The result of a valid row the send pass did not finish, from what the checkpoint knows. */
function unfinishedResult(reference: string, stop: StopReason): RowResult {
  if (stop.stoppedBy !== undefined) {
    const why = stop.stoppedBy instanceof Error ? stop.stoppedBy.message : String(stop.stoppedBy);
    const sending = stop.journal.replay().rows.get(reference);
    if (sending?.intent && !sending.outcome) {
      return {
        status: 'unknown',
        simulationId: sending.intent.simulationId,
        errors: [
          `the run stopped (${why}) while this row's transaction was being sent; run again with --retry-unknown to settle it with the same Idempotency-Key`,
        ],
      };
    }
    return {
      status: 'skipped',
      errors: [`not sent: the run stopped (${why}) before this row was paid; run again to send it`],
    };
  }
  return stop.interrupted ? interruptedResult : missingResult;
}

async function writeResults(options: RunOptions, results: Map<string, SentRow>, stop: StopReason) {
  const prepared = await prepareSheet(options);
  const writer = await openResultsFor(prepared, options);
  const resultsPath = writer.path;
  const summary = new BatchSummary();
  const samples: RowSample[] = [];
  try {
    for await (const row of prepared.rows) {
      const result: RowResult =
        row.totals !== undefined
          ? { status: 'skipped', errors: [row.totals.message] }
          : row.issues.length > 0
            ? { status: 'invalid', errors: row.issues.map((i) => i.message) }
            : (results.get(row.payout.reference) ?? unfinishedResult(row.payout.reference, stop));
      tally(summary, row, result.status);
      if (
        (result.status === 'invalid' || result.status === 'failed' || result.status === 'unknown') &&
        samples.length < 20
      ) {
        samples.push({
          rowNumber: row.raw.rowNumber,
          reference: row.payout.reference,
          messages: result.errors,
        });
      }
      await writer.write({
        cells: row.raw.cells,
        rowNumber: row.raw.rowNumber,
        status: result.status,
        errors: result.errors,
        errorColumns: result.status === 'invalid' ? row.errorColumns : [],
        beneficiaryId: result.beneficiaryId,
        recipientId: result.recipientId,
        simulationId: result.simulationId,
        transactionId: result.transactionId,
      });
    }
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return {
    format: prepared.sheet.format,
    resultsPath,
    summary,
    samples,
    unknownColumns: prepared.header.unknown,
  };
}

// A valid row the send pass never reached without an interruption cannot happen; if the sheet
// changed under the run it would, and the row must not look paid.
const missingResult: RowResult = {
  status: 'unknown',
  errors: ['this row was not found in the send pass (did the sheet change during the run?); run again'],
};
