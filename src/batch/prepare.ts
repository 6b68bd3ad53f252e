import { stat } from 'node:fs/promises';
import type { ColumnIndex } from '../columns/columns.js';
import { SheetError } from '../errors.js';
import { mapRow, type PayoutRow } from '../rows/map.js';
import type { SheetNumbers } from '../rows/money.js';
import { type Payee, payeeOf } from '../rows/payee.js';
import type { RowIssue } from '../rows/types.js';
import type { CsvEncoding } from '../sheet/csv.js';
import { type HeaderMatch, headerPredicate, loadColumnsMap, matchHeaders } from '../sheet/headers.js';
import { openSheet } from '../sheet/open.js';
import { quoteCell } from '../sheet/quote.js';
import { openResultsWriter, type ResultsWriter } from '../sheet/results.js';
import { resultsPathFor } from '../sheet/results-path.js';
import type { OpenedSheet, RawRow } from '../sheet/types.js';
import { FingerprintSet, ReferenceTable } from './references.js';
import { isTotalsRow, TotalsRowCheck, type TotalsRowFinding } from './totals-row.js';

/** Where and how to read a sheet (README options `--sheet`, `--delimiter`, `--columns`). */
export interface SheetOptions {
  sheetPath: string;
  sheetName?: string;
  delimiter?: string;
  encoding?: CsvEncoding;
  columnsFile?: string;
}

/** A row after mapping and every sheet-level check: what validate writes and run sends. */
export interface PreparedRow {
  raw: RawRow;
  payout: PayoutRow;
  /** Every finding of the row: record problems, sheet rules, the service's validation messages. */
  issues: RowIssue[];
  /** Input column positions the findings are about, for marking cells in the results. */
  errorColumns: number[];
  /** Who a valid row pays (rows/payee.ts), for the approver's warnings. */
  payee?: Payee;
  /** The other rows of the sheet that pay the same payee the same amount and currency. */
  sameAs?: readonly number[];
  /**
   * Set on the sheet's totals row (totals-row.ts): not a payout, so not counted, hashed or
   * sent; its result is `skipped` with `totals.message`.
   */
  totals?: TotalsRowFinding;
}

export interface PreparedSheet {
  sheet: OpenedSheet;
  header: HeaderMatch;
  /** The rows one by one. Iterate either `rows` or `batches`, never both: they share one reader. */
  rows: AsyncIterable<PreparedRow>;
  /** The same rows in the reader's batches: one promise per batch rather than per row. */
  batches: AsyncIterable<PreparedRow[]>;
  /** Once the rows were read: each totals row that did not match the rows above it. */
  totalsMismatches: () => string[];
  /** Once the rows were read: each reference used by more than one row, with those rows. */
  repeats: () => Repeats;
  /** Once the rows were read: each payment (payee, amount, currency) on more than one row. */
  duplicates: () => Repeats;
}

/** Keys (references, or payments) met on more than one row of a sheet, with those rows, in order. */
export type Repeats = ReadonlyMap<string, readonly number[]>;

/**
 * What an earlier reading of the same rows found on later rows, which their first rows need too:
 * repeated references (every row sharing one is refused) and repeated payments (each row is a
 * possible duplicate of the others).
 */
export interface KnownRepeats {
  references?: Repeats;
  payments?: Repeats;
}

/**
 * Opens a sheet, matches its headers and streams its rows mapped and checked: the first stages
 * of the pipeline, shared by `validate` and `run`. Throws SheetError/UsageError
 * (exit 2) for a sheet that cannot be read as a whole.
 */
