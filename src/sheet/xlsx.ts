import type { Readable } from 'node:stream';
import { SheetError } from '../errors.js';
import { columnLetters } from './column-letters.js';
import { columnLabel, HEADER_SEARCH_ROWS } from './headers.js';
import { MAX_CELL_CHARS, MAX_COLUMNS, oversizedCell } from './limits.js';
import { quoteCell } from './quote.js';
import { type Cell, EMPTY_CELL, type OpenedSheet, type RawRow, type SheetLayout } from './types.js';
import {
  type CellFormat,
  decodeOoxmlEscapes,
  findWorkbookPart,
  readCellFormats,
  readSharedStrings,
  readWorkbook,
  TextRunLimit,
  type WorkbookSheet,
  xmlParser,
} from './xlsx-parts.js';
import { openZip, type ZipArchive, type ZipEntry } from './zip.js';

/** Options of `openXlsx`: `--sheet NAME`, and which row is the header row. */
export interface XlsxOptions {
  sheetName?: string;
  /** Which row is the header row: the first of the first 10 non-empty rows it accepts. */
  isHeaderRow?: (cells: readonly string[]) => boolean;
  /**
   * Read the worksheet as it is rather than as a payout sheet: no header row, every non-empty
   * row with all its cells, and dates with their number format. The results copy the
   * workbook's other sheets this way: a title in A1 alone is no header that cuts off column B.
   */
  everyCell?: boolean;
}

const DAMAGED = 'open it in Excel (or LibreOffice) and save it again as .xlsx';

/**
 * Opens an XLSX sheet and reads its header row; `rows` streams the data rows with the
 * worksheet's row numbers, empty rows skipped. Without `--sheet`, the worksheet read is the
 * first visible one whose header row `isHeaderRow` accepts (a "Summary" sheet before
 * the payouts), else the first visible one. The header row is the first of the first 10
 * non-empty rows that `isHeaderRow` accepts (a title may sit above it), else the first. The zip
 * is read by its central directory, so shared strings are loaded before the worksheet whatever
 * the part order, and no temporary file is ever written.
 */
export async function openXlsx(file: string, opts: XlsxOptions = {}): Promise<OpenedSheet> {
  let zip: ZipArchive;
  try {
    zip = await openZip(file);
  } catch (error) {
    const message = `is not a readable XLSX workbook: it is damaged, truncated or not a zip file - ${DAMAGED}`;
    throw new SheetError(file, message, { cause: error });
  }
  const parts = await readWorkbookParts(file, zip);
  const worksheets = parts.sheets.filter((s) => s.partPath !== undefined);
  const candidates =
    opts.sheetName === undefined
      ? worksheets.filter((s) => s.state === 'visible')
      : [chooseSheet(file, parts.sheets, opts.sheetName)];
  const fallback = candidates[0] ?? worksheets[0]!;
  if (opts.isHeaderRow !== undefined) {
    for (const sheet of candidates) {
      const opened = await openWorksheet(file, zip, parts, sheet, opts.isHeaderRow, false);
      if (opened !== undefined) return opened;
    }
  }
  // No sheet has the columns: the first one's first row, so matchHeaders says what is missing.
  const opened = await openWorksheet(file, zip, parts, fallback, undefined, opts.everyCell === true);
  if (opened === undefined) {
    const message = `the sheet is empty: the first row of worksheet ${quoteCell(fallback.name)} must hold the column headers`;
    throw new SheetError(file, message);
  }
  return opened;
}

/** A worksheet opened at its header row, or undefined when no row of it is accepted as one. */
async function openWorksheet(
  file: string,
  zip: ZipArchive,
  parts: WorkbookParts,
  sheet: WorkbookSheet,
  isHeaderRow: ((cells: readonly string[]) => boolean) | undefined,
  everyCell: boolean,
): Promise<OpenedSheet | undefined> {
  const entry = sheet.partPath === undefined ? undefined : zip.entry(sheet.partPath);
  if (entry === undefined) {
    throw new SheetError(
      file,
      `the workbook is damaged: the part of worksheet ${quoteCell(sheet.name)} is missing - ${DAMAGED}`,
    );
  }
  const context: SheetContext = { ...parts.context, partPath: entry.path };
  const reader = new WorksheetReader(file, entry, context, isHeaderRow, everyCell);
  let headers: string[] | undefined;
  try {
    headers = await reader.readHeader();
  } catch (error) {
    await reader.close();
    throw error;
  }
  if (headers === undefined) {
    await reader.close();
    return undefined;
  }
  return {
    path: file,
    format: 'xlsx',
    headers,
    headerRowNumber: reader.headerRowNumber,
    dialect: { worksheet: sheet.name },
    ...(sheet.state === 'visible' ? {} : { hidden: sheet.state }),
    layout: reader.layout,
    worksheets: parts.sheets.filter((s) => s.partPath !== undefined).map((s) => s.name),
    rows: reader.rows(),
    batches: reader.batches(),
    close: () => reader.close(),
  };
}

