// `validate` with a worker thread (src/batch/parallel.ts) against the same on one thread. The
// worker runs the built script, so this test imports the built module (npm run build first).
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BatchSummary } from '../../src/batch/summary.js';
import { withTempDir } from '../helpers/cli.js';
import { generateRows, parseCsv, SAMPLES_DIR, type SheetRow, writeSheet } from '../helpers/sheets.js';

type ValidateModule = typeof import('../../src/batch/validate.js');
type ErrorsModule = typeof import('../../src/errors.js');

const DIST = path.resolve(import.meta.dirname, '../../dist');
const load = async <T>(file: string): Promise<T> =>
  (await import(pathToFileURL(path.join(DIST, file)).href)) as T;

/** Valid rows with the mistakes sample's rows spread among them, a duplicate and a short row. */
async function mixedSheet(file: string, count: number): Promise<void> {
  const mistakes = parseCsv(await readFile(path.join(SAMPLES_DIR, 'payouts-mistakes.csv')));
  const rows: SheetRow[] = generateRows(count);
  for (let i = 0; i < count; i += 97) rows[i] = { ...mistakes[i % mistakes.length]!, reference: `M-${i}` };
  rows[count - 3] = { ...rows[count - 3]!, reference: rows[5]!['reference']! };
  await writeSheet(file, rows);
  await appendFile(file, '\r\n,,,\r\nSHORT-1,1.00,USD\r\n');
}

function totals(summary: BatchSummary) {
  return {
    statuses: summary.statusCounts(),
    sheet: BatchSummary.formatTotals(summary.sheetTotals),
    valid: BatchSummary.formatTotals(summary.validTotals),
  };
}

describe('validate on a worker thread', () => {
  it('writes the results, digest, totals and samples of one thread', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      const progress: number[] = [];
      const one = await validateSheet({ sheetPath, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({
        sheetPath,
        outPath: path.join(dir, 'two.csv'),
        worker: true,
        onProgress: (n) => progress.push(n),
      });
      // Compared as text: a deep comparison of megabyte buffers takes seconds.
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
      expect(totals(two.summary)).toEqual(totals(one.summary));
      // --max-amount reads the largest valid amount per currency: the worker carries it over.
      expect(two.summary.largestValid.size).toBeGreaterThan(0);
      expect(two.summary.largestValid).toEqual(one.summary.largestValid);
      expect(two.summary.rows).toBe(6001);
      expect(two.summary.byStatus.invalid).toBeGreaterThan(60);
      expect(two.invalidSamples).toEqual(one.invalidSamples);
      expect(two.invalidSamples).toHaveLength(20);
      expect(progress.at(-1)).toBe(6001);
    });
  });

  it('reads grouped amounts, usd and a totals row as one thread does (issue 8)', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      const rows: SheetRow[] = generateRows(3000).map((row, i) =>
        i % 10 === 0 ? { ...row, amount: '1,250.00', currency: 'usd' } : row,
      );
      await writeSheet(sheetPath, rows);
      await appendFile(sheetPath, 'TOTAL,1.00,USD\r\n');
      const one = await validateSheet({ sheetPath, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({ sheetPath, outPath: path.join(dir, 'two.csv'), worker: true });
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
      expect(totals(two.summary)).toEqual(totals(one.summary));
      expect(Object.keys(BatchSummary.formatTotals(two.summary.sheetTotals))).not.toContain('usd');
      expect(two.summary.rows).toBe(3000);
      expect(two.summary.groupedAmounts).toBe(300);
      expect(two.summary.totalsRows).toEqual(one.summary.totalsRows);
      expect(two.summary.totalsRows[0]).toMatch(
        /^row 3002 is the totals row, not a payout: its amount USD 1\.00 does not match/,
      );
      expect(two.guardError?.message).toBe(one.guardError?.message);
      expect(two.guardError?.message).toMatch(
        /^control totals do not match, so nothing was sent: the totals row \(row 3002\)/,
      );
    });
  });

  it('stops with the SheetError of the reader and leaves no results file', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate.js');
    const { SheetError } = await load<ErrorsModule>('errors.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      await appendFile(sheetPath, 'LATE-1,"1.00,USD,ACH\r\nLATE-2,1.00,USD,ACH\r\n');
      const failures = await Promise.all(
        [false, true].map((worker) =>
          validateSheet({ sheetPath, outPath: path.join(dir, `out-${worker}.csv`), worker }).catch(
            (error: unknown) => error,
          ),
        ),
      );
      for (const error of failures) {
        expect(error).toBeInstanceOf(SheetError);
        expect((error as Error).message).toMatch(/a quoted cell that starts in row 6005 is never closed/);
      }
      expect((failures[1] as Error).message).toBe((failures[0] as Error).message);
      expect(await readdir(dir)).toEqual(['sheet.csv']);
    });
  });

  it('refuses a sheet of headers and blank lines as one thread does', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate.js');
    const { SheetError } = await load<ErrorsModule>('errors.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'blank.csv');
      await writeFile(sheetPath, `reference,amount,currency,type\r\n${',,,\r\n'.repeat(5000)}`);
      const error = await validateSheet({ sheetPath, worker: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SheetError);
      expect((error as Error).message).toBe(
        `${sheetPath}: has column headers but no payout rows: is this the right file?`,
      );
      expect(await readdir(dir)).toEqual(['blank.csv']);
    });
  });
});
