import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { CANONICAL_COLUMNS, type CanonicalColumn, REQUIRED_COLUMNS } from '../columns/columns.js';
import { SheetError, UsageError } from '../errors.js';
import { boundCell, quoteCell } from './quote.js';
import { unreadableReason } from './unreadable.js';

/** How a sheet's header row maps onto the canonical columns (docs/sheets.md). */
export interface HeaderMatch {
  /** Cell index of each canonical column the sheet has. */
  index: Map<CanonicalColumn, number>;
  /** Headers that match no column, as the sheet spells them (a blank one as `(column 7)`). */
  unknown: string[];
  /** Indexes of `result.*` columns, ignored on input so a results file can be fed back. */
  ignored: number[];
}

/** `--columns FILE`: their header (normalised) → canonical column. */
export type ColumnsMap = ReadonlyMap<string, CanonicalColumn>;

// docs/sheets.md: matching ignores case, spaces, underscores, hyphens and dots.
const IGNORED_IN_NAMES = /[\s_.-]+/g;

/** A header reduced to what matching compares: `Routing Number` → `routingnumber`. */
export function normaliseHeader(header: string): string {
  return header.replace(IGNORED_IN_NAMES, '').toLowerCase();
}

const CANONICAL_BY_NORMALISED: ReadonlyMap<string, CanonicalColumn> = new Map(
  CANONICAL_COLUMNS.map((column) => [normaliseHeader(column), column]),
);

/**
 * The canonical column a header means by the header matching rule (docs/sheets.md), without
 * `--columns`.
 */
export function canonicalColumnOf(header: string): CanonicalColumn | undefined {
  return CANONICAL_BY_NORMALISED.get(normaliseHeader(header));
}

/**
 * True for `result.*` headers (ignored on input, so a results file can be fed back), whatever
 * their case.
 */
export function isResultHeader(header: string): boolean {
  return /^result\./i.test(header.trim());
}

/**
 * How a column is named in messages: its header in quotes (one line, cut to ~80 characters),
 * or `(column 7)` when blank.
 */
export function columnLabel(headers: readonly string[], index: number): string {
  const header = headers[index]?.trim() ?? '';
  return header === '' ? `(column ${index + 1})` : quoteCell(header);
}

/** Where the header row was found, for messages: `row 3 of worksheet "Payouts"`, and the other sheets. */
export interface HeaderPlace {
  rowNumber?: number;
  worksheet?: string;
  /** Every worksheet of the workbook, in its order. */
  worksheets?: readonly string[];
}

/** Rows searched for the header row when a title sits above it. */
export const HEADER_SEARCH_ROWS = 10;

/**
 * Whether a row can be the header row: it holds every required column (by the header
 * matching rule, or `--columns`). The readers look for such a row in the first HEADER_SEARCH_ROWS.
 */
export function headerPredicate(
  columnsMap?: ReadonlyMap<string, string>,
): (cells: readonly string[]) => boolean {
  const map = columnsMap && normaliseColumnsMap(columnsMap);
  return (cells) => {
    const found = new Set<CanonicalColumn>();
    for (const cell of cells) {
      const normalised = normaliseHeader(cell);
      const column = map?.get(normalised) ?? CANONICAL_BY_NORMALISED.get(normalised);
      if (column !== undefined) found.add(column);
    }
    return REQUIRED_COLUMNS.every((column) => found.has(column));
  };
}

/**
 * Matches the header row onto the canonical columns. Throws SheetError (exit 2) naming every
 * missing required column and every pair of headers that mean the same column.
 */
export function matchHeaders(
  headers: readonly string[],
  opts: { file: string; columnsMap?: ReadonlyMap<string, string>; place?: HeaderPlace },
): HeaderMatch {
  const columnsMap = opts.columnsMap && normaliseColumnsMap(opts.columnsMap);
  const index = new Map<CanonicalColumn, number>();
  const unknown: string[] = [];
  const ignored: number[] = [];
  const clashes: string[] = [];
  // Blank cells after the last named header are empty columns a spreadsheet exported, not data.
  let lastNamed = headers.length - 1;
  while (lastNamed >= 0 && headers[lastNamed]!.trim() === '') lastNamed--;

  for (let i = 0; i <= lastNamed; i++) {
    const header = headers[i]!;
    if (isResultHeader(header)) {
      ignored.push(i);
      continue;
    }
    if (header.trim() === '') {
      unknown.push(`(column ${i + 1})`);
      continue;
    }
    const normalised = normaliseHeader(header);
    const column = columnsMap?.get(normalised) ?? CANONICAL_BY_NORMALISED.get(normalised);
    if (column === undefined) {
      unknown.push(boundCell(header.trim()));
      continue;
    }
    const earlier = index.get(column);
    if (earlier !== undefined) {
      clashes.push(
        `the headers ${columnLabel(headers, earlier)} (column ${earlier + 1}) and ${columnLabel(headers, i)} (column ${i + 1}) both mean the column ${column}: keep one of them, or rename the other`,
      );
      continue;
    }
    index.set(column, i);
  }

  const missing = REQUIRED_COLUMNS.filter((column) => !index.has(column));
  if (missing.length > 0 || clashes.length > 0) {
    const problems = [...clashes];
    if (missing.length > 0) {
      const found = headers.filter((h) => h.trim() !== '').map((h) => quoteCell(h.trim()));
      const holds =
        found.length > 0 ? found.slice(0, 12).join(', ') + (found.length > 12 ? ', ...' : '') : 'nothing';
      problems.push(
        `missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}${placeText(opts.place)}: the header row (the first row, or one of the first ${HEADER_SEARCH_ROWS} below a title) must hold the headers ${REQUIRED_COLUMNS.join(', ')} (case, spaces, underscores, hyphens and dots do not matter, and --columns FILE maps other names). The header row read holds ${holds}${otherSheetsText(opts.place)}`,
      );
    }
    // One line: the messages are joined with " and ", never "; " (results files split on it).
    throw new SheetError(opts.file, problems.join(', and '));
  }
  return { index, unknown, ignored };
}

