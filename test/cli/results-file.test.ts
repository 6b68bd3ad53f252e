import { execFile } from 'node:child_process';
import { copyFile, readdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../../src/sheet/open.js';
import { runCli, withTempDir } from '../helpers/cli.js';
import { CLI_ENTRY } from '../helpers/payouts.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/results');
const run = promisify(execFile);

/** Runs the built CLI (npm run build first) and returns its exit code and both streams. */
async function payouts(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_ENTRY, ...args], { env: {} });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the results file of a large XLSX sheet', () => {
  // From ~500 rows on, every validate once printed MaxListenersExceededWarning lines.
  it('is written without a single warning on stderr', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts.xlsx');
      await copyFile(path.join(FIXTURES, '2000-rows.xlsx'), sheet);
      const result = await payouts(['validate', sheet]);
      expect(result.code).toBe(0);
      expect(result.stderr).not.toMatch(/\(node:\d+\)|[A-Za-z]Warning\b|memory leak/);
      expect(result.stderr).toContain('2,000 rows');
    });
  });
});

describe('--out', () => {
  const samples = path.resolve(import.meta.dirname, '../../samples');
  // Both log a fatal error as one JSON record when stderr is not a terminal: ask for text here.
  const textLogs = (_command: string) => ['--log-format', 'text'];

  // --out set to the sheet once wrote the results over it, and --out x.csv for an XLSX sheet
  // wrote XLSX bytes into x.csv. Both are refused before anything is read or sent.
  it.each(['validate', 'run'])(
    '%s refuses the sheet itself, by a relative path or a link, with exit 2',
    async (command) => {
      await withTempDir(async (dir) => {
        const sheet = path.join(dir, 'payouts.csv');
        await copyFile(path.join(samples, 'payouts-clean.csv'), sheet);
        const before = await readFile(sheet);
        await symlink(sheet, path.join(dir, 'link.csv'));
        for (const out of ['payouts.csv', './payouts.csv', 'link.csv', 'Payouts.CSV']) {
          const result = await runCli([command, 'payouts.csv', '--out', out, ...textLogs(command)], {
            cwd: dir,
          });
          expect(result.code, out).toBe(2);
          expect(result.stderr, out).toContain(
            `payouts: --out "${path.join(dir, out)}" is the sheet "${sheet}" itself: the results file is never written over the sheet`,
          );
        }
        expect(await readFile(sheet)).toEqual(before);
        expect((await readdir(dir)).sort()).toEqual(['link.csv', 'payouts.csv']);
      });
    },
  );

  it.each(['validate', 'run'])('%s refuses an --out without the extension of the sheet', async (command) => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts.xlsx');
      await copyFile(path.join(samples, 'payouts-clean.xlsx'), sheet);
      const result = await runCli([command, sheet, '--out', path.join(dir, 'x.csv'), ...textLogs(command)]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`payouts: --out "${path.join(dir, 'x.csv')}" must end in .xlsx`);
      expect(await readdir(dir)).toEqual(['payouts.xlsx']);
    });
  });
});

