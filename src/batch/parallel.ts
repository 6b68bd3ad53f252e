/**
 * `validate` on two threads: the main thread reads the sheet and writes the results file, a
 * worker thread maps, checks, counts and hashes the rows and sends their verdicts back in sheet
 * order. Two ways to share the reading, chosen by where the time goes:
 *
 * - Without a register the worker reads the same file with the same reader: checking a row
 *   costs about what writing it does, and reading twice costs less than handing every cell
 *   over. The worker runs at most WINDOW messages of verdicts ahead of the writer.
 * - With a register, judging a row against its record (the look-up, an HMAC of the payee, a
 *   message) doubles the worker's share, so the main thread sends its rows instead, as one
 *   text per batch (RowBatch): V8 copies one long string in a fraction of the time it takes to
 *   clone cells one by one, and cutting it up costs the worker a fifth of parsing the CSV. The
 *   main thread sends at most IN_FLIGHT batches beyond the rows it has written.
 */
import { Worker } from 'node:worker_threads';
import type { ColumnIndex } from '../columns/columns.js';
import { type ErrorCode, PayoutsError, RegisterError, SheetError, StorageError } from '../errors.js';
import type { ScopeInfo } from '../register/types.js';
import type { SheetNumbers } from '../rows/money.js';
import { type Cell, EMPTY_CELL, type RawRow } from '../sheet/types.js';
import type { SheetOptions } from './prepare.js';
import { BatchSummary, ErrorGroups, type RowStatus } from './summary.js';
import { type RowSample, type RowVerdict, type SheetFindings, VALID, VALID_NEW_PAYEE } from './verdicts.js';
import { WarningTally } from './warnings.js';

/** Messages of verdicts the worker may send before the main thread has taken them (sheet read twice). */
export const WINDOW = 8;

/**
 * Batches of rows sent to the worker and not yet written (rows sent). Each one held past the
 * next outlives the main thread's young generation: at 4, promoted rows and verdicts grew its
 * old generation to 80 MB between collections, and the peak RSS to 268 MB for a million rows.
 */
export const IN_FLIGHT = 1;

/**
 * The worker's young generation. V8's default (semi-spaces of 16 MB, ~32 MB resident once
 * grown) would add as much again as the main thread's to the peak RSS; the worker keeps one
 * message of rows alive at a time, so a smaller one costs it little.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16 };

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
}

/**
 * Rows as they cross to the worker: the texts of their cells end to end, and the sizes to cut
 * them by. Strings and small arrays, no typed arrays: those are memory outside the heap, which
 * the garbage collector frees late (20 MB of them waited at a time for a sheet of a million
 * rows). Only for sheets whose cells are text or empty (CSV), where '' is the empty cell.
 */
export interface RowBatch {
  rowNumbers: number[];
  /**
   * Per row, its number of cells and then the length of each cell's text, each a UTF-16 code
   * unit; a size of 0xffff or more is BIG then its upper and lower 16 bits.
   */
  sizes: string;
  text: string;
  /** The reader's problems of the rows that have any: [position in the batch, problems]. */
  problems: [number, string[]][];
  /** The position of the row marked strayQuote (csv.ts), when the batch holds it. */
  strayQuote?: number;
}

/** The code unit that announces a size as two more units. */
const BIG = 0xffff;

/** A RowBatch of these rows. */
export function packRows(rows: readonly RawRow[]): RowBatch {
  const rowNumbers: number[] = new Array(rows.length);
  const sizes: number[] = [];
  const texts: string[] = [];
  const problems: [number, string[]][] = [];
  let strayQuote: number | undefined;
  const size = (n: number): void => {
    if (n < BIG) sizes.push(n);
    else sizes.push(BIG, n >>> 16, n & 0xffff);
  };
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    rowNumbers[i] = row.rowNumber;
    size(row.cells.length);
    for (const cell of row.cells) {
      if (cell.kind !== 'string' && cell.kind !== 'empty') {
        throw new Error(
          `a ${cell.kind} cell cannot cross to the validation worker, which takes text cells only`,
        );
      }
      texts.push(cell.text);
      size(cell.text.length);
    }
    if (row.problems.length > 0) problems.push([i, row.problems]);
    if (row.strayQuote) strayQuote = i;
  }
  return {
    rowNumbers,
    sizes: codeUnits(sizes),
    text: texts.join(''),
    problems,
    ...(strayQuote === undefined ? {} : { strayQuote }),
  };
}

