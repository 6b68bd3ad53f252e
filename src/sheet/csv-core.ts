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

/** A parser core with these options; throws when the installed csv-parse has none. */
export function csvCore(options: Options): CsvCore {
  const core = (new Parser(options) as unknown as { api?: Partial<CsvCore> }).api;
  if (typeof core?.parse !== 'function')
    throw new Error('the installed csv-parse has no parser core (Parser#api.parse): reinstall payouts');
  return core as CsvCore;
}
