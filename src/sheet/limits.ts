import { columnLabel } from './headers.js';

/** A header row wider than this is not a payout sheet (malformed inputs). */
export const MAX_COLUMNS = 1000;

/** Excel's limit for the text of one cell. */
export const MAX_CELL_CHARS = 32_767;

/**
 * Longest run of text between two tags an XLSX part may feed the XML parser (a 450 MB
 * cell took 1.97 GB). Longer runs are cut: enough is kept that the cell still reads as longer
 * than MAX_CELL_CHARS even when every character is written as an entity (`&quot;`, `&#x1F600;`).
 */
export const MAX_XML_TEXT_RUN = 8 * MAX_CELL_CHARS;

/**
 * The row problem for a cell longer than Excel allows; `length` when it is known (CSV), else
 * the cell was cut while it was read (XLSX, MAX_XML_TEXT_RUN).
 */
export function oversizedCell(headers: readonly string[], index: number, length?: number): string {
  const holds =
    length === undefined
      ? `more than ${MAX_CELL_CHARS.toLocaleString('en-US')}`
      : length.toLocaleString('en-US');
  return `column ${columnLabel(headers, index)} holds ${holds} characters, but a cell holds at most ${MAX_CELL_CHARS.toLocaleString('en-US')} (Excel's limit): shorten it`;
}
