/**
 * What `payouts run` holds does not grow with its sheet: the rows in flight and a bounded window
 * of finished ones, never a map of every row's result or every payee it created. Measured as the
 * V8 heap in use after a forced collection when the last row finished (test/helpers/run-heap.mjs,
 * in a process of its own), for a smaller and a larger sheet of one payee per row. A map of every
 * row's result and payee costs about a kilobyte a row (5.7 MB more at 6,000 rows than at 600
 * before the window). What is bounded (the window of 1,024 results, the claim ahead, the payees
 * looked up for it, buffers) fills within the first thousand rows: 0.7 to 1 MB more at 3,000 rows
 * than at 400, flat from 1,000 rows to 9,000. So both sheets here are past that. From 1,500 rows
 * to 7,500 the heap moved by 0.08 to 0.71 MB in four runs; keeping every row's result (a copy of
 * what goes to the results file) made it 2.9 MB.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_ENTRY, testDir, testSandbox } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { generateRows, writeSheet } from '../helpers/sheets.js';

const MB = 1024 * 1024;
const DIST = path.dirname(path.dirname(CLI_ENTRY));
const SCRIPT = path.resolve(import.meta.dirname, '../helpers/run-heap.mjs');

async function heapAtTheEnd(url: string, rows: number): Promise<{ heapUsed: number; statuses: object }> {
  const dir = await testDir();
  const sheet = path.join(dir, `heap-${rows}.csv`);
  await writeSheet(sheet, generateRows(rows, { prefix: `HEAP${rows}`, rowsPerPayee: 1 }));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--expose-gc',
      SCRIPT,
      DIST,
      sheet,
      url,
      initTestRegister(path.join(dir, 'register.db')),
      path.join(dir, 'results.csv'),
    ],
    { timeout: 120_000 },
  );
  return JSON.parse(stdout);
}

describe('payouts run at any size', () => {
  it('slow: holds no state per row: the heap after 7,500 rows is within 1.5 MB of that after 1,500', {
    timeout: 240_000,
  }, async () => {
    const sb = await testSandbox();
    const small = await heapAtTheEnd(sb.url, 1_500);
    const large = await heapAtTheEnd(sb.url, 7_500);
    expect(small.statuses).toEqual({ submitted: 1_500 });
    expect(large.statuses).toEqual({ submitted: 7_500 });
    const growth = large.heapUsed - small.heapUsed;
    expect(growth, `${(growth / MB).toFixed(2)} MB more for 6,000 more rows`).toBeLessThan(1.5 * MB);
  });
});
