import { once } from 'node:events';
import type ExcelJS from 'exceljs';
import { type CanonicalColumn, IDENTIFIER_COLUMNS } from '../columns/columns.js';
import { SheetError } from '../errors.js';
import { AtomicFile } from './atomic-file.js';
import { columnLetters } from './column-letters.js';
import { CsvRecordEncoder } from './csv-record.js';
import { neutraliseFormula } from './formula.js';
import { canonicalColumnOf, isResultHeader } from './headers.js';
import { MAX_CELL_CHARS } from './limits.js';
import { quoteCell } from './quote.js';
import { checkResultsPath } from './results-path.js';
import type { Cell, OpenedSheet, RawRow, SheetFormat, SheetLayout } from './types.js';

export { neutraliseFormula, restoreFormula } from './formula.js';

/** The columns appended to every input column (docs/sheets.md "The results file"). */
export const RESULT_COLUMNS = [
  'result.row',
  'result.status',
  'result.errors',
  'result.warnings',
  'result.beneficiaryId',
  'result.recipientId',
  'result.simulationId',
  'result.transactionId',
] as const;

/** One row of the results file. */
export interface ResultRecord {
  /** The input cells, in input order (as the reader gave them). */
  cells: readonly Cell[];
  rowNumber: number;
  status: string;
  /** Every message of the row; joined with "; " in `result.errors`. */
  errors: readonly string[];
  /** The approver's warnings of the row; joined with "; " in `result.warnings`. */
  warnings?: readonly string[];
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
  /** Input column indexes whose cells the row's messages are about (marked in XLSX). */
  errorColumns: readonly number[];
}

/** Writes a results file atomically: nothing appears at `path` before `commit()`. */
export interface ResultsWriter {
  readonly path: string;
  /** Adds a row; returns a promise when the caller should wait (backpressure). */
  write(row: ResultRecord): Promise<void> | void;
  /** Flushes, syncs and renames the temporary file onto `path`. */
  commit(): Promise<void>;
  /** Removes the temporary file; `path` keeps whatever it held before. */
  abort(): Promise<void>;
}

/** What `openResultsWriter` needs: the target, its format and the input's header row. */
export interface ResultsWriterOptions {
  path: string;
  /** The sheet the results are of: `path` must not be it, and must have its format's extension. */
  sheetPath?: string;
  format: SheetFormat;
  /** The header row of the input, as the reader gave it. */
  inputHeaders: readonly string[];
  /** CSV only: the input's delimiter (default comma). */
  delimiter?: string;
  /** CSV only: start with a byte order mark so Excel reads the text right (default true). */
  bom?: boolean;
  /**
   * CSV only: the results' encoding, UTF-8 unless a UTF-16 sheet's (docs/sheets.md "The results
   * file": a sheet keeps its own Unicode encoding; a windows-1252 or macroman one gets UTF-8).
   */
  encoding?: 'utf-8' | 'utf-16le' | 'utf-16be';
  /** XLSX only: input columns to format as text; default, the identifier columns by header. */
  textColumns?: readonly number[];
  /** XLSX only: the input's layout (widths, hidden columns, number formats) to keep. */
  layout?: SheetLayout;
  /**
   * XLSX only: the workbook the sheet was read from, the payout sheet's name and every
   * worksheet's, in order: the results keep the other sheets, in place, and the sheet's name.
   */
  workbook?: { path: string; sheet: string; sheets: readonly string[] };
}

/**
 * Statuses whose rows are marked in an XLSX results file (docs/sheets.md "The results file":
 * failing rows are filled red).
 */
export const MARKED_STATUSES: ReadonlySet<string> = new Set(['invalid', 'failed', 'unknown']);