interface SheetContext {
  sharedStrings: string[];
  dateStyles: boolean[];
  formats: CellFormat[];
  date1904: boolean;
  partPath: string;
}

interface WorkbookParts {
  sheets: WorkbookSheet[];
  context: Omit<SheetContext, 'partPath'>;
}

async function readWorkbookParts(file: string, zip: ZipArchive): Promise<WorkbookParts> {
  const workbookPath = await damagedIfThrows(file, 'the workbook', () => findWorkbookPart(zip));
  if (workbookPath === undefined) {
    throw new SheetError(
      file,
      'is a zip archive but not an Excel workbook (it has no xl/workbook.xml) - save the sheet as .xlsx or CSV UTF-8',
    );
  }
  const workbook = await damagedIfThrows(file, workbookPath, () => readWorkbook(zip, workbookPath));
  if (!workbook.sheets.some((s) => s.partPath !== undefined)) {
    throw new SheetError(file, 'the workbook has no worksheets');
  }
  const sharedStrings = await damagedIfThrows(file, workbook.sharedStringsPath, () =>
    readSharedStrings(zip, workbook.sharedStringsPath),
  );
  const formats = await damagedIfThrows(file, workbook.stylesPath, () =>
    readCellFormats(zip, workbook.stylesPath),
  );
  const dateStyles = formats.map((format) => format.isDate);
  return {
    sheets: workbook.sheets,
    context: { sharedStrings, dateStyles, formats, date1904: workbook.date1904 },
  };
}

// `--sheet NAME`, matched exactly, else ignoring case and surrounding spaces.
function chooseSheet(file: string, sheets: WorkbookSheet[], sheetName: string): WorkbookSheet {
  const wanted = sheetName.trim().toLowerCase();
  const found =
    sheets.find((s) => s.name === sheetName) ?? sheets.find((s) => s.name.trim().toLowerCase() === wanted);
  if (found === undefined) {
    throw new SheetError(
      file,
      `the workbook has no sheet named ${quoteCell(sheetName)}: its sheets are ${sheets.map((s) => quoteCell(s.name)).join(', ')}`,
    );
  }
  if (found.partPath === undefined)
    throw new SheetError(file, `the sheet ${quoteCell(found.name)} is a chart, not a worksheet`);
  return found;
}

async function damagedIfThrows<T>(
  file: string,
  part: string | undefined,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw damaged(file, part, error);
  }
}

function damaged(file: string, part: string | undefined, error: unknown, where = ''): SheetError {
  if (error instanceof SheetError) return error;
  const reason = (error as Error)?.message?.split('\n')[0] ?? String(error);
  return new SheetError(file, `the workbook is damaged (${part ?? 'zip'}: ${reason})${where} - ${DAMAGED}`, {
    cause: error,
  });
}

