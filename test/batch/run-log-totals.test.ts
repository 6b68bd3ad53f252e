/**
 * A cron job reads its totals from the log as well as from the summary: the last log record of
 * a run says the same totals as the JSON summary, digit for digit, however many digits a
 * currency's amounts have (pesos run to nine digits before the decimals).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

describe('the last log record of a run', () => {
  it('carries the JSON summary totals for a run paying 315,000,000.00 COP', async () => {
    const sb = await testSandbox({ seed: 7 });
    const [header, ...lines] = (await readFile(SAMPLE, 'utf8')).trim().split('\n');
    const pesos = lines.filter((line) => line.includes(',COP,COP,'));
    expect(pesos).toHaveLength(2);
    const sheet = path.join(await testDir(), 'pesos.csv');
    const big = pesos.map((line, i) =>
      line.replace(/^([^,]+),[^,]+,/, `$1,${i === 0 ? '315000000.00' : '12345678.90'},`),
    );
    await writeFile(sheet, `${[header, ...big].join('\n')}\n`);

    const result = await runAgainst(sb, sheet, ['--json', '--log-format', 'json']);

    expect(result.code).toBe(0);
    const summary = summaryOf(result) as unknown as { totals: Record<string, string> };
    expect(summary.totals).toEqual({ COP: '327345678.90' });
    const records = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const last = records.at(-1)!;
    expect(last['totals']).toEqual(summary.totals);
    expect(
      sb
        .ledger()
        .transactions.map((t) => t.amount)
        .sort(),
    ).toEqual(['12345678.90', '315000000.00']);
  });
});