/** Opens a results writer in the format of the input (CSV gives CSV, XLSX gives XLSX). */
export async function openResultsWriter(opts: ResultsWriterOptions): Promise<ResultsWriter> {
  if (opts.sheetPath !== undefined) checkResultsPath(opts.sheetPath, opts.path, opts.format);
  const layout = resultsLayout(opts.inputHeaders);
  const file = await AtomicFile.create(opts.path);
  if (opts.format !== 'xlsx') return new CsvResultsWriter(file, layout, opts);
  // exceljs costs ~30 MB of memory to load: only XLSX results pay for it.
  const excel = (await import('exceljs')).default;
  const workbook = new excel.stream.xlsx.WorkbookWriter({
    stream: file.stream,
    useStyles: true,
    // Shared strings would keep every distinct text in memory until the end; inline strings
    // keep memory flat on any number of rows.
    useSharedStrings: false,
  });
  const source = opts.workbook;
  const at = source ? source.sheets.indexOf(source.sheet) : -1;
  const after = source && at >= 0 ? source.sheets.slice(at + 1) : [];
  try {
    // The sheets before the payout sheet first: a streamed workbook writes its sheets in order.
    if (source && at > 0)
      for (const name of source.sheets.slice(0, at)) await copyWorksheet(workbook, source.path, name);
    // The sheets after it are copied at commit, once every row is written, when a `run` has
    // sent its payouts: one that cannot be read is found now, before anything is sent.
    if (source) for (const name of after) await readWorksheet(source.path, name);
  } catch (error) {
    const failure = file.failure;
    await file.abort();
    throw failure ?? error;
  }
  return new XlsxResultsWriter(file, layout, opts, workbook, source?.sheet ?? 'Results', after);
}

/**
 * Copies a worksheet of the input workbook into the results: every cell's value at its place,
 * numbers and dates with their number formats, its column widths and hidden columns, hidden
 * when it was (formulas
 * arrive as the values they last showed). The sheet is read as it is, not as a payout sheet:
 * its first row is no header that decides which columns are kept.
 */
async function copyWorksheet(
  workbook: ExcelJS.stream.xlsx.WorkbookWriter,
  file: string,
  name: string,
): Promise<void> {
  const opened = await openOtherSheet(file, name);
  const target = workbook.addWorksheet(name, opened.hidden === undefined ? {} : { state: opened.hidden });
  try {
    const layout = opened.layout;
    // Array.from, not map: the layout has holes where a column has no <col>, and exceljs would
    // close them up, moving every later width one column to the left.
    target.columns = Array.from(layout?.columns ?? [], (c) => ({
      width: c?.width,
      hidden: c?.hidden === true ? true : undefined,
      style: c?.numFmt === undefined ? {} : { numFmt: c.numFmt },
    }));
    for await (const raw of otherRows(opened, name)) {
      const row = target.getRow(raw.rowNumber);
      raw.cells.forEach((cell, i) => {
        const value = copiedValue(cell);
        if (value === undefined) return;
        const copied = row.getCell(i + 1);
        copied.value = value;
        const numFmt = cell.format === undefined ? undefined : layout?.formats[cell.format];
        if (numFmt !== undefined) copied.numFmt = numFmt;
        else if (value instanceof Date)
          copied.numFmt = cell.text.length > 10 ? 'yyyy-mm-dd hh:mm:ss' : 'yyyy-mm-dd';
      });
      row.commit();
    }
  } finally {
    await opened.close?.();
  }
  target.commit();
}

/** Reads another worksheet of the workbook to its end: throws what copying it would. */
async function readWorksheet(file: string, name: string): Promise<void> {
  const opened = await openOtherSheet(file, name);
  for await (const _row of otherRows(opened, name));
}

/** Another worksheet of the workbook, opened as it is (every cell, no header row). */
async function openOtherSheet(file: string, name: string): Promise<OpenedSheet> {
  try {
    // The XLSX reader (and its zip and XML parsers) loads only when a workbook is copied.
    return await (await import('./xlsx.js')).openXlsx(file, { sheetName: name, everyCell: true });
  } catch (error) {
    throw otherSheetError(file, name, error);
  }
}

/** The rows of another worksheet; a read error names the worksheet. */
async function* otherRows(opened: OpenedSheet, name: string): AsyncGenerator<RawRow> {
  try {
    yield* opened.rows;
  } catch (error) {
    throw otherSheetError(opened.path, name, error);
  }
}

