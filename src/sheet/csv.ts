import { createReadStream } from 'node:fs';
import { CsvError } from 'csv-parse';
import { SheetError } from '../errors.js';
import { columnLetters } from './column-letters.js';
import { csvCore, LINE_ENDINGS } from './csv-core.js';
import {
  type CsvDialect,
  type CsvEncoding,
  chunkDecoder,
  delimiterName,
  parseDelimiterOption,
  sniffCsvDialect,
} from './csv-dialect.js';
import { HEADER_SEARCH_ROWS } from './headers.js';
import { MAX_CELL_CHARS, MAX_COLUMNS, oversizedCell } from './limits.js';
import { type Cell, EMPTY_CELL, type OpenedSheet, type RawRow } from './types.js';

export type { CsvEncoding } from './csv-dialect.js';

/** Options of `openCsv`: `--delimiter` and `--encoding`. */
export interface CsvOptions {
  delimiter?: string;
  encoding?: CsvEncoding;
  /** Which row is the header row: the first of the first 10 non-blank rows it accepts. */
  isHeaderRow?: (cells: readonly string[]) => boolean;
}

// A record this large is almost always an unclosed quote swallowing the rest of the file; stop
// before it takes the memory. A 10 MB cell still passes and becomes a row problem.
const MAX_RECORD_BYTES = 32 * 1024 * 1024;
// A chunk of the file is a batch of rows (about 150 of a payout sheet): small enough that a
// batch is gone before the garbage collector's next young-generation pass would keep it.
const READ_CHUNK = 32 * 1024;

const EMPTY_SHEET = 'the sheet is empty: the first row must hold the column headers';

/**
 * Opens a CSV sheet and reads its header row; `rows` streams the data rows with the row numbers
 * a spreadsheet shows (header = row 1, one row per record, blank lines counted but skipped).
 */
export async function openCsv(file: string, opts: CsvOptions = {}): Promise<OpenedSheet> {
  const forced = opts.delimiter === undefined ? undefined : parseDelimiterOption(opts.delimiter);
  let dialect: CsvDialect;
  try {
    dialect = await sniffCsvDialect(file, opts.encoding);
  } catch (error) {
    throw asSheetError(file, error, 1);
  }
  if (forced !== undefined) dialect = { ...dialect, delimiter: forced };

  const cursor = new RecordCursor(file, recordBatches(file, dialect));
  let headers: string[] | undefined;
  let headerRowNumber = 0;
  try {
    // A title above the header row; the header is the first row that has the columns.
    let nonBlank = 0;
    while (headers === undefined) {
      const record = await cursor.next();
      if (record === undefined) {
        if (nonBlank === 0) throw new SheetError(file, EMPTY_SHEET);
        break;
      }
      if (isBlank(record)) continue;
      nonBlank++;
      if (opts.isHeaderRow === undefined || opts.isHeaderRow(record)) {
        headers = record;
        headerRowNumber = cursor.rowNumber;
      } else if (nonBlank >= HEADER_SEARCH_ROWS) break;
    }
    if (headers === undefined) {
      // No row has the columns: read the first row as the header, so matchHeaders says what is missing.
      await cursor.close();
      return openCsv(file, { ...opts, isHeaderRow: undefined });
    }
    if (headers.length > MAX_COLUMNS) {
      throw new SheetError(
        file,
        `the header row has ${headers.length} columns - a payout sheet has at most ${MAX_COLUMNS}. Is this the right file, and is ${delimiterName(dialect.delimiter)} its delimiter?`,
      );
    }
  } catch (error) {
    await cursor.close();
    throw error;
  }

  return {
    path: file,
    format: 'csv',
    headers,
    headerRowNumber,
    dialect: { encoding: dialect.encoding, delimiter: dialect.delimiter, bom: dialect.bomLength > 0 },
    rows: cursor.rows(headers, dialect.delimiter),
    batches: cursor.rowBatches(headers, dialect.delimiter),
    close: () => cursor.close(),
  };
}

/** Marks the record (an array) where the first quote inside an unquoted cell was met. */
const STRAY_QUOTE = Symbol('strayQuote');
type MarkedRecord = string[] & { [STRAY_QUOTE]?: true };

/**
 * Records come in batches, one per chunk of the file, so that a row costs no extra promise.
 * A quote inside an unquoted cell (`12" pipe`, `37°36'37.8"N`) is read as a character, as
 * Excel, LibreOffice and Python's csv module read it: the strict reading stops there, and the
 * file is read again from its start in the relaxed one, handing out only the records after
 * those already handed out (both readings agree on them: the first stray quote comes after)
 * and marking the one where the quote was met. A quoted cell that never closes still refuses
 * the file.
 */