/** The string of these code units, made a slice at a time (a call takes so many arguments). */
function codeUnits(units: readonly number[]): string {
  const SLICE = 8192;
  if (units.length <= SLICE) return String.fromCharCode(...units);
  let text = '';
  for (let i = 0; i < units.length; i += SLICE) text += String.fromCharCode(...units.slice(i, i + SLICE));
  return text;
}

// Shared by every row without a problem: nothing may push to it.
const NO_PROBLEMS: string[] = [];

/**
 * The rows of a RowBatch, as they were given to packRows, one at a time: each can be done with
 * before the next is made.
 */
export function* unpackRows(batch: RowBatch): Generator<RawRow> {
  const { rowNumbers, sizes, text } = batch;
  const problems = batch.problems.length === 0 ? undefined : new Map(batch.problems);
  let at = 0;
  let k = 0;
  const size = (): number => {
    const unit = sizes.charCodeAt(k++);
    if (unit !== BIG) return unit;
    k += 2;
    return ((sizes.charCodeAt(k - 2) << 16) | sizes.charCodeAt(k - 1)) >>> 0;
  };
  for (let i = 0; i < rowNumbers.length; i++) {
    const cells: Cell[] = new Array(size());
    for (let c = 0; c < cells.length; c++) {
      const length = size();
      if (length === 0) {
        cells[c] = EMPTY_CELL;
        continue;
      }
      cells[c] = { text: text.slice(at, at + length), kind: 'string' };
      at += length;
    }
    const row: RawRow = { rowNumber: rowNumbers[i]!, cells, problems: problems?.get(i) ?? NO_PROBLEMS };
    if (batch.strayQuote === i) row.strayQuote = true;
    yield row;
  }
}

/**
 * A batch's verdicts, packed: most rows are VALID and cost nothing to send; the others are one
 * text (VerdictPacker), which the structured clone copies as one block, twenty times faster than
 * the same verdicts as objects.
 */
export interface VerdictBatch {
  rowNumbers: Uint32Array<ArrayBuffer>;
  /** Per row: 0 for VALID, NEW_PAYEE_START for VALID_NEW_PAYEE, else 1 + where its verdict starts in `text`. */
  starts: Uint32Array<ArrayBuffer>;
  text: string;
}

/** In place of a count of warnings: the shared newPayee list (no row has this many warnings). */
const NEW_PAYEE_WARNINGS = 0xffff;

/** The start of VALID_NEW_PAYEE, shared like VALID's 0: no text is ever this long. */
const NEW_PAYEE_START = 0xffffffff;

/** The empty batch the main thread starts from. */
export const NO_VERDICTS: VerdictBatch = {
  rowNumbers: new Uint32Array(0),
  starts: new Uint32Array(0),
  text: '',
};

/** The numbers most written (counts, columns, lengths of messages), made once. */
const SMALL_NUMBERS: readonly string[] = Array.from({ length: 1024 }, (_, n) => String.fromCharCode(0, n));

const NO_TEXTS: readonly string[] = [];