// The reader's message names the workbook's part (xl/worksheets/sheet2.xml); people know the
// worksheet by its name, and need to know why a sheet they did not ask for was read at all.
function otherSheetError(file: string, name: string, error: unknown): unknown {
  if (!(error instanceof SheetError)) return error;
  const prefix = `${file}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return new SheetError(
    file,
    `worksheet ${quoteCell(name)}, which the results file keeps, cannot be read: ${message}`,
    { cause: error },
  );
}

// A copied cell: dates stay dates (the reader gives them as ISO text, in UTC); the rest as in
// the payout sheet's results.
function copiedValue(cell: Cell): string | number | boolean | Date | undefined {
  if (cell.kind === 'date') {
    const date = new Date(cell.text.length > 10 ? `${cell.text}Z` : `${cell.text}T00:00:00Z`);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return xlsxValue(cell);
}

/** Where each column of the results file comes from. */
export interface ResultsLayout {
  headers: string[];
  /** Input column indexes copied to the output, in order (`result.*` input columns dropped). */
  kept: number[];
  /** Output position of each input column, -1 when dropped. */
  outputOf: number[];
}

/** Input columns in order without the old `result.*` ones, then the fresh result columns. */
export function resultsLayout(inputHeaders: readonly string[]): ResultsLayout {
  const kept: number[] = [];
  const outputOf: number[] = [];
  inputHeaders.forEach((header, i) => {
    outputOf.push(isResultHeader(header) ? -1 : kept.length);
    if (!isResultHeader(header)) kept.push(i);
  });
  return { headers: [...kept.map((i) => inputHeaders[i]!), ...RESULT_COLUMNS], kept, outputOf };
}

function resultValues(row: ResultRecord): string[] {
  return [
    String(row.rowNumber),
    row.status,
    row.errors.join('; '),
    row.warnings?.join('; ') ?? '',
    row.beneficiaryId ?? '',
    row.recipientId ?? '',
    row.simulationId ?? '',
    row.transactionId ?? '',
  ];
}

/**
 * One wait for the file's 'drain', shared by every caller until it comes. A wait per row would
 * add a listener per row to the stream: callers that do not await each write (a batch at a time)
 * piled up hundreds and Node printed MaxListenersExceededWarning.
 */
class Drain {
  private pending: Promise<void> | undefined;

  constructor(private readonly file: AtomicFile) {}

  wait(): Promise<void> {
    this.pending ??= Promise.race([once(this.file.stream, 'drain'), this.file.failed]).then(() => {
      this.pending = undefined;
    });
    return this.pending;
  }
}

// Records are encoded straight into a buffer of this size, which goes to the file when full:
// no string outlives its row, so the young heap stays small (and one write per 64 KB).
const CHUNK_BYTES = 64 * 1024;

class CsvResultsWriter implements ResultsWriter {
  readonly path: string;
  private readonly encoder: CsvRecordEncoder;
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  /** Filled buffers not yet handed to the file. */
  private full: Buffer[] = [];
  private readonly drained: Drain;

  /** Node's name of the encoding the text is written in, and its bytes per UTF-16 unit at most. */
  private readonly unit: { encoding: 'utf8' | 'utf16le'; bytes: number };
  /** UTF-16BE: written as UTF-16LE, each filled buffer's byte pairs swapped. */
  private readonly bigEndian: boolean;

  constructor(
    private readonly file: AtomicFile,
    private readonly layout: ResultsLayout,
    opts: ResultsWriterOptions,
  ) {
    this.path = opts.path;
    this.drained = new Drain(file);
    this.encoder = new CsvRecordEncoder(opts.delimiter ?? ',');
    const utf16 = opts.encoding === 'utf-16le' || opts.encoding === 'utf-16be';
    this.unit = utf16 ? { encoding: 'utf16le', bytes: 2 } : { encoding: 'utf8', bytes: 3 };
    this.bigEndian = opts.encoding === 'utf-16be';
    // The byte order mark, U+FEFF as text, in the results' encoding.
    if (opts.bom ?? true) this.encode('\uFEFF');
    this.add(layout.headers.map(neutraliseFormula));
  }

  write(row: ResultRecord): Promise<void> | void {
    const failure = this.file.failure;
    if (failure) throw failure;
    const { kept } = this.layout;
    const cells = row.cells;
    const record: string[] = [];
    for (let i = 0; i < kept.length; i++) record.push(neutraliseFormula(cells[kept[i]!]?.text ?? ''));
    record.push(
      String(row.rowNumber),
      neutraliseFormula(row.status),
      row.errors.length === 0 ? '' : neutraliseFormula(row.errors.join('; ')),
      row.warnings === undefined || row.warnings.length === 0
        ? ''
        : neutraliseFormula(row.warnings.join('; ')),
      neutraliseFormula(row.beneficiaryId ?? ''),
      neutraliseFormula(row.recipientId ?? ''),
      neutraliseFormula(row.simulationId ?? ''),
      neutraliseFormula(row.transactionId ?? ''),
    );
    this.add(record);
    if (this.full.length > 0) return this.flush();
  }

  async commit(): Promise<void> {
    try {
      const failure = this.file.failure;
      if (failure) throw failure;
      this.spill();
      const stream = this.file.stream;
      for (const buffer of this.full) stream.write(buffer);
      this.full = [];
      const finished = once(stream, 'finish');
      stream.end();
      await Promise.race([finished, this.file.failed]);
    } catch (error) {
      await this.file.abort();
      throw this.file.failure ?? error;
    }
    await this.file.commit();
  }

  async abort(): Promise<void> {
    this.full = [];
    this.used = 0;
    await this.file.abort();
  }

  private add(record: readonly string[]): void {
    this.encode(this.encoder.record(record));
  }

  // UTF-8 takes at most 3 bytes per UTF-16 unit, UTF-16 2: a text that may not fit ends the chunk.
  private encode(text: string): void {
    const { encoding, bytes } = this.unit;
    if (this.used + text.length * bytes > this.chunk.length) {
      this.spill();
      if (text.length * bytes > this.chunk.length) {
        this.filled(Buffer.from(text, encoding));
        return;
      }
    }
    this.used += this.chunk.write(text, this.used, encoding);
  }

  // The chunk so far joins the filled ones; writing goes on in a fresh one.
  private spill(): void {
    if (this.used === 0) return;
    this.filled(this.chunk.subarray(0, this.used));
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }

  private filled(buffer: Buffer): void {
    this.full.push(this.bigEndian ? buffer.swap16() : buffer);
  }

  // Hands the filled buffers to the file; a promise when the file asks us to wait (backpressure).
  private flush(): Promise<void> | void {
    const stream = this.file.stream;
    let ready = true;
    for (const buffer of this.full) ready = stream.write(buffer);
    this.full = [];
    if (!ready) return this.drained.wait();
  }
}

// Excel's "Light red fill" of conditional formatting.
const MARK_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFFC7CE' } };
const HEADER_STYLE: Partial<ExcelJS.Style> = { font: { bold: true } };
// Identifier columns keep leading zeros only as text (docs/sheets.md: spreadsheet damage); the
// reference and postal codes too.
const TEXT_COLUMNS: ReadonlySet<CanonicalColumn> = new Set<CanonicalColumn>([
  ...IDENTIFIER_COLUMNS,
  'reference',
  'recipientAddress.postalCode',
  'bankAddress.postalCode',
]);
const TEXT_RESULT_COLUMNS: ReadonlySet<string> = new Set(RESULT_COLUMNS.filter((c) => c !== 'result.row'));

class XlsxResultsWriter implements ResultsWriter {
  readonly path: string;
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private readonly sheet: ExcelJS.Worksheet;
  // One style object per column and state, shared by all its cells: exceljs caches the style
  // id of an object it has seen, so shared objects keep styling off the per-cell cost.
  private readonly plainStyles: Partial<ExcelJS.Style>[];
  private readonly markedStyles: Partial<ExcelJS.Style>[];
  /**
   * The styles of cells with a number format of their own, by column, format and state, made
   * when first needed and shared like the others: as many as the sheet has formats per column.
   */
  private readonly formatStyles = new Map<number, Partial<ExcelJS.Style>>();
  private readonly isText: boolean[];
  private readonly drained: Drain;
  /** The sheet's layout; `formats` grows as the sheet's rows are read, before they are written. */
  private readonly sheetLayout: SheetLayout | undefined;
  private readonly canonical: (string | undefined)[];
  /** The input workbook, whose other sheets the results keep. */
  private readonly source: string | undefined;

  constructor(
    private readonly file: AtomicFile,
    private readonly layout: ResultsLayout,
    opts: ResultsWriterOptions,
    workbook: ExcelJS.stream.xlsx.WorkbookWriter,
    sheetName: string,
    /** The input workbook's sheets after the payout sheet, copied once the results are written. */
    private readonly sheetsAfter: readonly string[],
  ) {
    this.path = opts.path;
    this.drained = new Drain(file);
    this.sheetLayout = opts.layout;
    this.workbook = workbook;
    this.source = opts.workbook?.path;
    const headers = layout.headers;
    const inputColumns = layout.kept.map((input) => opts.layout?.columns[input]);
    const widths = headers.map((header, out) => {
      const input = inputColumns[out];
      if (out >= layout.kept.length) return RESULT_WIDTHS[header as ResultColumn];
      return input?.width ?? Math.min(60, Math.max(10, header.length + 2));
    });
    this.sheet = this.workbook.addWorksheet(sheetName, { views: [resultsView(layout, widths)] });
    const textInputs = new Set(
      opts.textColumns ??
        opts.inputHeaders.flatMap((header, i) => {
          const column = canonicalColumnOf(header);
          return column !== undefined && TEXT_COLUMNS.has(column) ? [i] : [];
        }),
    );
    this.isText = headers.map((header, out) => {
      const input = layout.kept[out];
      return input === undefined ? TEXT_RESULT_COLUMNS.has(header) : textInputs.has(input);
    });
    this.canonical = layout.kept.map((input) => {
      const header = opts.inputHeaders[input]!;
      return canonicalColumnOf(header) ?? header;
    });
    this.plainStyles = this.columnStyles();
    this.markedStyles = this.plainStyles.map((style) => ({ ...style, fill: MARK_FILL }));
    this.sheet.columns = headers.map((_header, out) => ({
      width: widths[out],
      hidden: inputColumns[out]?.hidden === true ? true : undefined,
      style: { ...this.plainStyles[out] },
    }));
    this.sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: headers.length } };
    const headerRow = this.sheet.addRow(headers.map(neutraliseFormula));
    headerRow.eachCell((cell) => {
      cell.style = HEADER_STYLE;
    });
    headerRow.commit();
  }

  // Styles per column: text, the column's number format, wrapping for the errors column.
  private columnStyles(): Partial<ExcelJS.Style>[] {
    const columns = this.sheetLayout?.columns;
    const kept = this.layout.kept;
    const errorsAt = kept.length + 2;
    const warningsAt = kept.length + 3;
    return this.isText.map((text, out) => {
      const input = kept[out];
      const numFmt = text ? '@' : input === undefined ? undefined : columns?.[input]?.numFmt;
      const style: Partial<ExcelJS.Style> = numFmt === undefined ? {} : { numFmt };
      if (out === errorsAt || out === warningsAt) style.alignment = WRAP;
      return style;
    });
  }

  /**
   * The style of an input cell: its column's, with the cell's own number format when it had one
   * (docs/sheets.md: each amount keeps the format it was given). Text columns stay text.
   */
  private styleOf(out: number, cell: Cell | undefined, marked: boolean): Partial<ExcelJS.Style> {
    const base = marked ? this.markedStyles[out]! : this.plainStyles[out]!;
    const format = cell?.format;
    if (format === undefined || this.isText[out]) return base;
    const key = (format * this.plainStyles.length + out) * 2 + (marked ? 1 : 0);
    let style = this.formatStyles.get(key);
    if (style === undefined) {
      const numFmt = this.sheetLayout?.formats[format];
      style = numFmt === undefined || numFmt === base.numFmt ? base : { ...base, numFmt };
      this.formatStyles.set(key, style);
    }
    return style;
  }

  write(row: ResultRecord): Promise<void> | void {
    const failure = this.file.failure;
    if (failure) throw failure;
    const { kept, outputOf } = this.layout;
    const values: (string | number | boolean | undefined)[] = [];
    for (let i = 0; i < kept.length; i++) values.push(xlsxValue(row.cells[kept[i]!]));
    const results = resultValues(row);
    values.push(row.rowNumber);
    for (let i = 1; i < results.length; i++)
      values.push(results[i] === '' ? undefined : neutraliseFormula(results[i]!));
    const added = this.sheet.addRow(values);
    const plain = this.plainStyles;
    const inputs = kept.length;
    added.eachCell((cell, column) => {
      const out = column - 1;
      cell.style = out < inputs ? this.styleOf(out, row.cells[kept[out]!], false) : plain[out]!;
    });
    if (MARKED_STATUSES.has(row.status)) {
      const marked = this.markedStyles;
      const status = kept.length + 1;
      const statusCell = added.getCell(status + 1);
      statusCell.style = marked[status]!;
      if (row.errors.length > 0) statusCell.note = noteOf(row.errors);
      for (const input of row.errorColumns) {
        const out = outputOf[input];
        if (out === undefined || out < 0) continue;
        const cell = added.getCell(out + 1);
        cell.style = this.styleOf(out, row.cells[input], true);
        if (row.errors.length > 0) cell.note = noteOf(messagesAbout(row.errors, this.canonical[out]));
      }
    }
    added.commit();
    if (this.file.stream.writableNeedDrain) return this.drained.wait();
  }

  async commit(): Promise<void> {
    try {
      this.sheet.commit();
      if (this.source !== undefined)
        for (const name of this.sheetsAfter) await copyWorksheet(this.workbook, this.source, name);
      await Promise.race([this.workbook.commit(), this.file.failed]);
    } catch (error) {
      // A failure of the file itself before this wins; aborting destroys the stream, and what
      // exceljs then says must not hide why the copy failed.
      const failure = this.file.failure;
      await this.file.abort();
      throw failure ?? error;
    }
    await this.file.commit();
  }

  async abort(): Promise<void> {
    await this.file.abort();
  }
}

type ResultColumn = (typeof RESULT_COLUMNS)[number];

// result.errors is wide and wraps, so every message of a row can be read in place.
const RESULT_WIDTHS: Record<ResultColumn, number> = {
  'result.row': 11,
  'result.status': 14,
  'result.errors': 70,
  'result.warnings': 50,
  'result.beneficiaryId': 22,
  'result.recipientId': 22,
  'result.simulationId': 22,
  'result.transactionId': 22,
};
const WRAP: Partial<ExcelJS.Alignment> = { wrapText: true, vertical: 'top' };

// Beyond this many characters of input columns, result.status and result.errors would open
// off screen (42 columns to the right); the view then opens on them instead.
const WIDE_INPUT = 100;

/**
 * The header row stays frozen. A wide sheet also freezes its first column (the reference, as a
 * rule) and opens scrolled to the result columns: status and errors are in view without
 * scrolling, and the input columns are one scroll to the left, with notes on the failing cells.
 */
export function resultsView(
  layout: ResultsLayout,
  widths: readonly number[],
): Partial<ExcelJS.WorksheetView> {
  const inputWidth = widths.slice(0, layout.kept.length).reduce((sum, width) => sum + width, 0);
  if (inputWidth <= WIDE_INPUT || layout.kept.length < 2) return { state: 'frozen', ySplit: 1 };
  const resultRow = layout.kept.length + 1;
  return { state: 'frozen', xSplit: 1, ySplit: 1, topLeftCell: `${columnLetters(resultRow - 1)}2` };
}

/** A cell note holding messages, one per line. */
function noteOf(messages: readonly string[]): ExcelJS.Comment {
  return { texts: [{ text: messages.join('\n') }] } as ExcelJS.Comment;
}

/**
 * The messages about one column: those that name it; all of them when none does (the row's
 * messages do not say which column each is about).
 */
export function messagesAbout(messages: readonly string[], column: string | undefined): readonly string[] {
  if (column === undefined) return messages;
  const about = messages.filter((message) => message.includes(column));
  return about.length > 0 ? about : messages;
}

// Numbers and booleans stay what they were; everything else is text, neutralised and within
// Excel's cell limit.
function xlsxValue(cell: Cell | undefined): string | number | boolean | undefined {
  if (cell === undefined || cell.kind === 'empty') return undefined;
  if (cell.kind === 'boolean') return cell.text === 'true';
  if (cell.kind === 'number') {
    const number = Number(cell.text);
    if (Number.isFinite(number)) return number;
  }
  const text = neutraliseFormula(cell.text);
  return text.length > MAX_CELL_CHARS ? text.slice(0, MAX_CELL_CHARS) : text;
}
