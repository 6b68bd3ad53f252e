/**
 * What crosses between `validate`'s two threads (parallel.ts), packed for speed: rows as one
 * text with the sizes of their cells (RowBatch), verdicts as one text per message
 * (VerdictPacker, read back by verdictAt), and errors with their class and facts
 * (describeError, rebuildError). Pure functions of their input, tested in
 * test/batch/worker-codec.test.ts.
 */
import { type ErrorCode, PayoutsError, RegisterError, SheetError, StorageError } from '../../errors.js';
import { type Cell, EMPTY_CELL, type RawRow } from '../../sheet/types.js';
import type { RowStatus } from '../summary.js';
import { type NewPayeeVerdict, type RowVerdict, VALID, validNewPayee } from '../verdicts.js';

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
  /** Per row: 0 for VALID, else 1 + where its verdict starts in `text`. */
  starts: Uint32Array<ArrayBuffer>;
  text: string;
}

/**
 * In place of a status: a valid row whose one warning is that its payee is new (a first sheet's
 * every row), written as the payee's name alone; no status is this text.
 */
const NEW_PAYEE_MARK = '\u0001';

/** The empty batch the main thread starts from. */
export const NO_VERDICTS: VerdictBatch = {
  rowNumbers: new Uint32Array(0),
  starts: new Uint32Array(0),
  text: '',
};

/**
 * The numbers most written (counts, columns, lengths of messages), made once. A number is four
 * code units of 8 bits each, never above 0xff: a text whose messages are Latin-1 (the bench's
 * and most sheets') then stays a one-byte string. One unit above 0xff (a message's length of
 * 330 written as one unit) made the whole text two-byte: twice the memory on both threads,
 * copied twice over by postMessage, and every message cut from it two-byte on the main thread,
 * slower to write to the results file.
 */
const SMALL_NUMBERS: readonly string[] = Array.from({ length: 1024 }, (_, n) => numberText(n));

/** A number of up to 32 bits as four code units of 8 bits, the highest first. */
function numberText(value: number): string {
  return String.fromCharCode(
    (value >>> 24) & 0xff,
    (value >>> 16) & 0xff,
    (value >>> 8) & 0xff,
    value & 0xff,
  );
}

const NO_TEXTS: readonly string[] = [];

/** After a verdict's status: whether its row is in the batch digest (digest.ts inDigest). */
const IN_DIGEST = '\u0001';
const NOT_IN_DIGEST = '\u0000';

/**
 * Builds a VerdictBatch row by row. A verdict is written as: status, whether the row is in the
 * digest (one code unit), the number of errors, the errors, the number of error columns, the
 * columns, the number of warnings, the warnings, then the four ids ('' for none); a number as
 * four code units of 8 bits (32 bits: SMALL_NUMBERS), a string as its length then its code
 * units as they are. A VALID row and a new payee's (NEW_PAYEE_MARK) are valid, so in the digest.
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

  /** Adds a row's verdict; `inDigest`, whether the row is in the digest, for the thread hashing the rows. */
  add(rowNumber: number, verdict: RowVerdict, inDigest: boolean): void {
    this.rowNumbers[this.rows] = rowNumber;
    // Set for every row: a packer that gave copies goes on with its own arrays.
    this.starts[this.rows] = 0;
    const newPayee = (verdict as Partial<NewPayeeVerdict>).newPayee;
    if (verdict === VALID || newPayee !== undefined) {
      if (!inDigest) throw new Error(`row ${rowNumber} is valid yet not in the digest`);
    }
    if (newPayee !== undefined) {
      this.starts[this.rows] = this.text.length + 1;
      this.string(NEW_PAYEE_MARK);
      this.string(newPayee);
    } else if (verdict !== VALID) {
      this.starts[this.rows] = this.text.length + 1;
      this.notValid += 1;
      this.string(verdict.status);
      this.text += inDigest ? IN_DIGEST : NOT_IN_DIGEST;
      this.number(verdict.errors.length);
      for (const error of verdict.errors) this.string(error);
      this.number(verdict.errorColumns.length);
      for (const column of verdict.errorColumns) this.number(column);
      const warnings = verdict.warnings ?? NO_TEXTS;
      this.number(warnings.length);
      for (const warning of warnings) this.string(warning);
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
    this.text += value < SMALL_NUMBERS.length ? SMALL_NUMBERS[value]! : numberText(value);
  }

  private string(value: string): void {
    this.number(value.length);
    this.text += value;
  }
}

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

/** The verdict a batch message carries for one row (as VerdictPacker wrote it). */
export function verdictAt(batch: VerdictBatch, i: number): RowVerdict {
  const start = batch.starts[i]!;
  if (start === 0) return VALID;
  const { text } = batch;
  let at = start - 1;
  const number = (): number => {
    const value = numberAt(text, at);
    at += 4;
    return value;
  };
  const string = (): string => {
    const length = number();
    at += length;
    return text.slice(at - length, at);
  };
  const status = string() as RowStatus;
  if ((status as string) === NEW_PAYEE_MARK) return validNewPayee(string());
  at += 1; // in the digest or not: digestedAt
  const errors: string[] = new Array(number());
  for (let k = 0; k < errors.length; k++) errors[k] = string();
  const errorColumns: number[] = new Array(number());
  for (let k = 0; k < errorColumns.length; k++) errorColumns[k] = number();
  const verdict: RowVerdict = { status, errors, errorColumns };
  const warnings = number();
  if (warnings > 0) {
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

/** Whether the row a batch message carries at `i` is in the batch digest (VerdictPacker.add). */
export function digestedAt(batch: VerdictBatch, i: number): boolean {
  const start = batch.starts[i]!;
  if (start === 0) return true;
  const { text } = batch;
  const at = start - 1;
  const length = numberAt(text, at);
  const status = text.slice(at + 4, at + 4 + length);
  return status === NEW_PAYEE_MARK || text.charAt(at + 4 + length) === IN_DIGEST;
}

/** The number numberText wrote at `at`. */
function numberAt(text: string, at: number): number {
  return (
    ((text.charCodeAt(at) << 24) |
      (text.charCodeAt(at + 1) << 16) |
      (text.charCodeAt(at + 2) << 8) |
      text.charCodeAt(at + 3)) >>>
    0
  );
}
