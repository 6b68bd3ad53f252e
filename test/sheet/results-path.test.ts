import { link, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import {
  checkResultsPath,
  formatByExtension,
  isSameFile,
  resultsPathFor,
} from '../../src/sheet/results-path.js';
import type { SheetFormat } from '../../src/sheet/types.js';
import { useTempDirs } from './tmp.js';

const tempDir = useTempDirs();

function refusal(sheet: string, out: string, format: SheetFormat): string | undefined {
  try {
    checkResultsPath(sheet, out, format);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
}

describe('formatByExtension', () => {
  it('reads .xlsx and .xlsm as XLSX, everything else as CSV', () => {
    const cases: [string, SheetFormat][] = [
      ['a.xlsx', 'xlsx'],
      ['A.XLSM', 'xlsx'],
      ['a.csv', 'csv'],
      ['a.tsv', 'csv'],
      ['a', 'csv'],
    ];
    for (const [file, format] of cases) expect(formatByExtension(file), file).toBe(format);
  });
});

describe('resultsPathFor', () => {
  it("keeps the sheet's own extension, as spelt, where its results may have it", () => {
    const cases: [string, SheetFormat, boolean, string][] = [
      ['dir/pay.csv', 'csv', false, 'dir/pay.results.csv'],
      ['dir/pay.tsv', 'csv', false, 'dir/pay.results.tsv'],
      ['dir/pay.txt', 'csv', false, 'dir/pay.results.txt'],
      ['dir/PAY.CSV', 'csv', false, 'dir/PAY.results.CSV'],
      ['dir/pay', 'csv', false, 'dir/pay.results.csv'],
      ['dir/pay.dat', 'csv', false, 'dir/pay.results.csv'],
      ['dir/pay.xlsx', 'xlsx', false, 'dir/pay.results.xlsx'],
      ['dir/pay.XLSX', 'xlsx', false, 'dir/pay.results.XLSX'],
      // A workbook with macros gets a plain one: Excel refuses an .xlsm without macros.
      ['dir/pay.xlsm', 'xlsx', false, 'dir/pay.results.xlsx'],
      ['dir/pay.tsv', 'csv', true, 'dir/pay.sandbox.results.tsv'],
    ];
    for (const [sheet, format, rehearsal, expected] of cases)
      expect(resultsPathFor(sheet, format, rehearsal), sheet).toBe(expected);
  });

  it('never suggests the sheet itself for an --out of the wrong extension', () => {
    expect(refusal('o.csv', 'o.xlsx', 'csv')).toBe(
      '--out "o.xlsx" must end in .csv: the results file has the format of the sheet "o.csv" (CSV) - use for example --out "o.results.csv"',
    );
  });
});

describe('checkResultsPath: the extension', () => {
  it('accepts the extension of the results format, and refuses any other naming the right one', () => {
    const cases: [string, string, SheetFormat, string | undefined][] = [
      ['in.xlsx', 'out.xlsx', 'xlsx', undefined],
      ['in.xlsx', 'OUT.XLSX', 'xlsx', undefined],
      ['in.csv', 'out.csv', 'csv', undefined],
      ['in.tsv', 'out.tsv', 'csv', undefined],
      ['in.tsv', 'out.csv', 'csv', undefined],
      [
        'in.xlsx',
        'x.csv',
        'xlsx',
        '--out "x.csv" must end in .xlsx: the results file has the format of the sheet "in.xlsx" (XLSX) - use for example --out "x.xlsx"',
      ],
      [
        'in.csv',
        'x.xlsx',
        'csv',
        '--out "x.xlsx" must end in .csv: the results file has the format of the sheet "in.csv" (CSV) - use for example --out "x.csv"',
      ],
      [
        'in.xlsm',
        'x.xlsm',
        'xlsx',
        '--out "x.xlsm" must end in .xlsx: the results file has the format of the sheet "in.xlsm" (XLSX) - use for example --out "x.xlsx"',
      ],
      [
        'in.txt',
        'results',
        'csv',
        '--out "results" must end in .csv or .txt: the results file has the format of the sheet "in.txt" (CSV) - use for example --out "results.csv"',
      ],
    ];
    for (const [sheet, out, format, message] of cases) {
      expect(refusal(sheet, out, format), `${sheet} -> ${out}`).toBe(message);
    }
  });
});

describe('checkResultsPath: never the sheet itself', () => {
  it('refuses the sheet by the same path, a relative path, a symlink, a hard link and another case', async () => {
    const dir = await tempDir();
    const sheet = path.join(dir, 'payouts.csv');
    await writeFile(sheet, 'reference,amount\n');
    await symlink(sheet, path.join(dir, 'linked.csv'));
    await link(sheet, path.join(dir, 'hard.csv'));
    await symlink(dir, path.join(dir, 'folder'));
    const relative = path.relative(process.cwd(), sheet);
    const same = [
      sheet,
      relative,
      path.join(dir, '.', 'sub', '..', 'payouts.csv'),
      path.join(dir, 'linked.csv'),
      path.join(dir, 'hard.csv'),
      path.join(dir, 'PAYOUTS.csv'),
      path.join(dir, 'folder', 'payouts.csv'),
    ];
    for (const out of same) {
      expect(isSameFile(sheet, out), out).toBe(true);
      expect(refusal(sheet, out, 'csv'), out).toBe(
        `--out "${out}" is the sheet "${sheet}" itself: the results file is never written over the sheet - choose another --out, or leave it out for "${path.join(dir, 'payouts.results.csv')}"`,
      );
    }
    expect(refusal(sheet, path.join(dir, 'payouts.results.csv'), 'csv')).toBeUndefined();
    expect(refusal(sheet, path.join(dir, 'folder', 'other.csv'), 'csv')).toBeUndefined();
  });
});
