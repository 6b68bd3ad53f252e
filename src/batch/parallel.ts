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
import type { LookupText, ScopeInfo } from '../register/types.js';
import type { SheetOptions } from './prepare.js';
import { BatchSummary, type RowStatus } from './summary.js';
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

/**
 * A batch's verdicts, packed: most rows are VALID and cost nothing to send; the others are one
 * text (VerdictPacker), which the structured clone copies as one block, twenty times faster than
 * the same verdicts as objects.
 */
export interface VerdictBatch {
  rowNumbers: Uint32Array<ArrayBuffer>;
  /** Per row: 0 for VALID, else 1 + where its verdict starts in `text`. */
  starts: Uint32Array<ArrayBuffer>;
  text: string;
}

/** The empty batch the main thread starts from. */
export const NO_VERDICTS: VerdictBatch = {
  rowNumbers: new Uint32Array(0),
  starts: new Uint32Array(0),
  text: '',
};

/** The numbers most written (counts, columns, lengths of messages), made once. */
const SMALL_NUMBERS: readonly string[] = Array.from({ length: 1024 }, (_, n) => String.fromCharCode(0, n));

/**
 * Builds a VerdictBatch row by row. A verdict is written as: status, the number of errors, the
 * errors, the number of error columns, the columns, then the four ids ('' for none); a number
 * as two UTF-16 code units (32 bits), a string as its length then its code units as they are.
 */
export class VerdictPacker {
  private rowNumbers: Uint32Array<ArrayBuffer>;
  private starts: Uint32Array<ArrayBuffer>;
  private text = '';
  /** Rows taken so far, and how many of them are not VALID. */
  rows = 0;
  notValid = 0;

  constructor(private readonly capacity: number) {
    this.rowNumbers = new Uint32Array(capacity);
    this.starts = new Uint32Array(capacity);
  }

  get full(): boolean {
    return this.rows === this.capacity;
  }

  add(rowNumber: number, verdict: RowVerdict): void {
    this.rowNumbers[this.rows] = rowNumber;
    if (verdict !== VALID) {
      this.starts[this.rows] = this.text.length + 1;
      this.notValid += 1;
      this.string(verdict.status);
      this.number(verdict.errors.length);
      for (const error of verdict.errors) this.string(error);
      this.number(verdict.errorColumns.length);
      for (const column of verdict.errorColumns) this.number(column);
      this.string(verdict.beneficiaryId ?? '');
      this.string(verdict.recipientId ?? '');
      this.string(verdict.simulationId ?? '');
      this.string(verdict.transactionId ?? '');
    }
    this.rows += 1;
  }

  /** The batch taken so far (its buffers are handed over: transfer them), and a fresh start. */
  take(): VerdictBatch {
    const full = this.full;
    const batch: VerdictBatch = {
      rowNumbers: full ? this.rowNumbers : this.rowNumbers.slice(0, this.rows),
      starts: full ? this.starts : this.starts.slice(0, this.rows),
      text: this.text,
    };
    this.rowNumbers = new Uint32Array(this.capacity);
    this.starts = new Uint32Array(this.capacity);
    this.text = '';
    this.rows = 0;
    this.notValid = 0;
    return batch;
  }

  private number(value: number): void {
    this.text +=
      value < SMALL_NUMBERS.length
        ? SMALL_NUMBERS[value]!
        : String.fromCharCode(value >>> 16, value & 0xffff);
  }

  private string(value: string): void {
    this.number(value.length);
    this.text += value;
  }
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
  | { type: 'failed'; error: ErrorDescription }
  /** The register's records of these references, please (answered in order, with `found`). */
  | { type: 'lookup'; references: string[] };

/** The main thread's message: one batch taken, one more may come. */
export const ACK = 'ack';

/** The main thread's messages: ACK, or the answer to the oldest `lookup` not yet answered. */
export type MainMessage = typeof ACK | { type: 'found'; text: LookupText };

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

  /**
   * `lookup` answers the worker's register look-ups here: the main thread has time to spare
   * while the worker maps and checks, and SQLite's part of a look-up is the larger one.
   */
  constructor(
    url: URL,
    private readonly input: WorkerInput,
    private readonly lookup?: (references: readonly string[]) => Promise<LookupText>,
  ) {
    this.worker = new Worker(url, { workerData: input, resourceLimits: WORKER_LIMITS });
    this.worker.on('message', (message: WorkerMessage) =>
      message.type === 'lookup' ? this.answer(message.references) : this.arrive(message),
    );
    this.worker.on('error', (error) => this.fail(error));
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

  private answer(references: readonly string[]): void {
    if (this.lookup === undefined) {
      this.fail(new Error('the validation worker asked for a register look-up, and there is no register'));
      return;
    }
    this.lookup(references).then(
      (text) => this.worker.postMessage({ type: 'found', text } satisfies MainMessage),
      (error: unknown) => this.fail(error as Error),
    );
  }

  /** Ends the wait for batches with `error` (the worker is stopped by close()). */
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

/** The two threads disagree on the rows: the file changed while it was being read. */
export function outOfStep(file: string, what: string): SheetError {
  return new SheetError(
    file,
    `changed while it was being read (${what}): run validate again once it is saved`,
  );
}

/** The verdict a batch message carries for one row (as VerdictPacker wrote it). */
export function verdictAt(batch: VerdictBatch, i: number): RowVerdict {
  const start = batch.starts[i]!;
  if (start === 0) return VALID;
  const { text } = batch;
  let at = start - 1;
  const number = (): number => {
    const value = ((text.charCodeAt(at) << 16) | text.charCodeAt(at + 1)) >>> 0;
    at += 2;
    return value;
  };
  const string = (): string => {
    const length = number();
    at += length;
    return text.slice(at - length, at);
  };
  const status = string() as RowStatus;
  const errors: string[] = new Array(number());
  for (let k = 0; k < errors.length; k++) errors[k] = string();
  const errorColumns: number[] = new Array(number());
  for (let k = 0; k < errorColumns.length; k++) errorColumns[k] = number();
  const verdict: RowVerdict = { status, errors, errorColumns };
  const beneficiaryId = string();
  const recipientId = string();
  const simulationId = string();
  const transactionId = string();
  if (beneficiaryId) verdict.beneficiaryId = beneficiaryId;
  if (recipientId) verdict.recipientId = recipientId;
  if (simulationId) verdict.simulationId = simulationId;
  if (transactionId) verdict.transactionId = transactionId;
  return verdict;
}
