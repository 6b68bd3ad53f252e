/**
 * A CSV record as the results file writes it: cells joined by the delimiter, then LF; a cell
 * is quoted when it holds the delimiter, a double quote or a line break (a bare CR or LF too:
 * unquoted, other CSV readers end the row there, and the rest of the cell would start a row that
 * escaped neutralisation), with its quotes doubled. These are the rules csv-stringify applies
 * with the options the results file used (RFC 4180 quoting, `quote_record_delimiter`), and
 * test/sheet/csv-record.test.ts holds the two to the same output. Written here because the
 * library's general core (casting, options per field, separators of several characters) took
 * a quarter of a million-row validate's main thread, through an undocumented entry point.
 */

/** Encodes records for one delimiter (a single character, as `--delimiter` allows). */
export class CsvRecordEncoder {
  private readonly special: RegExp;

  constructor(private readonly delimiter: string) {
    this.special = new RegExp(`["\\r\\n]|${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  }

  /** The record's text, its LF included. */
  record(cells: readonly string[]): string {
    let text = '';
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]!;
      if (i > 0) text += this.delimiter;
      text += this.special.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
    }
    return `${text}\n`;
  }
}
