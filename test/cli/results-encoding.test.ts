/**
 * The results file's encoding (docs/sheets.md "The results file"): a windows-1252 or macroman
 * sheet gets its results in UTF-8 with a BOM, which Excel opens with the accents intact; a UTF-8
 * sheet keeps its mark (a BOM only if it had one), and a UTF-16 sheet stays UTF-16 with its BOM.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testDir } from '../helpers/payouts.js';
import { parseCsv, type SheetRow, sampleRows } from '../helpers/sheets.js';

const BOM_UTF8 = Buffer.from([0xef, 0xbb, 0xbf]);
const BOM_UTF16LE = Buffer.from([0xff, 0xfe]);
const MAC_ROMAN_SHEET = path.resolve(import.meta.dirname, '../fixtures/real-sheets/mac-roman.csv');

/** The sample's rows as CSV text, the first payee renamed José Pérez. */
function sheetText(): string {
  const rows: SheetRow[] = sampleRows().map((row, i) =>
    i === 0 ? { ...row, beneficiaryName: 'José Pérez', individualName: 'José Pérez' } : row,
  );
  const columns = Object.keys(rows[0]!);
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return `${[columns.join(','), ...rows.map((r) => columns.map((c) => quote(r[c] ?? '')).join(','))].join('\r\n')}\r\n`;
}

/** Validates `bytes` as a sheet (with `--encoding` when given) and returns its results' bytes. */
async function resultsOf(bytes: Buffer, encoding?: string): Promise<Buffer> {
  const sheet = path.join(await testDir(), 'payouts.csv');
  await writeFile(sheet, bytes);
  const result = await runCli([
    'validate',
    sheet,
    '--no-report',
    '--log-format',
    'text',
    ...(encoding ? ['--encoding', encoding] : []),
  ]);
  expect(result.code, result.stderr).toBe(0);
  return readFile(path.join(path.dirname(sheet), 'payouts.results.csv'));
}

describe('the results file of a CSV sheet', () => {
  it('read as windows-1252: UTF-8 with a BOM, the name intact', async () => {
    const results = await resultsOf(Buffer.from(sheetText(), 'latin1'), 'windows-1252');
    expect(results.subarray(0, 3).equals(BOM_UTF8)).toBe(true);
    const rows = parseCsv(results.subarray(3).toString('utf8'));
    expect(rows[0]!['beneficiaryName']).toBe('José Pérez');
    expect(rows[0]!['result.status']).toBe('valid');
  });

  it('read as macroman (a classic Mac Excel CSV): UTF-8 with a BOM, the names intact', async () => {
    const results = await resultsOf(await readFile(MAC_ROMAN_SHEET), 'macroman');
    expect(results.subarray(0, 3).equals(BOM_UTF8)).toBe(true);
    const rows = parseCsv(results.subarray(3).toString('utf8'));
    expect(rows.map((row) => row['Beneficiary Name'])).toEqual([
      'José Muñoz',
      'Zoë Brontë',
      'François Lefèvre',
    ]);
  });

  it('in UTF-8 without a BOM: results without one; with one: with one', async () => {
    const plain = await resultsOf(Buffer.from(sheetText(), 'utf8'));
    expect(plain.subarray(0, 3).equals(BOM_UTF8)).toBe(false);
    expect(parseCsv(plain)[0]!['beneficiaryName']).toBe('José Pérez');
    const marked = await resultsOf(Buffer.concat([BOM_UTF8, Buffer.from(sheetText(), 'utf8')]));
    expect(marked.subarray(0, 3).equals(BOM_UTF8)).toBe(true);
  });

  it('in UTF-16 with its BOM: results in UTF-16 with their BOM', async () => {
    const results = await resultsOf(Buffer.concat([BOM_UTF16LE, Buffer.from(sheetText(), 'utf16le')]));
    expect(results.subarray(0, 2).equals(BOM_UTF16LE)).toBe(true);
    const rows = parseCsv(results.subarray(2).toString('utf16le'));
    expect(rows[0]!['beneficiaryName']).toBe('José Pérez');
    expect(rows).toHaveLength(12);
  });
});
