import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { SheetError, UsageError } from '../errors.js';
import { CANONICAL_COLUMNS, type CanonicalColumn, REQUIRED_COLUMNS } from '../rows/columns.js';

/** How a sheet's header row maps onto the canonical columns of PRODUCT.md ("The sheet"). */
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

// PRODUCT.md "The sheet": matching ignores case, spaces, underscores, hyphens and dots.
const IGNORED_IN_NAMES = /[\s_.-]+/g;

/** A header reduced to what matching compares: `Routing Number` → `routingnumber`. */
export function normaliseHeader(header: string): string {
  return header.replace(IGNORED_IN_NAMES, '').toLowerCase();
}

const CANONICAL_BY_NORMALISED: ReadonlyMap<string, CanonicalColumn> = new Map(
  CANONICAL_COLUMNS.map((column) => [normaliseHeader(column), column]),
);

/** The canonical column a header means by PRODUCT.md's matching rule, without `--columns`. */
export function canonicalColumnOf(header: string): CanonicalColumn | undefined {
  return CANONICAL_BY_NORMALISED.get(normaliseHeader(header));
}

/** True for `result.*` headers (PRODUCT.md: ignored on input), whatever their case. */
export function isResultHeader(header: string): boolean {
  return /^result\./i.test(header.trim());
}

/** How a column is named in messages: its header in quotes, or `(column 7)` when blank. */
export function columnLabel(headers: readonly string[], index: number): string {
  const header = headers[index]?.trim() ?? '';
  return header === '' ? `(column ${index + 1})` : `"${header}"`;
}

/**
 * Matches the header row onto the canonical columns. Throws SheetError (exit 2) naming every
 * missing required column and every pair of headers that mean the same column.
 */
export function matchHeaders(
  headers: readonly string[],
  opts: { file: string; columnsMap?: ReadonlyMap<string, string> },
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
      unknown.push(header);
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
      const found = headers.filter((h) => h.trim() !== '').map((h) => `"${h.trim()}"`);
      problems.push(
        `missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: the first row must hold the headers ${REQUIRED_COLUMNS.join(', ')} (case, spaces, underscores, hyphens and dots do not matter - --columns FILE maps other names) - the header row holds ${found.length > 0 ? found.slice(0, 12).join(', ') + (found.length > 12 ? ', ...' : '') : 'nothing'}`,
      );
    }
    throw new SheetError(opts.file, problems.join('; '));
  }
  return { index, unknown, ignored };
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
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new UsageError(`--columns ${file}: ${reason}`, { cause: error });
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
