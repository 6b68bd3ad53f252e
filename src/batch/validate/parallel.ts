/**
 * `validate` on two threads: the main thread reads the sheet and writes the results file, a
 * worker thread maps, checks and counts the rows and sends their verdicts back in sheet order.
 * The main thread hashes the valid rows for the digest as it writes them (each verdict says
 * whether its row is in the digest) and gives the worker their hash at the end: the worker is
 * the busier thread, and hashing a million rows is a second of work. Two ways to share the reading, chosen by where the time goes:
 *
 * - Without a register the worker reads the same file with the same reader: checking a row
 *   costs about what writing it does, and reading twice costs less than handing every cell
 *   over. The worker runs at most WINDOW messages of verdicts ahead of the writer.
 * - With a register, judging a row against its record (the look-up, an HMAC of the payee, a
 *   message) doubles the worker's share, so the main thread sends its rows instead, as one
 *   text per batch (RowBatch): V8 copies one long string in a fraction of the time it takes to
 *   clone cells one by one, and cutting it up costs the worker a fifth of parsing the CSV. The
 *   main thread sends at most IN_FLIGHT batches beyond the rows it has written, and reads the
 *   earlier batches the sheet is compared with between two batches of rows, while the worker
 *   judges the first ones (WorkerInput.comparisonsSent).
 */
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { ColumnIndex } from '../../columns/columns.js';
import { SheetError } from '../../errors.js';
import type { ScopeInfo } from '../../register/types.js';
import type { SheetNumbers } from '../../rows/money.js';
import type { SheetOptions } from '../prepare.js';
import { type ComparisonMessage, type SincePreviousComparison, sinceFrom } from '../since-previous.js';
import { BatchSummary, ErrorGroups } from '../summary.js';
import type { SheetFindings } from '../verdicts.js';
import { WarningTally } from '../warnings.js';
import { type ErrorDescription, type RowBatch, rebuildError, type VerdictBatch } from './worker-codec.js';

/** Messages of verdicts the worker may send before the main thread has taken them (sheet read twice). */
export const WINDOW = 8;

/**
 * Batches of rows sent to the worker and not yet written (rows sent). A batch is about 150 rows,
 * 2 ms of the worker's time, and the main thread's pauses (a collection, a page of the previous
 * batch) are as long: with one batch queued behind the one it judges, the worker waited for
 * rows in most of them. With two, `validate` of a million rows against a register took 0.01 to
 * 0.9 s less (0.3 s as a rule) in 12 pairs of runs alternating with one. Rows held longer than
 * that outlive the main thread's young generation: at 4, promoted rows and verdicts grew its old
 * generation to 80 MB between collections, and the peak RSS to 268 MB. A batch waits packed
 * (RowBatch), and the reader's rows are let go once packed (validate.ts).
 */
export const IN_FLIGHT = 2;

/**
 * The worker's young generation (megabytes): semi-spaces of 8 MB. V8's default (16 MB, ~32 MB
 * resident once grown) would add as much again as the main thread's to the peak RSS. Judging
 * rows against a register allocates several times more than checking them (the payees'
 * histories as parsed, the records, the messages), and more of it outlives a smaller young
 * generation, to be promoted and collected with the old generation; bounded as that is
 * (WORKER_OLD_GENERATION_MB), a million rows judged against a register took as much CPU time
 * at 16 MB as at 32 (44 to 47 s against 44 to 54) and peaked at 222 to 242 MB of RSS instead of
 * 238 to 257.
 */
const YOUNG_GENERATION_MB = 16;

/**
 * The worker's old generation at most (megabytes). V8 lets an old generation grow to a multiple
 * of what outlived its last collection before it collects again: up to 4 times under a limit of
 * 2 GB or more (a worker's default here), 1.3 to 2 times under a smaller one. A million rows
 * judged against a register keep 14 to 25 MB alive, yet at the default the worker's heap reached
 * 89 to 108 MB in one run of two, and the peak RSS 275 to 304 MB; at 512 it stayed at 60 to 66 MB
 * (242 to 256 MB RSS) in every run. A sheet whose rows the worker must keep more of than this
 * ends the worker (ERR_WORKER_OUT_OF_MEMORY), and validate checks the sheet again on its main
 * thread, which has no such limit (validate.ts).
 */
export const WORKER_OLD_GENERATION_MB = 512;

