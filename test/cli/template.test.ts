import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../../src/sheet/open.js';
import { runCli, withTempDir } from '../helpers/cli.js';

const committed = path.resolve(import.meta.dirname, '../../templates');
const RAILS = ['ach', 'wire', 'swift', 'rtp', 'spei', 'pix', 'cop'];

async function headersOf(file: string): Promise<string[]> {
  const sheet = await openSheet(file);
  for await (const _ of sheet.rows) break;
  return sheet.headers;
}

describe('payouts template', () => {
  it('writes a CSV and an XLSX per rail and one with all rails, the same as templates/', async () => {
    await withTempDir(async (dir) => {
      const result = await runCli(['template', '--dir', dir]);
      expect(result.code).toBe(0);
      const expected = [...RAILS, 'all-rails'].flatMap((r) => [`${r}.csv`, `${r}.xlsx`]).sort();
      expect((await readdir(dir)).sort()).toEqual(expected);
      expect((await readdir(committed)).sort()).toEqual(expected);
      for (const name of expected) {
        expect(await headersOf(path.join(dir, name)), name).toEqual(
          await headersOf(path.join(committed, name)),
        );
      }
      for (const rail of RAILS) {
        expect(await readFile(path.join(dir, `${rail}.csv`), 'utf8')).toBe(
          await readFile(path.join(committed, `${rail}.csv`), 'utf8'),
        );
      }
    });
  });

  it('gives each rail its own columns and every template the common ones', async () => {
    expect(await headersOf(path.join(committed, 'spei.csv'))).toEqual(
      expect.arrayContaining([
        'reference',
        'amount',
        'currency',
        'type',
        'clabe',
        'bankCode',
        'receiverName',
      ]),
    );
    expect(await headersOf(path.join(committed, 'spei.csv'))).not.toContain('routingNumber');
    expect(await headersOf(path.join(committed, 'wire.csv'))).toEqual(
      expect.arrayContaining(['bankAddress.street1', 'recipientAddress.country', 'routingNumber']),
    );
    expect(await headersOf(path.join(committed, 'all-rails.csv'))).toHaveLength(42);
  });

  it('formats identifier columns of the XLSX as text and explains every column', async () => {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path.join(committed, 'ach.xlsx'));
    const sheet = workbook.getWorksheet('Payouts')!;
    const headers = (sheet.getRow(1).values as unknown[]).slice(1) as string[];
    const column = (name: string) => sheet.getColumn(headers.indexOf(name) + 1);
    expect(column('routingNumber').numFmt).toBe('@');
    expect(column('accountNumber').numFmt).toBe('@');
    expect(column('amount').numFmt).toBeUndefined();
    const note = sheet.getRow(1).getCell(headers.indexOf('routingNumber') + 1).note;
    expect(JSON.stringify(note)).toContain('9 digits');
    const notes = workbook.getWorksheet('Columns')!;
    const documented = new Set<string>();
    notes.eachRow((row, n) => {
      if (n > 1) documented.add(String(row.getCell(1).value));
    });
    for (const header of headers) expect(documented, header).toContain(header);
  });

  it('refuses an unknown rail with exit 2', async () => {
    const result = await runCli(['template', 'CHEQUE', '--dir', '/tmp', '--log-format', 'text']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"CHEQUE" is not a rail');
    // Where stderr is no terminal, it holds JSON lines only: the error is one fatal record.
    const logged = await runCli(['template', 'CHEQUE', '--dir', '/tmp']);
    expect(logged.code).toBe(2);
    expect(JSON.parse(logged.stderr)).toMatchObject({
      level: 60,
      msg: expect.stringContaining('"CHEQUE" is not a rail'),
    });
  });

  // `payouts template` once silently replaced a filled-in ach.csv in the current folder.
  it('refuses to overwrite an existing template without --force, and writes nothing at all', async () => {
    await withTempDir(async (dir) => {
      const filled = 'reference,amount,currency,type\r\nINV-1,10.00,USD,ACH\r\n';
      await writeFile(path.join(dir, 'ach.csv'), filled);
      const result = await runCli(['template', 'ach', 'wire', '--log-format', 'text'], { cwd: dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `payouts: not writing templates: ${path.join(dir, 'ach.csv')} already exists and may be filled in - pass --force to overwrite, or choose another --dir`,
      );
      expect(await readdir(dir)).toEqual(['ach.csv']);
      expect(await readFile(path.join(dir, 'ach.csv'), 'utf8')).toBe(filled);

      const forced = await runCli(['template', 'ach', '--force'], { cwd: dir });
      expect(forced.code).toBe(0);
      expect(await readFile(path.join(dir, 'ach.csv'), 'utf8')).toBe(
        await readFile(path.join(committed, 'ach.csv'), 'utf8'),
      );
    });
  });

  it('says a --dir that is a file, or lies under one, in words (exit 2), not as a bug', async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, 'notes.txt');
      await writeFile(file, 'not a folder\n');
      const onFile = await runCli(['template', 'ach', '--dir', file, '--log-format', 'text']);
      expect(onFile.code).toBe(2);
      expect(onFile.stderr).toContain(
        `payouts: --dir ${file} is a file, not a folder: choose a folder for the templates`,
      );
      const under = path.join(file, 'templates');
      const forced = await runCli(['template', 'ach', '--dir', under, '--force', '--log-format', 'text']);
      expect(forced.code).toBe(2);
      expect(forced.stderr).toContain(
        `payouts: cannot write the templates to ${under}: a part of the path is not a directory (ENOTDIR) - choose another --dir`,
      );
      expect(forced.stderr).not.toContain('internal error');
      expect(await readdir(dir)).toEqual(['notes.txt']);
    });
  });
});
