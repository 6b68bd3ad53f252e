// XLSX results keep each amount cell's own number format (docs/sheets.md "The results file"):
// a cell formatted on its own keeps that format, whatever its neighbours or its column have;
// a cell without one takes its column's.
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { openResultsWriter } from '../../src/sheet/results.js';
import type { Cell, RawRow, SheetLayout } from '../../src/sheet/types.js';
import { openXlsx } from '../../src/sheet/xlsx.js';
import { runCli, withTempDir } from '../helpers/cli.js';

const samples = path.resolve(import.meta.dirname, '../../samples');

/** The first `rows` rows of the clean sample, identifiers as text, in a workbook without column styles. */
async function sampleRows(rows: number): Promise<{ book: ExcelJS.Workbook; sheet: ExcelJS.Worksheet }> {
  const source = new ExcelJS.Workbook();
  await source.xlsx.readFile(path.join(samples, 'payouts-clean.xlsx'));
  const from = source.worksheets[0]!;
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Payouts');
  for (let r = 1; r <= rows; r++) {
    const values = (from.getRow(r).values as ExcelJS.CellValue[]).slice(1);
    values.forEach((value, i) => {
      sheet.getCell(r, i + 1).value = typeof value === 'number' && i !== 1 ? String(value) : value;
    });
  }
  return { book, sheet };
}

/** `payouts validate` (or `run`) on the workbook; the results' payout sheet. */
async function validated(
  dir: string,
  book: ExcelJS.Workbook,
  command: 'validate' | 'run' = 'validate',
  args: readonly string[] = [],
): Promise<ExcelJS.Worksheet> {
  const file = path.join(dir, 'formats.xlsx');
  await book.xlsx.writeFile(file);
  const result = await runCli([command, file, '--json', ...args], { env: {} });
  expect(result.code, result.stderr).toBeLessThanOrEqual(1);
  const results = new ExcelJS.Workbook();
  // A rehearsal (run --sandbox) writes its own results beside the real ones.
  const name = args.includes('--sandbox') ? 'formats.sandbox.results.xlsx' : 'formats.results.xlsx';
  await results.xlsx.readFile(path.join(dir, name));
  return results.getWorksheet('Payouts')!;
}

const numFmts = (sheet: ExcelJS.Worksheet, rows: readonly number[]) =>
  rows.map((r) => sheet.getCell(r, 2).numFmt);
const values = (sheet: ExcelJS.Worksheet, rows: readonly number[]) =>
  rows.map((r) => sheet.getCell(r, 2).value);