// ` in worksheet "Summary" (row 1)`: which sheet and row the headers were read from.
function placeText(place: HeaderPlace | undefined): string {
  if (place === undefined) return '';
  const sheet = place.worksheet === undefined ? '' : ` in worksheet ${quoteCell(place.worksheet)}`;
  const row = place.rowNumber === undefined ? '' : ` (row ${place.rowNumber})`;
  return `${sheet}${row}`;
}

// `. The workbook's other sheets ("Payouts", "Notes") do not have them either: ...`
function otherSheetsText(place: HeaderPlace | undefined): string {
  if (place?.worksheets === undefined || place.worksheet === undefined) return '';
  const others = place.worksheets.filter((name) => name !== place.worksheet);
  if (others.length === 0) return '';
  const names = others
    .slice(0, 12)
    .map((name) => quoteCell(name))
    .join(', ');
  return `. The workbook's other sheets (${names}${others.length > 12 ? ', ...' : ''}) do not have them either within their first ${HEADER_SEARCH_ROWS} rows: fix the headers, or name the sheet with --sheet`;
}

/**
 * Reads `--columns FILE`: a JSON object `{ "Their header": "canonicalColumn" }` or a two-column
 * CSV `header,column`. Throws UsageError (exit 2) for an unreadable file or an unknown column.
 */
export async function loadColumnsMap(file: string): Promise<ColumnsMap> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--columns ${file}: ${unreadableReason(error)}`, { cause: error });
  }
  text = text.replace(/^\uFEFF/, '');
  const pairs = isJson(file, text) ? pairsFromJson(file, text) : pairsFromCsv(file, text);

  const map = new Map<string, CanonicalColumn>();
  const unknown: string[] = [];
  for (const [theirs, target] of pairs) {
    const column = canonicalColumnOf(target);
    if (column === undefined) {
      unknown.push(`"${target}" (for "${theirs}")`);
      continue;
    }
    const key = normaliseHeader(theirs);
    const before = map.get(key);
    if (before !== undefined && before !== column) {
      throw new UsageError(
        `--columns ${file}: the header "${theirs}" is mapped twice, to ${before} and to ${column}`,
      );
    }
    map.set(key, column);
  }
  if (unknown.length > 0) {
    throw new UsageError(
      `--columns ${file}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} - the columns are: ${CANONICAL_COLUMNS.join(', ')}`,
    );
  }
  return map;
}

// Keys of a map built by hand may be spelled as in the sheet; values must name real columns.
function normaliseColumnsMap(columnsMap: ReadonlyMap<string, string>): Map<string, CanonicalColumn> {
  const map = new Map<string, CanonicalColumn>();
  for (const [theirs, target] of columnsMap) {
    const column = canonicalColumnOf(target);
    if (column === undefined) throw new UsageError(`--columns: unknown column "${target}" (for "${theirs}")`);
    map.set(normaliseHeader(theirs), column);
  }
  return map;
}

function isJson(file: string, text: string): boolean {
  return path.extname(file).toLowerCase() === '.json' || text.trimStart().startsWith('{');
}

function pairsFromJson(file: string, text: string): [string, string][] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--columns ${file}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `--columns ${file}: expected a JSON object like { "Their header": "routingNumber" }`,
    );
  }
  return Object.entries(value).map(([theirs, target]) => {
    if (typeof target !== 'string') {
      throw new UsageError(`--columns ${file}: the value for "${theirs}" must be a column name in quotes`);
    }
    return [theirs, target];
  });
}

function pairsFromCsv(file: string, text: string): [string, string][] {
  let records: string[][];
  try {
    records = parseCsv(text, { skip_empty_lines: true, relax_column_count: true, trim: true });
  } catch (error) {
    throw new UsageError(`--columns ${file}: not a readable CSV (${(error as Error).message})`, {
      cause: error,
    });
  }
  const pairs: [string, string][] = [];
  records.forEach((record, i) => {
    if (record.length !== 2) {
      throw new UsageError(
        `--columns ${file}: line ${i + 1} has ${record.length} fields - each line must be "their header,column"`,
      );
    }
    const [theirs, target] = record as [string, string];
    // An optional title line `header,column`.
    if (i === 0 && normaliseHeader(theirs) === 'header' && normaliseHeader(target) === 'column') return;
    pairs.push([theirs, target]);
  });
  return pairs;
}
