import { columnLabel } from './headers.js';

/** A header row wider than this is not a payout sheet (issue 2, malformed inputs). */
export const MAX_COLUMNS = 1000;

/** Excel's limit for the text of one cell. */
export const MAX_CELL_CHARS = 32_767;

/** The row problem for a cell longer than Excel allows. */
export function oversizedCell(headers: readonly string[], index: number, length: number): string {
  return `column ${columnLabel(headers, index)} holds ${length.toLocaleString('en-US')} characters - a cell holds at most ${MAX_CELL_CHARS.toLocaleString('en-US')} (Excel's limit): shorten it`;
}