async function* recordBatches(file: string, dialect: CsvDialect): AsyncGenerator<string[][]> {
  let handedOut = 0;
  try {
    for await (const batch of parsedBatches(file, dialect, false)) {
      handedOut += batch.length;
      yield batch;
    }
    return;
  } catch (error) {
    if (!(error instanceof CsvError) || error.code !== 'INVALID_OPENING_QUOTE') throw error;
  }
  let seen = 0;
  for await (const batch of parsedBatches(file, dialect, true)) {
    const fresh = batch.slice(Math.max(0, handedOut - seen));
    if (seen + batch.length > handedOut && seen <= handedOut) {
      const first = fresh[0] as MarkedRecord | undefined;
      if (first !== undefined) first[STRAY_QUOTE] = true;
    }
    seen += batch.length;
    if (fresh.length > 0) yield fresh;
  }
}

async function* parsedBatches(
  file: string,
  dialect: CsvDialect,
  relaxQuotes: boolean,
): AsyncGenerator<string[][]> {
  const core = csvCore({
    delimiter: dialect.delimiter,
    bom: false,
    relax_quotes: relaxQuotes,
    relax_column_count: true,
    skip_empty_lines: false,
    max_record_size: MAX_RECORD_BYTES,
    // Every line ending ends a record wherever it appears outside quotes, in any mix, as Excel,
    // LibreOffice and Python's csv module read a file: a header typed in Excel (CRLF) above rows
    // a script appended (LF) happens. Left to itself, csv-parse takes the first ending it meets
    // as the only one: LF rows under a CRLF header merged into one record, and CRLF rows under
    // an LF header kept their CR in the last cell.
    record_delimiter: LINE_ENDINGS as string[],
  });
  let batch: string[][] = [];
  const push = (record: string[]): void => {
    batch.push(record);
  };
  const close = (): void => {};
  // Handed out and let go here at once: nothing of this generator holds records it yielded.
  const taken = (): string[][] => {
    const records = batch;
    batch = [];
    return records;
  };
  const decoder = chunkDecoder(file, dialect);
  const stream = createReadStream(file, { start: dialect.bomLength, highWaterMark: READ_CHUNK });
  try {
    for await (const chunk of stream) {
      const error = core.parse(await decoder.decode(chunk as Buffer), false, push, close);
      if (batch.length > 0) yield taken();
      if (error !== undefined) throw error;
    }
    await decoder.end();
    const error = core.parse(undefined, true, push, close);
    if (batch.length > 0) yield taken();
    if (error !== undefined) throw error;
  } finally {
    stream.destroy();
  }
}

class RecordCursor {
  private batch: string[][] = [];
  private position = 0;
  private done = false;
  /** Row number of the record last handed out (first record = 1). */
  rowNumber = 0;

  constructor(
    private readonly file: string,
    private readonly records: AsyncGenerator<string[][]>,
  ) {}

  async next(): Promise<string[] | undefined> {
    if (this.position >= this.batch.length && !(await this.fill())) return undefined;
    this.rowNumber++;
    return this.batch[this.position++];
  }

  async *rows(headers: readonly string[], delimiter: string): AsyncGenerator<RawRow> {
    try {
      for (;;) {
        const batch = this.batch;
        while (this.position < batch.length) {
          const record = batch[this.position++]!;
          this.rowNumber++;
          if (!isBlank(record)) yield toRawRow(record, this.rowNumber, headers, delimiter);
        }
        if (!(await this.fill())) return;
      }
    } finally {
      await this.close();
    }
  }

  /**
   * The same rows as `rows`, one array per parsed chunk: no promise per row. The parsed records
   * are let go before a batch is handed out, and no variable of this generator holds the batch
   * while it waits: a consumer that keeps a batch through other work (validate sends it to its
   * worker, then writes the batch before) should find only what it keeps itself alive when the
   * young generation is collected.
   */
  async *rowBatches(headers: readonly string[], delimiter: string): AsyncGenerator<RawRow[]> {
    try {
      for (;;) {
        if (this.skipBlank()) yield this.takeRows(headers, delimiter);
        if (!(await this.fill())) return;
      }
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    this.done = true;
    this.batch = [];
    this.position = 0;
    await this.records.return(undefined);
  }

  /** Passes over blank records (their row numbers count); whether a record is left. */
  private skipBlank(): boolean {
    const batch = this.batch;
    while (this.position < batch.length && isBlank(batch[this.position]!)) {
      this.position++;
      this.rowNumber++;
    }
    return this.position < batch.length;
  }

  /** The rows of the records not yet handed out (at least one), the records then let go. */
  private takeRows(headers: readonly string[], delimiter: string): RawRow[] {
    const batch = this.batch;
    const rows: RawRow[] = [];
    while (this.position < batch.length) {
      const record = batch[this.position++]!;
      this.rowNumber++;
      if (!isBlank(record)) rows.push(toRawRow(record, this.rowNumber, headers, delimiter));
    }
    this.batch = [];
    this.position = 0;
    return rows;
  }

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    try {
      const next = await this.records.next();
      if (next.done) {
        this.done = true;
        return false;
      }
      this.batch = next.value;
      this.position = 0;
      return true;
    } catch (error) {
      this.done = true;
      throw asSheetError(this.file, error, this.rowNumber + 1);
    }
  }
}

