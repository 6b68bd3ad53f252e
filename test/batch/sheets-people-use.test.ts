// Sheets as people keep them: the fixtures of test/fixtures/real-sheets (made by make.mjs there
// the way Excel writes them) through the dry run, as `payouts validate` reads them.
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareSheet } from '../../src/batch/prepare.js';
import { BatchSummary } from '../../src/batch/summary.js';
import { validateSheet } from '../../src/batch/validate/validate.js';
import { EXIT, GuardError, SheetError } from '../../src/errors.js';
import type { CsvEncoding } from '../../src/sheet/csv.js';
import { headerPredicate } from '../../src/sheet/headers.js';
import { openSheet } from '../../src/sheet/open.js';
import { withTempDir } from '../helpers/cli.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/real-sheets');

async function copied(dir: string, name: string): Promise<string> {
  const target = path.join(dir, name);
  await copyFile(path.join(FIXTURES, name), target);
  return target;
}

/** The results file's rows: row number, status and errors. */
async function results(file: string): Promise<[string, string, string, string][]> {
  // The results keep the workbook's other sheets: the payout sheet is the one with its columns.
  const sheet = await openSheet(file, { isHeaderRow: headerPredicate() });
  const at = (name: string) => sheet.headers.indexOf(name);
  const rows: [string, string, string, string][] = [];
  for await (const row of sheet.rows) {
    const text = (i: number) => row.cells[i]?.text ?? '';
    rows.push([
      text(at('Reference')),
      text(at('result.row')),
      text(at('result.status')),
      text(at('result.errors')),
    ]);
  }
  return rows;
}

describe('a monthly workbook made the usual way in Excel', () => {
  it('reads the Payouts sheet after a Summary sheet, its header under a title, amounts as Excel shows them', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = await copied(dir, 'excel-monthly.xlsx');
      const report = await validateSheet({
        sheetPath,
        controls: { expectCount: 5, expectTotals: new Map([['USD', 270000n]]) },
      });
      expect(report.guardError).toBeUndefined();
      expect(report.summary.rows).toBe(5);
      expect(report.summary.statusCounts()).toEqual({ valid: 5 });
      // "usd" and "USD" are one currency; 300.29999999999995 is 300.30.
      expect(BatchSummary.formatTotals(report.summary.sheetTotals)).toEqual({ USD: '2700.00' });
      expect(await results(report.resultsPath)).toEqual([
        ['NOV-001', '4', 'valid', ''],
        ['NOV-002', '5', 'valid', ''],
        ['NOV-003', '6', 'valid', ''],
        ['NOV-004', '7', 'valid', ''],
        ['NOV-005', '8', 'valid', ''],
        [
          'TOTAL',
          '10',
          'skipped',
          'row 10 is the totals row, not a payout: its amount USD 2,700.00 matches the 5 rows above it',
        ],
      ]);
    });
  });

  it('names the payee with a no-break space and the one with a plain space as one beneficiary and recipient', async () => {
    const prepared = await prepareSheet({ sheetPath: path.join(FIXTURES, 'excel-monthly.xlsx') });
    const keys: string[] = [];
    for await (const row of prepared.rows) {
      if (row.payout.reference === 'NOV-001' || row.payout.reference === 'NOV-002') {
        const { beneficiary, recipient } = row.payout;
        keys.push(
          `${beneficiary.kind === 'new' ? beneficiary.key : ''} ${recipient.kind === 'new' ? recipient.key : ''}`,
        );
        expect(beneficiary.kind === 'new' && beneficiary.request.name).toBe('Ana Lopez');
      }
    }
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
  });

  it('refuses the batch like a failed --expect-total when the TOTAL row does not match the rows', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = await copied(dir, 'excel-monthly-total-off.xlsx');
      const report = await validateSheet({ sheetPath });
      expect(report.guardError).toBeInstanceOf(GuardError);
      expect(report.guardError?.exitCode).toBe(EXIT.guard);
      expect(report.guardError?.message).toBe(
        'control totals do not match, so nothing was sent: the totals row (row 10) says USD 2,701.00 but the 5 rows above it add up to USD 2,700.00',
      );
      const rows = await results(report.resultsPath);
      expect(rows.at(-1)).toEqual([
        'TOTAL',
        '10',
        'skipped',
        'row 10 is the totals row, not a payout: its amount USD 2,701.00 does not match the 5 rows above it, which add up to USD 2,700.00. Check for a missing, extra or changed row',
      ]);
    });
  });

  it('names the sheet read and the others when no sheet has the columns', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = await copied(dir, 'excel-monthly.xlsx');
      const error = await validateSheet({ sheetPath, sheetName: 'Summary' }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(SheetError);
      expect((error as Error).message).toContain(
        'missing required columns reference, amount, currency, type in worksheet "Summary" (row 1)',
      );
      expect((error as Error).message).toContain('The workbook\'s other sheets ("Payouts")');
    });
  });
});