export async function prepareSheet(
  options: SheetOptions,
  knownRepeats?: KnownRepeats,
): Promise<PreparedSheet> {
  const columnsMap = options.columnsFile ? await loadColumnsMap(options.columnsFile) : undefined;
  const sheet = await openSheet(options.sheetPath, {
    delimiter: options.delimiter,
    encoding: options.encoding,
    sheetName: options.sheetName,
    isHeaderRow: headerPredicate(columnsMap),
  });
  let header: HeaderMatch;
  try {
    const place = {
      rowNumber: sheet.headerRowNumber,
      worksheet: sheet.dialect.worksheet,
      worksheets: sheet.worksheets,
    };
    header = matchHeaders(sheet.headers, { file: options.sheetPath, columnsMap, place });
  } catch (error) {
    await sheet.close?.();
    throw error;
  }
  const file = options.sheetPath;
  const numbers = sheetNumbers(sheet);
  const expectedRows = await expectedRowsOf(sheet);
  const rowChecker = new RowChecker(file, header.index, numbers, knownRepeats, expectedRows);
  const batchChecker = new RowChecker(file, header.index, numbers, knownRepeats, expectedRows);
  return {
    sheet,
    header,
    rows: checkRows(rowChecker, sheet.rows),
    batches: checkBatches(batchChecker, rawBatches(sheet)),
    totalsMismatches: () => [...rowChecker.totalsMismatches, ...batchChecker.totalsMismatches],
    repeats: () => (rowChecker.repeats.size > 0 ? rowChecker.repeats : batchChecker.repeats),
    duplicates: () => (rowChecker.duplicates.size > 0 ? rowChecker.duplicates : batchChecker.duplicates),
  };
}

/**
 * About how many rows a CSV sheet has, by its size (a row of the payout columns takes 200
 * bytes or more): its tables are made that size at once. Undefined for XLSX (compressed).
 */
export async function expectedRowsOf(sheet: OpenedSheet): Promise<number | undefined> {
  if (sheet.format !== 'csv') return undefined;
  try {
    return Math.floor((await stat(sheet.path)).size / 256);
  } catch {
    return undefined;
  }
}

/**
 * How a sheet writes its numbers. A semicolon-delimited CSV is what Excel writes where the comma
 * marks the decimals, which makes "1.250,00" certain; elsewhere the "." does.
 */
export function sheetNumbers(sheet: OpenedSheet): SheetNumbers {
  return { decimalComma: sheet.format === 'csv' && sheet.dialect.delimiter === ';' };
}

async function* checkRows(checker: RowChecker, rows: AsyncIterable<RawRow>): AsyncGenerator<PreparedRow> {
  for await (const raw of rows) yield checker.check(raw);
  checker.finish();
}

async function* checkBatches(
  checker: RowChecker,
  batches: AsyncIterable<RawRow[]>,
): AsyncGenerator<PreparedRow[]> {
  for await (const batch of batches) {
    const prepared: PreparedRow[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) prepared[i] = checker.check(batch[i]!);
    if (prepared.length > 0) yield prepared;
  }
  checker.finish();
}

/** The sheet's rows in batches: the reader's own, or its rows grouped. */
export function rawBatches(sheet: OpenedSheet): AsyncIterable<RawRow[]> {
  return sheet.batches ?? batchesOf(sheet.rows);
}

const BATCH_SIZE = 512;