describe('XLSX results keep the number format of each amount cell', () => {
  it('keeps three different formats in one column without a column style', async () => {
    await withTempDir(async (dir) => {
      const { book, sheet } = await sampleRows(4);
      sheet.getCell('B2').style = { numFmt: '#,##0.00' };
      sheet.getCell('B3').style = { numFmt: '"$"#,##0.00' };
      sheet.getCell('B4').style = { numFmt: '#,##0.00 [$USD]' };
      const results = await validated(dir, book);
      expect(values(results, [2, 3, 4])).toEqual([2500, 125.5, 18000]);
      expect(numFmts(results, [2, 3, 4])).toEqual(['#,##0.00', '"$"#,##0.00', '#,##0.00 [$USD]']);
      expect(results.getColumn(2).numFmt).toBeUndefined();
    });
  });

  it("keeps a cell's own format over its column's style, the column's where the cell has none (sample workbook)", async () => {
    await withTempDir(async (dir) => {
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(path.join(samples, 'payouts-clean.xlsx'));
      const sheet = book.worksheets[0]!;
      expect(sheet.getColumn(2).numFmt).toBe('0.00');
      // A fresh style per cell: exceljs shares one style object among a column's cells.
      const format = (ref: string, numFmt: string) => {
        sheet.getCell(ref).style = { ...sheet.getCell(ref).style, numFmt };
      };
      format('B3', '#,##0.00');
      format('B4', '0.00%');
      format('B5', '$#,##0.00');
      // General: no format of its own, so the column's.
      sheet.getCell('B6').style = {};
      const results = await validated(dir, book);
      expect(values(results, [2, 3, 4, 5, 6, 7])).toEqual([2500, 125.5, 18000, 3200, 980.25, 15000]);
      expect(numFmts(results, [2, 3, 4, 5, 6, 7, 13])).toEqual([
        '0.00',
        '#,##0.00',
        '0.00%',
        '$#,##0.00',
        '0.00',
        '0.00',
        '0.00',
      ]);
      expect(results.getColumn(2).numFmt).toBe('0.00');
    });
  });

  it('keeps the format of a failing amount cell, filled red with its note', async () => {
    await withTempDir(async (dir) => {
      const { book, sheet } = await sampleRows(4);
      sheet.getCell('B2').style = { numFmt: '#,##0.00' };
      sheet.getCell('B3').value = -125.5;
      sheet.getCell('B3').style = { numFmt: '#,##0.00;[Red]-#,##0.00' };
      sheet.getCell('B4').style = { numFmt: '0.000' };
      const results = await validated(dir, book);
      const failing = results.getCell('B3');
      expect(failing.value).toBe(-125.5);
      expect(failing.numFmt).toBe('#,##0.00;[Red]-#,##0.00');
      expect((failing.fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFFFC7CE');
      expect(JSON.stringify(failing.note)).toContain('amount');
      expect(numFmts(results, [2, 4])).toEqual(['#,##0.00', '0.000']);
      expect((results.getCell('B2').fill as ExcelJS.FillPattern | undefined)?.fgColor).toBeUndefined();
    });
  });

  it('keeps them in the results of a run too', async () => {
    await withTempDir(async (dir) => {
      const { book, sheet } = await sampleRows(4);
      sheet.getCell('B2').style = { numFmt: '#,##0.00' };
      sheet.getCell('B3').style = { numFmt: '"$"#,##0.00' };
      sheet.getCell('B4').style = { numFmt: '#,##0.00 [$USD]' };
      const results = await validated(dir, book, 'run', ['--sandbox']);
      expect(values(results, [2, 3, 4])).toEqual([2500, 125.5, 18000]);
      expect(numFmts(results, [2, 3, 4])).toEqual(['#,##0.00', '"$"#,##0.00', '#,##0.00 [$USD]']);
    });
  });
});

describe('the number formats the XLSX reader gives', () => {
  it("gives each number its own style's format as an index, the column's style apart", async () => {
    await withTempDir(async (dir) => {
      const book = new ExcelJS.Workbook();
      const sheet = book.addWorksheet('Payouts');
      sheet.getColumn(2).numFmt = '0.00';
      sheet.getRow(1).values = ['reference', 'amount', 'paid on'];
      const rows: [string, number, string | undefined][] = [
        ['R-1', 10, '#,##0.00'],
        ['R-2', 20, '"$"#,##0.00'],
        ['R-3', 30, '#,##0.00'],
        ['R-4', 40, undefined],
      ];
      for (const [n, [reference, amount, numFmt]] of rows.entries()) {
        const row = sheet.getRow(n + 2);
        row.getCell(1).value = reference;
        const cell = row.getCell(2);
        cell.value = amount;
        cell.style = numFmt === undefined ? {} : { numFmt };
        row.getCell(3).value = new Date(Date.UTC(2026, 10, 26));
        row.getCell(3).numFmt = 'yyyy-mm-dd';
      }
      const file = path.join(dir, 'formats.xlsx');
      await book.xlsx.writeFile(file);
      const opened = await openXlsx(file);
      const read: RawRow[] = [];
      for await (const row of opened.rows) read.push(row);
      const layout = opened.layout!;
      expect(layout.columns[1]?.numFmt).toBe('0.00');
      // Each distinct format once, whatever the number of cells that have it.
      expect(layout.formats).toEqual(['#,##0.00', '"$"#,##0.00']);
      expect(read.map((row) => row.cells[1])).toEqual([
        { text: '10', kind: 'number', format: 0 },
        { text: '20', kind: 'number', format: 1 },
        { text: '30', kind: 'number', format: 0 },
        { text: '40', kind: 'number' },
      ]);
      // A date becomes ISO text: its format is not kept.
      expect(read[0]!.cells[2]).toEqual({ text: '2026-11-26', kind: 'date' });
    });
  });
});

describe('the XLSX results writer and cell formats', () => {
  it("writes each cell's own format, the column's without one, text columns as text", async () => {
    await withTempDir(async (dir) => {
      const out = path.join(dir, 'results.xlsx');
      const layout: SheetLayout = {
        columns: [{}, { numFmt: '0.00' }],
        formats: ['#,##0.00', '"$"#,##0.00'],
      };
      const writer = await openResultsWriter({
        path: out,
        format: 'xlsx',
        inputHeaders: ['reference', 'amount', 'accountNumber'],
        layout,
      });
      const number = (text: string, format?: number): Cell =>
        format === undefined ? { text, kind: 'number' } : { text, kind: 'number', format };
      const rows: [Cell, Cell, Cell][] = [
        [{ text: 'R-1', kind: 'string' }, number('10', 0), number('123', 1)],
        [{ text: 'R-2', kind: 'string' }, number('20', 1), { text: '0042', kind: 'string' }],
        [{ text: 'R-3', kind: 'string' }, number('30'), { text: '0043', kind: 'string' }],
      ];
      for (const [i, cells] of rows.entries()) {
        await writer.write({
          cells,
          rowNumber: i + 2,
          status: i === 1 ? 'invalid' : 'valid',
          errors: i === 1 ? ['amount is over the limit'] : [],
          errorColumns: i === 1 ? [1] : [],
        });
      }
      await writer.commit();
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(out);
      const sheet = book.getWorksheet('Results')!;
      expect(numFmts(sheet, [2, 3, 4])).toEqual(['#,##0.00', '"$"#,##0.00', '0.00']);
      expect((sheet.getCell('B3').fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFFFC7CE');
      // An identifier column stays text, whatever format its cell had.
      expect(sheet.getCell('C2').numFmt).toBe('@');
    });
  });
});