describe("Excel's CSV export of the same sheet", () => {
  it('reads "1,250.00" amounts, says how many, and skips the TOTAL row', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = await copied(dir, 'excel-export.csv');
      const report = await validateSheet({
        sheetPath,
        controls: { expectCount: 5, expectTotals: new Map() },
      });
      expect(report.guardError).toBeUndefined();
      expect(report.summary.statusCounts()).toEqual({ valid: 5 });
      expect(report.summary.groupedAmounts).toBe(2);
      expect(BatchSummary.formatTotals(report.summary.sheetTotals)).toEqual({ USD: '2700.00' });
      expect((await results(report.resultsPath)).at(-1)).toEqual([
        'TOTAL',
        '8',
        'skipped',
        'row 8 is the totals row, not a payout: its amount USD 2,700.00 matches the 5 rows above it',
      ]);
    });
  });
});

/** The error reading a sheet to its end gives. */
async function readingError(sheetPath: string): Promise<Error | undefined> {
  try {
    for await (const _ of (await openSheet(sheetPath)).rows);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

/** The Beneficiary Name column of the encoding fixtures, read in an encoding. */
async function beneficiaryNames(sheetPath: string, encoding: CsvEncoding): Promise<string[]> {
  const names: string[] = [];
  for await (const row of (await openSheet(sheetPath, { encoding })).rows) names.push(row.cells[5]!.text);
  return names;
}

describe('CSV saved as plain "CSV" by Mac or Windows Excel', () => {
  it('a Mac Roman file is refused with the hint --encoding macroman, and read right with it', async () => {
    const sheetPath = path.join(FIXTURES, 'mac-roman.csv');
    const error = await readingError(sheetPath);
    expect(error).toBeInstanceOf(SheetError);
    expect(error?.message).toBe(
      `${sheetPath}: row 2, column F is not valid UTF-8 text: it looks like Mac Roman (classic Mac Excel "CSV"). Save it as "CSV UTF-8 (Comma delimited)", or pass --encoding macroman`,
    );
    expect(await beneficiaryNames(sheetPath, 'macroman')).toEqual([
      'José Muñoz',
      'Zoë Brontë',
      'François Lefèvre',
    ]);
  });

  it('--encoding latin1 on a Mac Roman file is refused rather than garbling the names', async () => {
    const sheetPath = path.join(FIXTURES, 'mac-roman.csv');
    await expect(openSheet(sheetPath, { encoding: 'latin1' })).rejects.toThrow(
      'the file is not Windows-1252 text: its accented letters read as Mac Roman (classic Mac Excel "CSV"). Pass --encoding macroman',
    );
  });

  it('a Windows-1252 file gets the hint for Windows-1252, and latin1 reads it', async () => {
    const sheetPath = path.join(FIXTURES, 'windows-1252.csv');
    const error = await readingError(sheetPath);
    expect(error?.message).toContain('it looks like Windows-1252 (Excel "CSV" on Windows)');
    expect(error?.message).toContain('--encoding windows-1252');
    expect(await beneficiaryNames(sheetPath, 'latin1')).toEqual([
      'José Muñoz',
      'Zoë Brontë',
      'François Lefèvre',
    ]);
  });
});
