/** What kind of value the file stored in a cell; CSV cells are always `string` or `empty`. */
export type CellKind = 'string' | 'number' | 'boolean' | 'date' | 'empty';

/**
 * A cell as the sheet gave it. `text` is the value as text: for XLSX numbers the shortest
 * decimal form Excel displays (15 significant digits, `displayedNumber`), booleans `true`/`false`, dates ISO 8601 `YYYY-MM-DD` (or with
 * time when there is one); formulas carry their cached result and `formula: true`.
 */
export interface Cell {
  text: string;
  kind: CellKind;
  formula?: boolean;
  /** The formula is a SUM (or SUBTOTAL): the mark of a totals row. */
  sum?: boolean;
  /**
   * XLSX numbers: the number format of the cell's own style, as its index in the sheet's
   * `layout.formats` (a small number, not the format's text, so a row carries no more than it
   * did); absent when the cell has none (General), and then its column's format applies.
   */
  format?: number;
}

/** One data row with its row number as the user sees it in the sheet (header = row 1 for CSV). */
export interface RawRow {
  rowNumber: number;
  /** Cells by header position; a short row is padded with empty cells. */
  cells: Cell[];
  /** What is wrong with the row as a record (wrong number of fields, oversized cell). */
  problems: string[];
  /**
   * CSV: the first row whose quote inside an unquoted cell (12" pipe) was read as a character,
   * as spreadsheet programs do; the summary names it once.
   */
  strayQuote?: true;
}

export type SheetFormat = 'csv' | 'xlsx';

/** How the user laid out one column of an XLSX sheet, kept in the results file. */
export interface ColumnLayout {
  /** Width in characters, when the sheet set one. */
  width?: number;
  hidden?: boolean;
  /** Number format code of the column's own style (`#,##0.00`), for its cells without one. */
  numFmt?: string;
}

/**
 * The layout of an XLSX sheet, captured while it is read so that the results file can keep it
 * without opening the sheet again (`run` reads the sheet once). Widths, hidden columns and the
 * columns' formats are known when the sheet is opened; `formats` grows as rows are read.
 */
export interface SheetLayout {
  /** By header position. */
  columns: ColumnLayout[];
  /**
   * Every distinct number format code of the sheet's number cells, once each: a cell's
   * `format` is its index here. As many as the workbook has styles at most, however many rows.
   */
  formats: string[];
}

/** An opened sheet: its headers and a stream of its data rows. Knows nothing of payouts. */
export interface OpenedSheet {
  path: string;
  format: SheetFormat;
  headers: string[];
  /** The sheet's own row number of the header row (1 unless a title sits above it). */
  headerRowNumber?: number;
  /** For CSV: encoding and delimiter found, and whether it began with a BOM; for XLSX: the worksheet name. */
  dialect: { encoding?: string; delimiter?: string; bom?: boolean; worksheet?: string };
  /** XLSX: set when the worksheet is hidden in the workbook (a copy of it stays hidden). */
  hidden?: 'hidden' | 'veryHidden';
  /** XLSX: every worksheet of the workbook, in its order, for messages that name the others. */
  worksheets?: string[];
  rows: AsyncIterable<RawRow>;
  /** XLSX only: column widths, hidden columns and number formats. */
  layout?: SheetLayout;
  /**
   * The same rows in arrays, as the reader produces them (one per chunk of the file), so that a
   * caller pays one promise per batch rather than per row. Iterate either `rows` or `batches`,
   * never both: they share one reader.
   */
  batches?: AsyncIterable<RawRow[]>;
  /**
   * Releases the file when the caller stops before the end of `rows` without iterating them
   * (for example when the headers are refused). Reading `rows` (or `batches`) to the end, or
   * leaving a `for await` early, releases it too. Safe to call more than once.
   */
  close?: () => Promise<void>;
}

export const EMPTY_CELL: Cell = Object.freeze({ text: '', kind: 'empty' }) as Cell;
