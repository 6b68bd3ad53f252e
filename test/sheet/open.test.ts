import { copyFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SheetError } from '../../src/errors.js';
import { matchHeaders } from '../../src/sheet/headers.js';
import { openSheet } from '../../src/sheet/open.js';
import { MALFORMED_CASES } from '../fixtures/malformed/index.js';
import { readSheet, useTempDirs } from './tmp.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'sheets');
const tempDir = useTempDirs();

describe('openSheet', () => {
  it('chooses the reader by extension and by the first bytes', async () => {
    const dir = await tempDir();
    const cases: [string, string, 'csv' | 'xlsx'][] = [
      ['payouts.csv', 'sheet.txt', 'csv'],
      ['payouts.csv', 'sheet.TSV', 'csv'],
      ['payouts.csv', 'sheet', 'csv'],
      ['payouts.openpyxl.xlsx', 'sheet.XLSX', 'xlsx'],
      ['payouts.openpyxl.xlsx', 'sheet.xlsm', 'xlsx'],
      ['payouts.openpyxl.xlsx', 'export', 'xlsx'],
    ];
    for (const [source, name, format] of cases) {
      const target = path.join(dir, name);
      await copyFile(path.join(FIXTURES, source), target);
      const sheet = await openSheet(target);
      expect(sheet.format, name).toBe(format);
      expect(sheet.headers[0]).toBe('reference');
      await sheet.close?.();
    }
  });

  it('refuses OpenDocument and old .xls names', async () => {
    const dir = await tempDir();
    for (const [name, message] of [
      ['sheet.ods', /OpenDocument spreadsheet/],
      ['sheet.xls', /\.xls extension/],
    ] as const) {
      const target = path.join(dir, name);
      await writeFile(target, 'reference\n');
      await expect(openSheet(target)).rejects.toThrow(message);
    }
  });
});

// Every malformed input gives a SheetError naming the file, or opens with
// per-row findings; never another exception. The CLI tests check exit codes on the same corpus.
describe('malformed corpus', () => {
  it('has at least 25 cases with distinct names', () => {
    expect(MALFORMED_CASES.length).toBeGreaterThanOrEqual(25);
    expect(new Set(MALFORMED_CASES.map((c) => c.name)).size).toBe(MALFORMED_CASES.length);
  });

  it.each(MALFORMED_CASES.map((c) => [c.name, c] as const))('%s', async (_name, malformed) => {
    const file = await malformed.make(await tempDir());
    let outcome: { error?: unknown; problems: string[]; rows: number } = { problems: [], rows: 0 };
    try {
      const { headers, rows } = await readSheet(file);
      matchHeaders(headers, { file });
      outcome = { problems: rows.flatMap((r) => r.problems), rows: rows.length };
    } catch (error) {
      outcome.error = error;
    }
    if (malformed.sheet === 'throws') {
      expect(outcome.error).toBeInstanceOf(SheetError);
      const error = outcome.error as SheetError;
      expect(error.file).toBe(file);
      expect(error.message.startsWith(`${file}: `)).toBe(true);
      expect(error.message).toMatch(malformed.message);
      expect(error.exitCode).toBe(2);
    } else {
      expect(outcome.error).toBeUndefined();
      if (malformed.sheet === 'rowProblems') {
        expect(
          outcome.problems.some((p) => malformed.message.test(p)),
          outcome.problems.join('\n'),
        ).toBe(true);
      }
    }
  });
});