describe('the XLSX results file of a laid-out sheet (fixture laid-out.xlsx)', () => {
  it('keeps widths, hidden columns, amount formats and booleans, notes failing cells, opens on the results', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'laid-out.xlsx');
      await copyFile(path.join(FIXTURES, 'laid-out.xlsx'), sheet);
      const result = await runCli(['validate', sheet]);
      expect(result.code).toBe(1);
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(path.join(dir, 'laid-out.results.xlsx'));
      // The payout sheet keeps its own name.
      expect(book.worksheets.map((w) => w.name)).toEqual(['Payouts']);
      const results = book.getWorksheet('Payouts')!;
      const headers = (results.getRow(1).values as unknown[]).slice(1) as string[];
      const at = (name: string) => headers.indexOf(name) + 1;
      expect(headers).toHaveLength(39 + 8);
      // Frozen header row and reference column; the view opens on result.row (column AN).
      expect(results.views[0]).toMatchObject({ state: 'frozen', xSplit: 1, ySplit: 1, topLeftCell: 'AN2' });
      expect(results.getColumn(at('reference')).width).toBe(18);
      expect(results.getColumn(at('amount')).width).toBe(16);
      expect(results.getColumn(at('nickname')).hidden).toBe(true);
      expect(results.getColumn(at('amount')).hidden).toBe(false);
      expect(results.getColumn(at('result.errors')).width).toBe(70);
      expect(results.getCell(2, at('amount')).value).toBe(10);
      expect(results.getCell(2, at('amount')).numFmt).toBe('#,##0.00');
      expect(results.getCell(5, at('thirdPartyWithdrawal')).value).toBe(false);
      // Row 2 has a bad routing number: the cell is red and carries the message as a note.
      expect(results.getCell(2, at('result.status')).value).toBe('invalid');
      expect(results.getCell(2, at('result.errors')).value).toBe('routingNumber is invalid');
      const routing = results.getCell(2, at('routingNumber'));
      expect((routing.fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFFFC7CE');
      expect(JSON.stringify(routing.note)).toContain('routingNumber is invalid');
      expect(results.getCell(3, at('routingNumber')).note).toBeUndefined();
      // Neutralised in the file, restored when the results file is fed back.
      expect(results.getCell(3, at('nickname')).value).toBe("'-Foo");
      const fedBack = await openSheet(path.join(dir, 'laid-out.results.xlsx'));
      const nicknames: string[] = [];
      for await (const row of fedBack.rows)
        nicknames.push(row.cells[fedBack.headers.indexOf('nickname')]!.text);
      expect(nicknames).toEqual(['Payroll 0', '-Foo', 'Payroll 0', 'Payroll 2']);
    });
  });
});

describe('the XLSX results of a workbook with other sheets', () => {
  const samples = path.resolve(import.meta.dirname, '../../samples');
  it('keeps every other sheet in its place, with its values and widths, and the payout sheet its name', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'november.xlsx');
      const input = new ExcelJS.Workbook();
      const notes = input.addWorksheet('Notes');
      notes.columns = [{ width: 40 }, { width: 12 }];
      notes.getCell('A1').value = 'Approved by';
      notes.getCell('B1').value = 'M. Chen';
      notes.getCell('A3').value = 'Budget';
      notes.getCell('B3').value = 25000;
      const source = new ExcelJS.Workbook();
      await source.xlsx.readFile(path.join(samples, 'payouts-clean.xlsx'));
      const payouts = input.addWorksheet('November payouts');
      source.worksheets[0]!.eachRow((row, n) => {
        payouts.getRow(n).values = row.values as ExcelJS.CellValue[];
      });
      const lookup = input.addWorksheet('Lookup');
      lookup.getCell('A1').value = 'ACH';
      lookup.getCell('A2').value = 'WIRE';
      await input.xlsx.writeFile(sheet);

      const result = await runCli(['validate', sheet, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(path.join(dir, 'november.results.xlsx'));
      expect(book.worksheets.map((w) => w.name)).toEqual(['Notes', 'November payouts', 'Lookup']);
      const keptNotes = book.getWorksheet('Notes')!;
      expect(keptNotes.getCell('A1').value).toBe('Approved by');
      expect(keptNotes.getCell('B1').value).toBe('M. Chen');
      expect(keptNotes.getCell('A2').value).toBeNull();
      expect(keptNotes.getCell('B3').value).toBe(25000);
      expect(keptNotes.getColumn(1).width).toBe(40);
      expect(book.getWorksheet('Lookup')!.getCell('A2').value).toBe('WIRE');
      const results = book.getWorksheet('November payouts')!;
      expect(results.getRow(1).getCell(1).value).toBe('reference');
      expect(results.rowCount).toBe(13);
    });
  });
});