/**
 * Builds a VerdictBatch row by row. A verdict is written as: status, the number of errors, the
 * errors, the number of error columns, the columns, the number of warnings, the warnings, then the four ids ('' for none); a number
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
    // Set for every row: a packer that gave copies goes on with its own arrays.
    this.starts[this.rows] = verdict === VALID_NEW_PAYEE ? NEW_PAYEE_START : 0;
    if (verdict !== VALID && verdict !== VALID_NEW_PAYEE) {
      this.starts[this.rows] = this.text.length + 1;
      this.notValid += 1;
      this.string(verdict.status);
      this.number(verdict.errors.length);
      for (const error of verdict.errors) this.string(error);
      this.number(verdict.errorColumns.length);
      for (const column of verdict.errorColumns) this.number(column);
      const warnings = verdict.warnings ?? NO_TEXTS;
      // The one shared newPayee list (a first sheet's every row) as a mark, not its text.
      if (warnings === VALID_NEW_PAYEE.warnings) this.number(NEW_PAYEE_WARNINGS);
      else {
        this.number(warnings.length);
        for (const warning of warnings) this.string(warning);
      }
      this.string(verdict.beneficiaryId ?? '');
      this.string(verdict.recipientId ?? '');
      this.string(verdict.simulationId ?? '');
      this.string(verdict.transactionId ?? '');
    }
    this.rows += 1;
  }

  /**
   * The batch taken so far, and a fresh start. Its buffers may be handed over (transfer them):
   * a full packer gives its own and makes new ones, any other gives copies and keeps its own.
   */
  take(): VerdictBatch {
    let batch: VerdictBatch;
    if (this.full) {
      batch = { rowNumbers: this.rowNumbers, starts: this.starts, text: this.text };
      this.rowNumbers = new Uint32Array(this.capacity);
      this.starts = new Uint32Array(this.capacity);
    } else {
      batch = {
        rowNumbers: this.rowNumbers.slice(0, this.rows),
        starts: this.starts.slice(0, this.rows),
        text: this.text,
      };
    }
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

/** Messages from the worker, in order: verdicts, then `done` or `failed`. */
export type WorkerMessage =
  | ({ type: 'rows' } & VerdictBatch)
  | {
      type: 'done';
      summary: BatchSummary;
      digest: string;
      invalidSamples: RowSample[];
      totalsMismatches: string[];
      repeats: [string, number[]][];
      duplicates: [string, number[]][];
      warnings: WarningTally;
      tag: string;
      historyBatches: string[];
    }
  | { type: 'failed'; error: ErrorDescription };

/** The main thread's message when the worker reads the sheet: one batch of verdicts taken. */
export const ACK = 'ack';

/**
 * The main thread's messages: ACK when the worker reads the sheet; else rows to check, then
 * `end` once the sheet was read to its end.
 */
export type MainMessage = typeof ACK | ({ type: 'rows' } & RowBatch) | { type: 'end' };

/** An error as it crosses threads: PayoutsErrors keep their code (and exit code) and text. */
export interface ErrorDescription {
  code?: ErrorCode;
  file?: string;
  message: string;
  stack?: string;
  /** A storage failure's own facts (its exit code is 2 or 6 by them), and whether the register's. */
  storage?: { plainMessage: string; path: string; errno?: string; afterSending: boolean; register: boolean };
}

export function describeError(error: unknown): ErrorDescription {
  if (error instanceof SheetError) {
    const prefix = `${error.file}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return { code: error.code, file: error.file, message };
  }
  if (error instanceof StorageError) {
    const { plainMessage, path, errno, afterSending } = error;
    const register = error instanceof RegisterError;
    return {
      code: error.code,
      message: error.message,
      storage: { plainMessage, path, afterSending, register, ...(errno === undefined ? {} : { errno }) },
    };
  }
  if (error instanceof PayoutsError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { message: error.message, stack: error.stack };
  return { message: String(error) };
}

export function rebuildError(description: ErrorDescription): Error {
  const { code, file, message } = description;
  if (code === 'SHEET' && file !== undefined) return new SheetError(file, message);
  const storage = description.storage;
  if (storage !== undefined) {
    const Kind = storage.register ? RegisterError : StorageError;
    const { plainMessage, ...facts } = storage;
    return new Kind(plainMessage, facts);
  }
  if (code !== undefined) return new PayoutsError(code, message);
  const error = new Error(message);
  if (description.stack !== undefined) error.stack = description.stack;
  return error;
}

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
    this.worker = new Worker(url, { workerData: input, resourceLimits: WORKER_LIMITS });
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

  /** The findings, once every batch was taken. */
  async finish(): Promise<SheetFindings> {
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
    for (const [currency, row] of message.summary.largestValid) summary.largestValid.set(currency, row);
    for (const [rail, rows] of message.summary.byRail) summary.byRail.set(rail, rows);
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
      historyBatches: message.historyBatches,
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

/** The verdict a batch message carries for one row (as VerdictPacker wrote it). */
export function verdictAt(batch: VerdictBatch, i: number): RowVerdict {
  const start = batch.starts[i]!;
  if (start === 0) return VALID;
  if (start === NEW_PAYEE_START) return VALID_NEW_PAYEE;
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
  const warnings = number();
  if (warnings === NEW_PAYEE_WARNINGS) verdict.warnings = VALID_NEW_PAYEE.warnings;
  else if (warnings > 0) {
    const texts: string[] = new Array(warnings);
    for (let k = 0; k < warnings; k++) texts[k] = string();
    verdict.warnings = texts;
  }
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