// A blank line, or one holding only delimiters and spaces: skipped, but its row number counts.
function isBlank(record: readonly string[]): boolean {
  for (let i = 0; i < record.length; i++) {
    const field = record[i]!;
    if (field !== '' && (field.charCodeAt(0) > 32 || field.trim() !== '')) return false;
  }
  return true;
}

// Shared by every row without a problem: nothing may push to it.
const NO_PROBLEMS: string[] = [];

function toRawRow(
  record: readonly string[],
  rowNumber: number,
  headers: readonly string[],
  delimiter: string,
): RawRow {
  const width = headers.length;
  const fields = record.length;
  let problems = NO_PROBLEMS;
  if (fields !== width) {
    problems = [];
    // A record with the wrong number of fields is an error on its row, not on the file.
    problems.push(
      `row has ${fields} field${fields === 1 ? '' : 's'} but the header has ${width}: check this row for a stray ${delimiterName(delimiter)} or a missing quote`,
    );
  }
  const cells: Cell[] = [];
  for (let i = 0; i < width; i++) {
    const text = i < fields ? record[i]! : '';
    if (text === '') {
      cells.push(EMPTY_CELL);
      continue;
    }
    cells.push({ text, kind: 'string' });
    if (text.length > MAX_CELL_CHARS) {
      if (problems === NO_PROBLEMS) problems = [];
      problems.push(oversizedCell(headers, i, text.length));
    }
  }
  const row: RawRow = { rowNumber, cells, problems };
  if ((record as MarkedRecord)[STRAY_QUOTE]) row.strayQuote = true;
  return row;
}

function asSheetError(file: string, error: unknown, row: number): SheetError {
  if (error instanceof SheetError) return error;
  if (error instanceof CsvError) {
    const line = (error as CsvError & { lines?: number }).lines;
    const where = `row ${row}${line === undefined ? '' : ` (line ${line})`}`;
    // csv-parse counts the cells of the record before the one it stopped in: that cell's index.
    const index = (error as CsvError & { column?: number }).column;
    const column = typeof index === 'number' && index >= 0 ? `column ${columnLetters(index)}` : undefined;
    switch (error.code) {
      case 'CSV_QUOTE_NOT_CLOSED':
        return new SheetError(
          file,
          `a quoted cell that starts in row ${row} is never closed, so the rest of the file would be one cell: check the quotes (") in ${column === undefined ? 'that row' : `${column} of that row`}`,
          { cause: error },
        );
      case 'INVALID_OPENING_QUOTE':
        return new SheetError(
          file,
          `${where}: a quote (") appears inside a cell${column === undefined ? '' : ` in ${column}`} that does not start with one - put the whole cell in quotes and double the quote (""), or remove it`,
          { cause: error },
        );
      case 'CSV_INVALID_CLOSING_QUOTE':
        return new SheetError(
          file,
          `${where}: a quoted cell${column === undefined ? '' : ` in ${column}`} is followed by more text before the next delimiter - put the whole cell in quotes and double any quote inside it ("")`,
          { cause: error },
        );
      case 'CSV_MAX_RECORD_SIZE':
        return new SheetError(
          file,
          `${where} is larger than ${MAX_RECORD_BYTES / 1024 / 1024} MB: a quote (") in it is probably never closed - check the quotes in that row`,
          { cause: error },
        );
      default:
        return new SheetError(file, `${where}: ${error.message}`, { cause: error });
    }
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new SheetError(file, 'file not found', { cause: error });
  if (code === 'EISDIR') return new SheetError(file, 'is a directory, not a sheet file', { cause: error });
  if (code === 'EACCES' || code === 'EPERM')
    return new SheetError(file, 'cannot be read: permission denied', { cause: error });
  return new SheetError(file, `cannot be read as CSV: ${(error as Error)?.message ?? String(error)}`, {
    cause: error,
  });
}
