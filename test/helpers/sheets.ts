/**
 * Payout sheets for the `payouts run` integration tests: the clean sample's rows (all seven
 * rails, an integrator-level recipient, payees shared by several rows) and a generator of any
 * number of valid rows cloned from them, with payees shared by a few consecutive rows each.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/** One sheet or results row by column name. */
export type SheetRow = Record<string, string>;

export const SAMPLES_DIR = path.resolve(import.meta.dirname, '../../samples');
export const CLEAN_SAMPLE = path.join(SAMPLES_DIR, 'payouts-clean.csv');

/** Parses CSV text (a sheet or a results file; a BOM is skipped) into rows by header. */
export function parseCsv(text: string | Buffer): SheetRow[] {
  return parse(text, { columns: true, bom: true }) as SheetRow[];
}

/** The rows of a CSV file by header. */
export async function readCsv(file: string): Promise<SheetRow[]> {
  return parseCsv(await readFile(file));
}

/** The headers of the clean sample, in order: every canonical column. */
export const SAMPLE_COLUMNS: readonly string[] = Object.keys(parseCsv(readFileSync(CLEAN_SAMPLE))[0] ?? {});

/** The clean sample's twelve rows. */
export function sampleRows(): SheetRow[] {
  return parseCsv(readFileSync(CLEAN_SAMPLE));
}

/** Writes rows as CSV with the given columns (the sample's by default). */
export async function writeSheet(
  file: string,
  rows: readonly SheetRow[],
  columns: readonly string[] = SAMPLE_COLUMNS,
): Promise<void> {
  const lines = [columns, ...rows.map((row) => columns.map((c) => row[c] ?? ''))];
  await writeFile(file, `${lines.map((cells) => cells.map(csvCell).join(',')).join('\r\n')}\r\n`);
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Name columns that identify a payee: changing them makes a new beneficiary and recipient. */
const NAME_COLUMNS = ['beneficiaryName', 'individualName', 'businessName', 'receiverName'] as const;

/** A payee number as letters (names are free text, but letters read like a name). */
function letters(n: number): string {
  let out = '';
  let rest = n;
  do {
    out = String.fromCharCode(97 + (rest % 26)) + out;
    rest = Math.floor(rest / 26);
  } while (rest > 0);
  return `Q${out}`;
}

export interface GenerateOptions {
  /** Prefix of every reference. */
  prefix?: string;
  /** Consecutive rows paying the same payee (same beneficiary and recipient). */
  rowsPerPayee?: number;
}

/**
 * `count` valid rows cycling through the sample's rows (seven rails, one integrator-level),
 * each block of `rowsPerPayee` rows paying one payee of its own.
 */
export function generateRows(count: number, options: GenerateOptions = {}): SheetRow[] {
  const templates = sampleRows();
  const prefix = options.prefix ?? 'GEN';
  const perPayee = options.rowsPerPayee ?? 3;
  const rows: SheetRow[] = [];
  for (let i = 0; i < count; i += 1) {
    const payee = Math.floor(i / perPayee);
    const row = { ...templates[payee % templates.length]! };
    const suffix = letters(payee);
    for (const column of NAME_COLUMNS) if (row[column]) row[column] = `${row[column]} ${suffix}`;
    if (row['beneficiaryEmail'])
      row['beneficiaryEmail'] = `${suffix.toLowerCase()}.${row['beneficiaryEmail']}`;
    row['reference'] = `${prefix}-${String(i + 1).padStart(6, '0')}`;
    row['amount'] = `${(i % 997) + 1}.${String((i * 37) % 100).padStart(2, '0')}`;
    rows.push(row);
  }
  return rows;
}

/** The columns of a sheet row that hold full account numbers (logs must mask them). */
export const ACCOUNT_COLUMNS = ['accountNumber', 'iban', 'clabe', 'bankAccount'] as const;
