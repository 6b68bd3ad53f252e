/**
 * The one place payouts reaches inside csv-parse. Its documented interfaces are a stream and a
 * whole-text function; the stream costs a fifth of the reading time in objects and callbacks,
 * so the reader feeds csv-parse's parser core (`Parser#api`, what its stream wraps) directly:
 * chunks in, records out, errors returned, not thrown. That core is not a documented API, so it
 * is reached only here, checked when made, and held to its behaviour by
 * test/sheet/csv-core.test.ts: a csv-parse release that changes it fails that test, not a
 * user's sheet.
 */
import { type CsvError, type Options, Parser } from 'csv-parse';

/**
 * Every line ending a spreadsheet program accepts, for `record_delimiter`: CRLF first, so that it
 * is one ending and not CR then LF.
 */
export const LINE_ENDINGS: readonly string[] = Object.freeze(['\r\n', '\n', '\r']);

/** csv-parse's parser core. */
export interface CsvCore {
  /**
   * Parses a chunk (`undefined` with `end` to flush the last record), handing each record to
   * `push`; returns the error that stopped it, if any.
   */
  parse(
    chunk: Buffer | undefined,
    end: boolean,
    push: (record: string[]) => void,
    close: () => void,
  ): CsvError | undefined;
}

/** The core's own test for a record delimiter at `pos`: its length, or 0. */
type RecordDelimiterTest = (chr: number | undefined, buf: Buffer, pos: number) => number;

/**
 * The three line endings, tested in two comparisons: csv-parse tries each delimiter of a list
 * in turn on every byte outside quotes, which made the parser core a tenth slower with three
 * than with one. The core keeps a byte of look-ahead for CRLF (its longest delimiter), so
 * `buf[pos + 1]` is there except at the end of the input, where a CR is a line ending alone.
 */
const lineEndingAt: RecordDelimiterTest = (chr, buf, pos) =>
  chr === 10 ? 1 : chr === 13 ? (buf[pos + 1] === 10 ? 2 : 1) : 0;

/** A parser core with these options; throws when the installed csv-parse has none. */
export function csvCore(options: Options): CsvCore {
  const core = (new Parser(options) as unknown as { api?: Partial<CsvCore> }).api;
  if (typeof core?.parse !== 'function')
    throw new Error('the installed csv-parse has no parser core (Parser#api.parse): reinstall payouts');
  // Only a speed-up: without the hook, csv-parse's own test of the same list reads the same records.
  const hooks = core as { __isRecordDelimiter?: RecordDelimiterTest };
  if (options.record_delimiter === LINE_ENDINGS && typeof hooks.__isRecordDelimiter === 'function')
    hooks.__isRecordDelimiter = lineEndingAt;
  return core as CsvCore;
}