// `=SUM(E2:E2001)`, `SUBTOTAL(9,...)`; newer functions carry an `_xlfn.` prefix in the file.
const SUM_FORMULA = /^\s*(?:_xlfn\.)?(?:SUM|SUBTOTAL)\s*\(/i;

const TRUE_CELL: Cell = Object.freeze({ text: 'true', kind: 'boolean' }) as Cell;
const FALSE_CELL: Cell = Object.freeze({ text: 'false', kind: 'boolean' }) as Cell;

// Error values a cell can hold (ECMA-376 18.17.3 and newer Excel).
const ERROR_VALUES = new Set([
  '#NULL!',
  '#DIV/0!',
  '#VALUE!',
  '#REF!',
  '#NAME?',
  '#NUM!',
  '#N/A',
  '#GETTING_DATA',
  '#SPILL!',
  '#CALC!',
  '#FIELD!',
  '#BLOCKED!',
  '#CONNECT!',
  '#BUSY!',
  '#UNKNOWN!',
]);

/**
 * Reads worksheet XML with a SAX parser and builds RawRows directly: no object per event and
 * none per empty cell. Rows are produced in batches, one per chunk of the part.
 */
class WorksheetReader {
  private readonly stream: Readable;
  private readonly iterator: AsyncIterator<unknown>;
  private readonly parser: ReturnType<typeof xmlParser>;
  private readonly decoder = new TextDecoder('utf-8');
  private readonly limit = new TextRunLimit();
  private batch: RawRow[] = [];
  /** Widths, hidden columns and column formats from <cols>; cell formats as rows are read. */
  readonly layout: SheetLayout = { columns: [], formats: [] };
  /** By style index (`s`), the index of its number format in `layout.formats`; -1 for none. */
  private readonly formatOfStyle: number[] = [];
  private ended = false;
  private closed = false;

  // The header, once read; until then rows are collected without a known width.
  private headers: string[] | undefined;
  private width = 0;
  /** The header row's own row number, once read. */
  headerRowNumber = 0;
  // Non-empty rows looked at for the header, and whether the search gave up.
  private headerCandidates = 0;
  private noHeader = false;

  // Where the parser is.
  private inSheetData = false;
  private rowNumber = 0;
  private rowCells: Cell[] = [];
  private headerCells: (Cell | undefined)[] = [];
  private rowProblems: string[] | undefined;
  private rowHasValue = false;
  private nextColumn = 0;
  private column = 0;
  private cellType = 'n';
  private cellStyle = 0;
  private hasFormula = false;
  private inFormula = false;
  // The start of the formula's text, enough to tell a SUM (a totals row).
  private formulaHead = '';
  private hasValue = false;
  private inInline = false;
  private inPhonetic = false;
  private capturing = false;
  private value = '';
  // Between <c> and </c>: for saying where a worksheet that stops parsing breaks off.
  private inCell = false;

  constructor(
    private readonly file: string,
    entry: ZipEntry,
    private readonly context: SheetContext,
    private readonly isHeaderRow?: (cells: readonly string[]) => boolean,
    private readonly everyCell = false,
  ) {
    this.stream = entry.stream();
    this.iterator = this.stream[Symbol.asyncIterator]();
    this.parser = xmlParser({
      open: (name, attributes) => this.openTag(name, attributes),
      text: (text) => {
        if (this.capturing) this.value += text;
        else if (this.inFormula && this.formulaHead.length < 16) this.formulaHead += text;
      },
      close: (name) => this.closeTag(name),
    });
  }

  /**
   * Reads up to the header row and returns its texts (trailing blanks dropped): the first
   * non-empty row, or with `isHeaderRow` the first of the first 10 it accepts. Undefined for
   * an empty sheet or none accepted.
   */
  async readHeader(): Promise<string[] | undefined> {
    if (this.everyCell) {
      // No header: every row is data. Read on to the rows, so that <cols> (widths) is known.
      this.headers = [];
      while (!this.inSheetData && (await this.pump()));
      return this.headers;
    }
    while (this.headers === undefined && !this.noHeader && (await this.pump()));
    return this.headers;
  }

  async *rows(): AsyncGenerator<RawRow> {
    try {
      for (;;) {
        const batch = this.batch;
        this.batch = [];
        for (const row of batch) yield row;
        if (!(await this.pump())) {
          for (const row of this.batch) yield row;
          return;
        }
      }
    } finally {
      await this.close();
    }
  }

  /** The same rows as `rows`, one array per chunk of the worksheet part. */
  async *batches(): AsyncGenerator<RawRow[]> {
    try {
      for (;;) {
        const batch = this.batch;
        this.batch = [];
        if (batch.length > 0) yield batch;
        if (!(await this.pump())) {
          if (this.batch.length > 0) yield this.batch;
          return;
        }
      }
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream.destroy();
  }

  // Feeds one chunk to the parser; false when the part (or its sheetData) has ended.
  private async pump(): Promise<boolean> {
    if (this.ended || this.closed) return false;
    try {
      const next = await this.iterator.next();
      if (next.done) {
        this.parser.write(this.limit.cut(this.decoder.decode()));
        this.parser.close();
        this.ended = true;
      } else {
        this.parser.write(this.limit.cut(this.decoder.decode(next.value as Buffer, { stream: true })));
      }
    } catch (error) {
      this.ended = true;
      await this.close();
      throw damaged(this.file, this.context.partPath, error, this.whereDamaged());
    }
    if (this.ended) await this.close();
    return !this.ended;
  }

  private openTag(name: string, a: Record<string, string>): void {
    switch (name) {
      case 'c': {
        const ref = a['r'];
        this.column = ref === undefined ? this.nextColumn : columnIndexOf(ref);
        this.inCell = true;
        this.nextColumn = this.column + 1;
        this.cellType = a['t'] ?? 'n';
        const style = a['s'];
        this.cellStyle = style === undefined ? 0 : Number(style);
        this.hasFormula = false;
        this.formulaHead = '';
        this.hasValue = false;
        this.value = '';
        return;
      }
      case 'v':
        this.hasValue = true;
        this.capturing = true;
        return;
      case 'f':
        this.hasFormula = true;
        this.inFormula = true;
        this.formulaHead = '';
        return;
      case 'row': {
        const r = a['r'];
        this.rowNumber = r === undefined ? this.rowNumber + 1 : Number(r);
        this.nextColumn = 0;
        this.rowProblems = undefined;
        this.rowHasValue = false;
        if (this.headers === undefined) this.headerCells = [];
        else this.rowCells = this.everyCell ? [] : new Array<Cell>(this.width).fill(EMPTY_CELL);
        return;
      }
      case 'is':
        this.inInline = true;
        this.hasValue = true;
        return;
      case 't':
        this.capturing = this.inInline && !this.inPhonetic;
        return;
      case 'rPh':
        this.inPhonetic = true;
        return;
      case 'sheetData':
        this.inSheetData = true;
        return;
      case 'col':
        this.columnLayout(a);
        return;
    }
  }

  // <col min max width customWidth hidden style> (ECMA-376 18.3.1.13), before <sheetData>.
  private columnLayout(a: Record<string, string>): void {
    const min = Number(a['min']);
    const max = Math.min(Number(a['max'] ?? min), MAX_COLUMNS);
    if (!(min >= 1 && max >= min)) return;
    const width = Number(a['width']);
    const hidden = a['hidden'] === '1' || a['hidden'] === 'true';
    const format = this.context.formats[Number(a['style'] ?? 0)];
    const numFmt = format && !format.isDate && format.code !== '' ? format.code : undefined;
    for (let i = min - 1; i < max; i++) {
      this.layout.columns[i] = {
        ...(Number.isFinite(width) && width > 0 ? { width } : {}),
        ...(hidden ? { hidden } : {}),
        ...(numFmt !== undefined ? { numFmt } : {}),
      };
    }
  }

  /**
   * Where the number format of a cell style is in `layout.formats` (added when first seen), -1
   * when it has none: General, a date (dates become ISO text; `date` asks for a date's format
   * instead) or a style the workbook lacks. Each
   * cell keeps its own format, as the user set it cell by cell (`#,##0.00` here, `"$"#,##0.00`
   * there), as a number: a million rows cost no more than the workbook's few formats.
   */
  private formatIndex(style: number, date = false): number {
    const known = this.formatOfStyle[style];
    if (known !== undefined) return known;
    const format = this.context.formats[style];
    // Not remembered for a style the workbook lacks: a hostile file could name millions.
    if (format === undefined) return -1;
    let index = -1;
    if (format.isDate === date && format.code !== '') {
      const formats = this.layout.formats;
      index = formats.indexOf(format.code);
      if (index === -1) index = formats.push(format.code) - 1;
    }
    this.formatOfStyle[style] = index;
    return index;
  }

  private closeTag(name: string): void {
    switch (name) {
      case 'c':
        this.inCell = false;
        if (this.inSheetData) this.finishCell();
        return;
      case 'v':
      case 't':
        this.capturing = false;
        return;
      case 'f':
        this.inFormula = false;
        return;
      case 'row':
        if (this.inSheetData) this.finishRow();
        return;
      case 'is':
        this.inInline = false;
        this.cellType = 'inlineStr';
        return;
      case 'rPh':
        this.inPhonetic = false;
        return;
      case 'sheetData':
        // Nothing after sheetData holds cell values (merged ranges, hyperlinks, print settings).
        this.inSheetData = false;
        this.ended = true;
        return;
    }
  }

  private finishCell(): void {
    const cell = this.cellValue();
    if (cell === EMPTY_CELL) return;
    const column = this.column;
    const blank = cell.kind === 'empty' || (cell.text.charCodeAt(0) <= 32 && cell.text.trim() === '');
    if (this.headers === undefined) {
      if (!blank) this.rowHasValue = true;
      this.headerCells[column] = cell;
      return;
    }
    if (this.everyCell) {
      // Excel's last column is XFD; a reference past it is no cell of a sheet anyone saw.
      if (blank || column >= EXCEL_COLUMNS) return;
      this.rowHasValue = true;
      this.rowCells[column] = cell;
      return;
    }
    if (column >= this.width) {
      if (blank) return;
      this.rowHasValue = true;
      this.problem(
        `cell ${cellRef(column, this.rowNumber)} holds ${quoteCell(cell.text)} but its column has no header: add a header or clear the cell`,
      );
      return;
    }
    if (!blank) this.rowHasValue = true;
    this.rowCells[column] = cell;
    if (cell.text.length > MAX_CELL_CHARS) this.problem(oversizedCell(this.headers, column));
  }

  private finishRow(): void {
    if (!this.rowHasValue) return;
    if (this.headers === undefined) {
      if (this.noHeader) return;
      const texts = headerTexts(this.headerCells);
      if (this.isHeaderRow === undefined || this.isHeaderRow(texts)) this.setHeaders(texts);
      else if (++this.headerCandidates >= HEADER_SEARCH_ROWS) this.noHeader = true;
      else this.headerCells = [];
      return;
    }
    if (this.everyCell) {
      const cells = this.rowCells;
      for (let i = 0; i < cells.length; i++) cells[i] ??= EMPTY_CELL;
    }
    this.batch.push({ rowNumber: this.rowNumber, cells: this.rowCells, problems: this.rowProblems ?? [] });
  }

  private setHeaders(headers: string[]): void {
    const width = headers.length;
    if (width > MAX_COLUMNS) {
      throw new SheetError(
        this.file,
        `the header row (row ${this.rowNumber}) has ${width} columns - a payout sheet has at most ${MAX_COLUMNS}. Is this the right file?`,
      );
    }
    this.headers = headers;
    this.width = width;
    this.headerRowNumber = this.rowNumber;
    this.headerCells = [];
  }

  // The Cell of the current <c>, from its type, style and captured value (ECMA-376 18.3.1.4).
  private cellValue(): Cell {
    const raw = this.value;
    let cell: Cell;
    if (this.cellType === 'inlineStr') {
      cell = raw === '' ? EMPTY_CELL : { text: decodeOoxmlEscapes(raw), kind: 'string' };
    } else if (!this.hasValue || (raw === '' && this.cellType !== 'str')) {
      if (!this.hasFormula) return EMPTY_CELL;
      this.problemInCell(
        'holds a formula with no saved result - open the file in Excel and save it again, or paste the values',
      );
      return { text: '', kind: 'empty', formula: true };
    } else {
      switch (this.cellType) {
        case 's': {
          const text = this.context.sharedStrings[Number(raw)];
          if (text === undefined) {
            this.problemInCell(
              `refers to shared string ${quoteCell(raw)}, which the workbook does not have: ${DAMAGED}`,
            );
            return EMPTY_CELL;
          }
          cell = text === '' ? EMPTY_CELL : { text, kind: 'string' };
          break;
        }
        case 'str':
          cell = raw === '' ? EMPTY_CELL : { text: decodeOoxmlEscapes(raw), kind: 'string' };
          break;
        case 'b':
          cell = raw === '1' || raw === 'true' ? TRUE_CELL : FALSE_CELL;
          break;
        case 'e':
          cell = { text: raw, kind: 'string' };
          // Excel's own values as they are; any other text (a file made elsewhere) quoted, on one
          // line and without "; ", which separates a row's messages.
          this.problemInCell(
            `holds the error value ${ERROR_VALUES.has(raw) ? raw : quoteCell(raw)} - correct the formula or type the value`,
          );
          break;
        case 'd':
          cell = { text: isoOfDateText(raw), kind: 'date' };
          break;
        default:
          cell = this.numberCell(raw);
      }
    }
    if (this.hasFormula) {
      if (cell === EMPTY_CELL) return { text: '', kind: 'empty', formula: true };
      return SUM_FORMULA.test(this.formulaHead)
        ? { ...cell, formula: true, sum: true }
        : { ...cell, formula: true };
    }
    if (cell.kind === 'string' && cell.text.charCodeAt(0) === 35 /* # */ && ERROR_VALUES.has(cell.text)) {
      this.problemInCell(`holds the error value ${cell.text} - correct it or type the value`);
    }
    return cell;
  }

  private numberCell(raw: string): Cell {
    const number = Number(raw);
    if (!Number.isFinite(number)) return { text: raw, kind: 'string' };
    if (this.context.dateStyles[this.cellStyle] === true) {
      const iso = isoOfSerial(number, this.context.date1904);
      if (iso !== undefined) {
        // A copied sheet keeps the date's own format (a payout sheet reads dates as ISO text).
        const format = this.everyCell ? this.formatIndex(this.cellStyle, true) : -1;
        return format === -1 ? { text: iso, kind: 'date' } : { text: iso, kind: 'date', format };
      }
    }
    const format = this.formatIndex(this.cellStyle);
    return format === -1
      ? { text: displayedNumber(number), kind: 'number' }
      : { text: displayedNumber(number), kind: 'number', format };
  }

  /**
   * Where a worksheet that stops parsing breaks off, as Excel names it (` in row 7, column C`,
   * or ` in row 7, after column C` between cells); '' before the first row.
   */
  private whereDamaged(): string {
    if (!this.inSheetData || this.rowNumber === 0) return '';
    if (this.nextColumn === 0) return ` in row ${this.rowNumber}`;
    const column = columnLetters(this.column);
    return ` in row ${this.rowNumber}, ${this.inCell ? '' : 'after '}column ${column}`;
  }

  private problemInCell(what: string): void {
    if (this.headers === undefined) return;
    const label = this.column < this.width ? ` (${columnLabel(this.headers, this.column)})` : '';
    this.problem(`cell ${cellRef(this.column, this.rowNumber)}${label} ${what}`);
  }

  private problem(message: string): void {
    if (this.rowProblems === undefined) this.rowProblems = [message];
    else this.rowProblems.push(message);
  }
}

/** Columns A to XFD: as many as an Excel worksheet has. */
const EXCEL_COLUMNS = 16_384;

// Excel shows (and its CSV export writes) 15 significant digits; anything beyond is binary noise
// of a computed value (a formula result 300.29999999999995 is 300.3 on screen).
const EXCEL_DIGITS = 15;

/**
 * A number as Excel displays it: rounded to 15 significant digits, trailing zeros dropped
 * (300.29999999999995 → "300.3"). A whole number of 16 digits or more keeps every digit it
 * holds, so that an identifier typed as a number is still seen as damaged (rows/damage.ts).
 */
export function displayedNumber(number: number): string {
  if (Number.isInteger(number) && Math.abs(number) >= 1e15) return String(number);
  return String(Number(number.toPrecision(EXCEL_DIGITS)));
}

// A candidate header row's texts, trailing blank cells dropped.
function headerTexts(cells: readonly (Cell | undefined)[]): string[] {
  let width = cells.length;
  while (width > 0 && (cells[width - 1] === undefined || cells[width - 1]!.text.trim() === '')) width--;
  const headers: string[] = [];
  for (let i = 0; i < width; i++) headers.push(cells[i]?.text ?? '');
  return headers;
}

/** Zero-based column of a cell reference: `C5` → 2, `AA1` → 26. */
export function columnIndexOf(ref: string): number {
  let column = 0;
  for (let i = 0; i < ref.length; i++) {
    const code = ref.charCodeAt(i);
    if (code >= 65 && code <= 90) column = column * 26 + (code - 64);
    else if (code >= 97 && code <= 122) column = column * 26 + (code - 96);
    else break;
  }
  return column - 1;
}

/** Column letters of a zero-based index: 0 → `A`, 26 → `AA`. */
function cellRef(column: number, row: number): string {
  return `${columnLetters(column)}${row}`;
}

const DAY_MS = 86_400_000;
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

/** ISO text of an Excel date serial: `YYYY-MM-DD`, with `THH:MM:SS` when it has a time. */
export function isoOfSerial(serial: number, date1904: boolean): string | undefined {
  // Excel counts 1900-02-29, which never was: serials before it are one day off (1900 system).
  const epoch = date1904 ? EPOCH_1904 : serial < 60 ? EPOCH_1900 + DAY_MS : EPOCH_1900;
  const ms = epoch + Math.round(serial * 86_400) * 1000;
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return undefined;
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}

// `t="d"` cells hold ISO 8601 text already; keep the date alone when there is no time.
function isoOfDateText(text: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z?)?$/.exec(text);
  if (!match) return text;
  return match[2] === undefined || match[2] === '00:00:00' ? match[1]! : `${match[1]}T${match[2]}`;
}
