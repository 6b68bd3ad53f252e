/**
 * `validate` on two threads. The main thread reads the sheet and writes the results file; a
 * worker thread reads the same file with the same reader and maps, checks, counts and hashes
 * its rows, sending the verdicts back in sheet order. Reading twice costs less than handing
 * every cell from one thread to the other (a structured clone per row), and leaves the main
 * thread no more work than the bare csv-parse → csv-stringify floor.
 *
 * Both threads number rows the same way, and the main thread checks every row number it pairs.
 * Memory stays bounded: the worker runs at most WINDOW messages ahead of the writer.
 */
import { Worker } from 'node:worker_threads';
import { type ErrorCode, PayoutsError, SheetError } from '../errors.js';
import type { ScopeInfo } from '../register/types.js';
import type { SheetOptions } from './prepare.js';
import { BatchSummary } from './summary.js';
import { type RowSample, type RowVerdict, type SheetFindings, VALID } from './verdicts.js';

/** Messages of verdicts the worker may send before the main thread has taken them. */
export const WINDOW = 8;

/**
 * The worker's young generation. V8's default (semi-spaces of 16 MB, ~32 MB resident once
 * grown) would add as much again as the main thread's to the peak RSS; the worker keeps one
 * batch of rows alive at a time, so a smaller one costs it little.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16 };

/** What the worker needs to know: where the sheet is, how to read it, how many samples to keep. */
export interface WorkerInput {
  sheet: SheetOptions;
  sampleSize: number;
  window: number;
  /** The register scope to check rows against, read-only (register-check.ts). */
  register?: { path: string; scope: ScopeInfo };
}

/** A batch's verdicts: `null` is VALID (most rows), which costs nothing to send. */
export interface VerdictBatch {
  rowNumbers: Uint32Array;
  verdicts: (RowVerdict | null)[];
}

/** Messages from the worker, in order: batches, then `done` or `failed`. */
export type WorkerMessage =
  | ({ type: 'rows' } & VerdictBatch)
  | {
      type: 'done';
      summary: BatchSummary;
      digest: string;
      invalidSamples: RowSample[];
      totalsMismatches: string[];
    }
  | { type: 'failed'; error: ErrorDescription };

/** The main thread's message: one batch taken, one more may come. */
export const ACK = 'ack';

/** An error as it crosses threads: PayoutsErrors keep their code (and exit code) and text. */
export interface ErrorDescription {
  code?: ErrorCode;
  file?: string;
  message: string;
  stack?: string;
}

export function describeError(error: unknown): ErrorDescription {
  if (error instanceof SheetError) {
    const prefix = `${error.file}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return { code: error.code, file: error.file, message };
  }
  if (error instanceof PayoutsError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { message: error.message, stack: error.stack };
  return { message: String(error) };
}

export function rebuildError(description: ErrorDescription): Error {
  const { code, file, message } = description;
  if (code === 'SHEET' && file !== undefined) return new SheetError(file, message);
  if (code !== undefined) return new PayoutsError(code, message);
  const error = new Error(message);
  if (description.stack !== undefined) error.stack = description.stack;
  return error;
}

/** The main thread's end of the worker: verdict batches in sheet order, then the findings. */
export class VerdictSource {
  private readonly worker: Worker;
  private readonly queue: WorkerMessage[] = [];
  private waiting: { resolve: () => void } | undefined;
  private failure: Error | undefined;
  private exited = false;

  constructor(
    url: URL,
    private readonly input: WorkerInput,
  ) {
    this.worker = new Worker(url, { workerData: input, resourceLimits: WORKER_LIMITS });
    this.worker.on('message', (message: WorkerMessage) => this.arrive(message));
    this.worker.on('error', (error) => {
      this.failure ??= error;
      this.wake();
    });
    this.worker.on('exit', () => {
      this.exited = true;
      this.wake();
    });
  }

  /** The next batch of verdicts; rejects with the worker's error. */
  async nextBatch(): Promise<VerdictBatch> {
    const message = await this.take();
    if (message.type === 'rows') {
      this.worker.postMessage(ACK);
      return message;
    }
    throw outOfStep(this.input.sheet.sheetPath, 'the checked rows ended before the rows read');
  }

  /** The findings, once every batch was taken. */
  async finish(): Promise<SheetFindings> {
    const message = await this.take();
    if (message.type !== 'done')
      throw outOfStep(this.input.sheet.sheetPath, 'more rows were checked than read');
    const summary = new BatchSummary();
    summary.rows = message.summary.rows;
    summary.groupedAmounts = message.summary.groupedAmounts;
    summary.totalsRows.push(...message.summary.totalsRows);
    Object.assign(summary.byStatus, message.summary.byStatus);
    for (const [currency, minor] of message.summary.sheetTotals) summary.sheetTotals.set(currency, minor);
    for (const [currency, minor] of message.summary.validTotals) summary.validTotals.set(currency, minor);
    for (const [currency, row] of message.summary.largestValid) summary.largestValid.set(currency, row);
    return {
      summary,
      digest: message.digest,
      invalidSamples: message.invalidSamples,
      totalsMismatches: message.totalsMismatches,
    };
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

/** The two threads disagree on the rows: the file changed while it was being read. */
export function outOfStep(file: string, what: string): SheetError {
  return new SheetError(
    file,
    `changed while it was being read (${what}): run validate again once it is saved`,
  );
}

/** The verdict a batch message carries for one row. */
export function verdictAt(batch: VerdictBatch, i: number): RowVerdict {
  return batch.verdicts[i] ?? VALID;
}