/**
 * V8 flags set for the process before a worker starts, both against one way a run goes slow:
 * V8 watches the objects made at each object or array literal, and when a collection of the
 * young generation finds 85 % or more of one place's objects alive (`--trace-pretenuring-
 * statistics`), it makes all later ones in the old generation, for good (pretenuring). A batch's
 * rows are all alive while it is judged or written, so a collection that falls then pretenures
 * the places that make rows: each later row is made in the old generation, which fills with rows
 * done with. The worker then collected its old generation 100 to 183 times instead of 5 to 10,
 * and the run took 18 to 25 s instead of 13 to 16.
 * - `--no-minor-gc-task`: no scavenges scheduled ahead when the young generation is nearly full
 *   (run whenever the thread next waits, often with a batch's rows alive). Alone, it made such
 *   runs rarer (about one in ten instead of two in five), not gone.
 * - `--no-allocation-site-pretenuring`: no pretenuring at all. Nothing this process keeps for
 *   long is made at a literal in numbers that pretenuring would help (the large tables are typed
 *   arrays). Once measured a second slower (15.5 to 16.8 s, before the changes that made a run
 *   13 to 14 s); in runs alternating with and without it now (three cases, 9 each), as fast, and
 *   none slow with it, against one of 9 at 20.3 s without.
 * The flags are the process's, the main thread's too.
 */
const V8_FLAGS = '--no-minor-gc-task --no-allocation-site-pretenuring';

/** The error of a worker that reached its memory limit (Node's code). */
export function workerOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

/** What the worker needs to know: the sheet's columns and numbers, how many samples to keep. */
export interface WorkerInput {
  /** Set when the worker reads the sheet itself; else the main thread sends the rows. */
  sheet?: SheetOptions;
  /** The sheet, for messages. */
  sheetPath: string;
  /** Where each canonical column is, as the main thread matched the header row. */
  index: ColumnIndex;
  numbers: SheetNumbers;
  sampleSize: number;
  /** The register scope to check rows against, read-only (register-check.ts). */
  register?: { location: string; scope: ScopeInfo };
  /**
   * The main thread reads the earlier batches the sheet is compared with (since-previous.ts)
   * while the worker judges the first rows, and sends them in a message of their own.
   */
  comparisonsSent?: boolean;
  /** The moment the approver's warnings count back from (warnings.ts). */
  asOf: number;
  /** The sheet's own tag, when its payouts are in the payee history (warnings.ts). */
  batch?: string;
  /** About how many rows the sheet has (prepare.ts expectedRowsOf). */
  expectedRows?: number;
  /** Keep every warned reference for the summary. */
  warnedReferences: boolean;
  /** `--hold-changed-payees`: rows whose payee's bank details changed are shown held. */
  holdChangedPayees: boolean;
  /** The worker's old generation limit (WORKER_OLD_GENERATION_MB unless a test sets another). */
  oldGenerationMb?: number;
}

/** Messages from the worker, in order: verdicts, then `done` or `failed`. */
export type WorkerMessage =
  | ({ type: 'rows' } & VerdictBatch)
  // The worker's findings as plain data: the same fields `validate` learns on one thread.
  | ({ type: 'done' } & SheetFindings)
  | { type: 'failed'; error: ErrorDescription };

/** The main thread's message when the worker reads the sheet: one batch of verdicts taken. */
export const ACK = 'ack';

/**
 * The main thread's messages: ACK when the worker reads the sheet; else rows to check, then
 * `end` once the sheet was read to its end. Then `tag`, the hash of the valid rows (digest.ts
 * DigestRows), once their verdicts were taken and the rows written: the worker then finishes.
 */
export type MainMessage =
  | typeof ACK
  | ({ type: 'rows' } & RowBatch)
  | { type: 'comparisons'; comparisons: ComparisonMessage[] }
  | { type: 'end' }
  | { type: 'tag'; tag: string };

/** The main thread's end of the worker: rows out, their verdicts back in sheet order, then the findings. */
export class CheckingWorker {
  private readonly worker: Worker;
  private readonly queue: WorkerMessage[] = [];
  private waiting: { resolve: () => void } | undefined;
  private failure: Error | undefined;
  private exited = false;

