import { SheetError } from '../errors.js';
import type { ColumnIndex } from '../rows/columns.js';
import { mapRow, type PayoutRow } from '../rows/map.js';
import type { RowIssue } from '../rows/types.js';
import { type HeaderMatch, loadColumnsMap, matchHeaders } from '../sheet/headers.js';
import { openSheet } from '../sheet/open.js';
import type { OpenedSheet, RawRow } from '../sheet/types.js';
import { ReferenceTable } from './references.js';

/** Where and how to read a sheet (PRODUCT.md options `--sheet`, `--delimiter`, `--columns`). */
export interface SheetOptions {
  sheetPath: string;
  sheetName?: string;
  delimiter?: string;
  encoding?: 'utf8' | 'utf16le' | 'latin1';
  columnsFile?: string;
}

/** A row after mapping and every sheet-level check: what validate writes and run sends. */
export interface PreparedRow {
  raw: RawRow;
  payout: PayoutRow;
  /** Every finding of the row: record problems, sheet rules, SPEC.md 7.2 messages. */
  issues: RowIssue[];
  /** Input column positions the findings are about, for marking cells in the results. */
  errorColumns: number[];
}

export interface PreparedSheet {
  sheet: OpenedSheet;
  header: HeaderMatch;
  rows: AsyncIterable<PreparedRow>;
}

/**
 * Opens a sheet, matches its headers and streams its rows mapped and checked: the first stages
 * of the pipeline (STYLE.md), shared by `validate` and `run`. Throws SheetError/UsageError
 * (exit 2) for a sheet that cannot be read as a whole.
 */
export async function prepareSheet(options: SheetOptions): Promise<PreparedSheet> {
  const columnsMap = options.columnsFile ? await loadColumnsMap(options.columnsFile) : undefined;
  const sheet = await openSheet(options.sheetPath, {
    delimiter: options.delimiter,
    encoding: options.encoding,
    sheetName: options.sheetName,
  });
  let header: HeaderMatch;
  try {
    header = matchHeaders(sheet.headers, { file: options.sheetPath, columnsMap });
  } catch (error) {
    await sheet.close?.();
    throw error;
  }
  return { sheet, header, rows: checkRows(options.sheetPath, sheet.rows, header.index) };
}

async function* checkRows(
  file: string,
  rows: AsyncIterable<RawRow>,
  index: ColumnIndex,
): AsyncGenerator<PreparedRow> {
  // First row of each reference. PRODUCT.md: reference is unique within the sheet; the
  // idempotency key is derived from it, so a repeat would be refused as a payment anyway.
  const firstRowOf = new ReferenceTable();
  let sawRow = false;
  for await (const raw of rows) {
    sawRow = true;
    const payout = mapRow(raw, index);
    // Most rows have no findings: share the mapper's (empty) array rather than copy it.
    const issues: RowIssue[] =
      raw.problems.length === 0
        ? payout.issues
        : [...raw.problems.map((message) => ({ message })), ...payout.issues];
    if (payout.reference !== '') {
      const first = firstRowOf.claim(payout.reference, raw.rowNumber);
      if (first !== undefined)
        issues.push({
          column: 'reference',
          message: `reference "${payout.reference}" is already used on row ${first}: every payout needs its own reference, so this row would not be paid`,
        });
    }
    yield {
      raw,
      payout,
      issues,
      errorColumns: issues.length === 0 ? NO_COLUMNS : errorColumnsOf(issues, index),
    };
  }
  // A sheet of headers alone pays nobody: most likely the wrong file or an export gone wrong,
  // and a cron job should alert rather than report success.
  if (!sawRow) {
    throw new SheetError(file, 'has column headers but no payout rows: is this the right file?');
  }
}

const NO_COLUMNS: number[] = [];

function errorColumnsOf(issues: readonly RowIssue[], index: ColumnIndex): number[] {
  const columns: number[] = [];
  for (const issue of issues) {
    const position = issue.column === undefined ? undefined : index.get(issue.column as never);
    if (position !== undefined && !columns.includes(position)) columns.push(position);
  }
  return columns;
}