/** Rows grouped into batches, for a reader that only streams rows one by one. */
async function* batchesOf(rows: AsyncIterable<RawRow>): AsyncGenerator<RawRow[]> {
  let batch: RawRow[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= BATCH_SIZE) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Maps and checks rows one at a time, in sheet order: the row's own findings, then the
 * sheet-level rules (a reference used twice). `finish` refuses a sheet that had no row.
 */
export class RowChecker {
  // First row of each reference. docs/sheets.md: reference is unique within the sheet; the
  // idempotency key is derived from it, so a repeat would be refused as a payment anyway.
  private firstRowOf: ReferenceTable | undefined;
  private sawRow = false;
  private readonly totals = new TotalsRowCheck();
  private readonly referenceAt: number;
  private readonly amountAt: number;
  /** Totals rows that did not match the rows above them, as guard problems. */
  readonly totalsMismatches: string[] = [];
  /** References met on more than one row, with those rows (few: only the repeated ones). */
  readonly repeats = new Map<string, number[]>();
  // The payments (payee, amount, currency) of the valid rows met so far.
  private paymentsSeen: FingerprintSet | undefined;
  /**
   * Payments met again, with the rows that met them again (the first row of each is not
   * known on a first reading: the second, given these, finds it). Few: only the repeated ones.
   */
  readonly duplicates = new Map<string, number[]>();
  /** On a second reading: the rows of each repeated payment met so far. */
  private readonly paymentRows = new Map<string, number[]>();

  constructor(
    private readonly file: string,
    private readonly index: ColumnIndex,
    private readonly numbers: SheetNumbers = { decimalComma: false },
    /**
     * What an earlier reading of the same rows found: the first row of a repeated reference is
     * refused too, since every row sharing a reference is (docs/sheets.md), and the
     * first row of a repeated payment is a possible duplicate too.
     */
    private readonly known: KnownRepeats = {},
    /** About how many rows the sheet has (its tables are made that size at once). */
    private readonly expectedRows?: number,
  ) {
    this.referenceAt = index.get('reference') ?? -1;
    this.amountAt = index.get('amount') ?? -1;
  }

  check(raw: RawRow): PreparedRow {
    const index = this.index;
    const payout = mapRow(raw, index, this.numbers);
    if (isTotalsRow(raw.cells, this.referenceAt, this.amountAt)) return this.totalsRow(raw, payout);
    this.sawRow = true;
    this.totals.add(payout);
    // Most rows have no findings: share the mapper's (empty) array rather than copy it.
    const issues: RowIssue[] =
      raw.problems.length === 0
        ? payout.issues
        : [...raw.problems.map((message) => ({ message })), ...payout.issues];
    if (payout.reference !== '') {
      const knownRows = this.known.references?.get(payout.reference);
      // A second reading knows every repeated reference with its rows: the first row of one is
      // its list's first, and no table of every reference is made again (16 MB for a million).
      // Made on the first row of a first reading: prepareSheet makes a checker it may never use.
      if (this.known.references === undefined) this.firstRowOf ??= new ReferenceTable(this.expectedRows);
      const first =
        this.firstRowOf === undefined
          ? knownRows !== undefined && knownRows[0] !== raw.rowNumber
            ? knownRows[0]
            : undefined
          : this.firstRowOf.claim(payout.reference, raw.rowNumber);
      if (first !== undefined) {
        const rows = this.repeats.get(payout.reference) ?? [first];
        rows.push(raw.rowNumber);
        this.repeats.set(payout.reference, rows);
        issues.push({
          column: 'reference',
          message: `reference ${quoteCell(payout.reference)} is already used on row ${first}: every payout needs its own reference, so this row would not be paid`,
        });
      } else {
        const again = knownRows;
        if (again !== undefined) {
          const later = again.filter((row) => row !== raw.rowNumber);
          issues.push({
            column: 'reference',
            message: `reference ${quoteCell(payout.reference)} is used again on row${later.length === 1 ? '' : 's'} ${later.slice(0, 5).join(', ')}${later.length > 5 ? ' and more' : ''}: every payout needs its own reference, so no row with it would be paid`,
          });
        }
      }
    }
    if (issues.length > 0) return { raw, payout, issues, errorColumns: errorColumnsOf(issues, index) };
    const payee = payeeOf(payout);
    if (payee === undefined) return { raw, payout, issues, errorColumns: NO_COLUMNS };
    return {
      raw,
      payout,
      issues,
      errorColumns: NO_COLUMNS,
      payee,
      sameAs: this.sameAs(payee, payout, raw.rowNumber),
    };
  }

  /**
   * The other rows paying this payee this amount in this currency: none on a first reading
   * (repeats are only noted, for the second); every one on the second, the first row too.
   */
  private sameAs(payee: Payee, payout: PayoutRow, row: number): readonly number[] | undefined {
    const amount = payout.amount?.text ?? '';
    const currency = payout.currency ?? '';
    const known = this.known.payments;
    if (known === undefined) {
      this.paymentsSeen ??= new FingerprintSet(this.expectedRows);
      if (this.paymentsSeen.add(payee.key, amount, currency)) {
        const key = paymentKey(payee, amount, currency);
        const rows = this.duplicates.get(key);
        if (rows === undefined) this.duplicates.set(key, [row]);
        else rows.push(row);
      }
      return undefined;
    }
    if (known.size === 0) return undefined;
    const key = paymentKey(payee, amount, currency);
    const later = known.get(key);
    if (later === undefined) return undefined;
    const before = this.paymentRows.get(key) ?? [];
    this.paymentRows.set(key, [...before, row]);
    const others = [...new Set([...before, ...later])].filter((other) => other !== row).sort((a, b) => a - b);
    return others.length === 0 ? undefined : others;
  }

  private totalsRow(raw: RawRow, payout: PayoutRow): PreparedRow {
    const amountCell = this.amountAt < 0 ? undefined : raw.cells[this.amountAt];
    const amountText =
      amountCell === undefined || amountCell.text.trim() === '' ? undefined : amountCell.text;
    const totals = this.totals.judge(payout, amountText);
    if (totals.mismatch !== undefined) this.totalsMismatches.push(totals.mismatch);
    return { raw, payout, issues: NO_ISSUES, errorColumns: NO_COLUMNS, totals };
  }

  /** Called after the last row. */
  finish(): void {
    // A sheet of headers alone pays nobody: most likely the wrong file or an export gone wrong,
    // and a cron job should alert rather than report success.
    if (!this.sawRow) {
      throw new SheetError(this.file, 'has column headers but no payout rows: is this the right file?');
    }
  }
}

const NO_COLUMNS: number[] = [];
const NO_ISSUES: RowIssue[] = [];

function errorColumnsOf(issues: readonly RowIssue[], index: ColumnIndex): number[] {
  const columns: number[] = [];
  for (const issue of issues) {
    const position = issue.column === undefined ? undefined : index.get(issue.column as never);
    if (position !== undefined && !columns.includes(position)) columns.push(position);
  }
  return columns;
}

/** A payment as the duplicates of a sheet are keyed: payee, amount and currency. */
function paymentKey(payee: Payee, amount: string, currency: string): string {
  return `${payee.key}\n${amount}\n${currency}`;
}

/**
 * The results writer of a prepared sheet: same format and delimiter as the input, at `--out`
 * or the default `<sheet dir>/<sheet name>.results.<ext>`.
 */
/** The encoding and mark of CSV results for a sheet read in `dialect`. */
export function resultsEncodingOf(dialect: { encoding?: string; bom?: boolean }): {
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be';
  bom: boolean;
} {
  if (dialect.encoding === 'utf-16le' || dialect.encoding === 'utf-16be')
    return { encoding: dialect.encoding, bom: true };
  if (dialect.encoding === 'windows-1252' || dialect.encoding === 'macintosh')
    return { encoding: 'utf-8', bom: true };
  return { encoding: 'utf-8', bom: dialect.bom ?? false };
}

export function openResultsFor(
  prepared: PreparedSheet,
  options: { sheetPath: string; outPath?: string; rehearsal?: boolean },
): Promise<ResultsWriter> {
  return openResultsWriter({
    path: options.outPath ?? resultsPathFor(options.sheetPath, prepared.sheet.format, options.rehearsal),
    sheetPath: options.sheetPath,
    format: prepared.sheet.format,
    inputHeaders: prepared.sheet.headers,
    delimiter: prepared.sheet.dialect.delimiter,
    // docs/sheets.md "The results file": CSV results keep the sheet's Unicode encoding and its
    // mark (a BOM only if a UTF-8 sheet had one; UTF-16 with its BOM); a windows-1252 or
    // macroman sheet gets UTF-8 with a BOM, which spreadsheet programs open with the accents
    // intact and which holds every character of a message.
    ...resultsEncodingOf(prepared.sheet.dialect),
    layout: prepared.sheet.layout,
    // XLSX results keep the workbook's other sheets and the payout sheet's name.
    ...(prepared.sheet.format === 'xlsx' && prepared.sheet.dialect.worksheet !== undefined
      ? {
          workbook: {
            path: options.sheetPath,
            sheet: prepared.sheet.dialect.worksheet,
            sheets: prepared.sheet.worksheets ?? [prepared.sheet.dialect.worksheet],
          },
        }
      : {}),
  });
}