  constructor(
    url: URL,
    private readonly input: WorkerInput,
  ) {
    const resourceLimits = {
      maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
      maxOldGenerationSizeMb: input.oldGenerationMb ?? WORKER_OLD_GENERATION_MB,
    };
    setFlagsFromString(V8_FLAGS);
    this.worker = new Worker(url, { workerData: input, resourceLimits });
    this.worker.on('message', (message: WorkerMessage) => this.arrive(message));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => {
      this.exited = true;
      this.wake();
    });
  }

  /** Sends rows to check. */
  send(rows: RowBatch): void {
    this.worker.postMessage({ type: 'rows', ...rows } satisfies MainMessage);
  }

  /** The comparisons with earlier batches (WorkerInput.comparisonsSent); they move, spent here. */
  sendComparisons(comparisons: readonly SincePreviousComparison[]): void {
    const messages = comparisons.map((comparison) => comparison.message());
    this.worker.postMessage(
      { type: 'comparisons', comparisons: messages.map((m) => m.data) } satisfies MainMessage,
      messages.flatMap((m) => m.transfer),
    );
  }

  /** No more rows: the worker finishes its counts and sends the findings. */
  end(): void {
    this.worker.postMessage({ type: 'end' } satisfies MainMessage);
  }

  /** The next batch of verdicts; rejects with the worker's error. */
  async nextBatch(): Promise<VerdictBatch> {
    const message = await this.take();
    if (message.type !== 'rows') throw this.outOfStep('the checked rows ended before the rows read');
    if (this.input.sheet) this.worker.postMessage(ACK);
    return message;
  }

  /** The findings, once every batch was taken; `tag`: the valid rows' hash (DigestRows). */
  async finish(tag: string): Promise<SheetFindings> {
    this.worker.postMessage({ type: 'tag', tag } satisfies MainMessage);
    const message = await this.take();
    if (message.type !== 'done') throw this.outOfStep('more rows were checked than read');
    const summary = new BatchSummary();
    summary.rows = message.summary.rows;
    summary.groupedAmounts = message.summary.groupedAmounts;
    summary.untotalledRows = message.summary.untotalledRows;
    summary.strayQuoteRow = message.summary.strayQuoteRow;
    summary.totalsRows.push(...message.summary.totalsRows);
    Object.assign(summary.byStatus, message.summary.byStatus);
    for (const [currency, minor] of message.summary.sheetTotals) summary.sheetTotals.set(currency, minor);
    for (const [currency, minor] of message.summary.validTotals) summary.validTotals.set(currency, minor);
    for (const [currency, minor] of message.summary.sendTotals) summary.sendTotals.set(currency, minor);
    for (const [currency, row] of message.summary.largestValid) summary.largestValid.set(currency, row);
    for (const [rail, rows] of message.summary.byRail) summary.byRail.set(rail, rows);
    for (const rail of message.summary.sendRails) summary.sendRails.add(rail);
    for (const [currency, rows] of message.summary.largestPayments)
      summary.largestPayments.set(currency, rows);
    Object.assign(summary.errorGroups, ErrorGroups.from(message.summary.errorGroups));
    return {
      summary,
      digest: message.digest,
      invalidSamples: message.invalidSamples,
      totalsMismatches: message.totalsMismatches,
      repeats: message.repeats,
      duplicates: message.duplicates,
      warnings: WarningTally.from(message.warnings),
      tag: message.tag,
      historyOwn: message.historyOwn,
      historyOther: message.historyOther,
      since: sinceFrom(message.since),
    };
  }

  /**
   * The threads disagree on the rows. When both read the sheet, the file changed while it was
   * being read; when the rows were sent, it cannot happen.
   */
  outOfStep(what: string): Error {
    const file = this.input.sheetPath;
    return this.input.sheet
      ? new SheetError(file, `changed while it was being read (${what}): run validate again once it is saved`)
      : new Error(`validate of ${file}: ${what}`);
  }

  /** Stops the worker (after an error, or when it is done). */
  async close(): Promise<void> {
    if (!this.exited) await this.worker.terminate();
  }

  private async take(): Promise<WorkerMessage> {
    for (;;) {
      const message = this.queue.shift();
      if (message !== undefined) {
        if (message.type === 'failed') throw rebuildError(message.error);
        return message;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.exited) throw new Error('the validation worker stopped before it was done');
      await new Promise<void>((resolve) => {
        this.waiting = { resolve };
      });
    }
  }

  /** Ends the wait for verdicts with `error` (the worker is stopped by close()). */
  private fail(error: Error): void {
    this.failure ??= error;
    this.wake();
  }

  private arrive(message: WorkerMessage): void {
    this.queue.push(message);
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve();
  }
}
