/**
 * `--max-amount CUR=AMOUNT` refuses the batch (exit 4) before anything is sent when a
 * row would pay more; and a hard ceiling makes an absurd amount an invalid row, never paid.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { paymentsOf, runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { CLEAN_SAMPLE, readCsv } from '../helpers/sheets.js';

async function sampleSheet(): Promise<string> {
  const sheet = path.join(await testDir(), 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return sheet;
}

// The sample's largest USD row is row 4 (PAY-2026-11-0003, a WIRE of 18,000.00).
const OVER_USD =
  'a payout is above its --max-amount, so nothing was sent: --max-amount USD=17,999.99 but row 4 (PAY-2026-11-0003) pays USD 18,000.00: check that row, or raise the limit if it is right';

describe('--max-amount CUR=AMOUNT', () => {
  it('run: a row above the limit refuses the batch, exit 4, nothing sent', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet();
    const refused = await runAgainst(sb, sheet, [
      '--max-amount',
      'USD=17999.99',
      '--max-amount',
      'mxn=1000000',
    ]);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain(OVER_USD);
    expect(sb.ledger().requests.total).toBe(0);

    const allowed = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--max-amount', 'USD=18000']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('validate: the same finding, exit 4, in the --json summary', async () => {
    const sheet = await sampleSheet();
    const result = await runCli(['validate', sheet, '--json', '--max-amount', 'USD=17999.99']);
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toMatchObject({
      exitCode: 4,
      error: { code: 'GUARD', message: OVER_USD },
    });
  });

  it('a malformed value is a usage error (exit 2) that shows the value', async () => {
    const sheet = await sampleSheet();
    // Text logs: without a terminal the error would be a JSON record.
    const result = await runCli(['validate', sheet, '--max-amount', 'USD:100', '--log-format', 'text']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'payouts: --max-amount "USD:100" is not CUR=AMOUNT with a 3-letter currency and a decimal amount, e.g. --max-amount USD=25000.00',
    );
  });
});

describe('the hard amount ceiling', () => {
  it('an amount of 99999999999999999999.99 is an invalid row, never paid; the others are', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet();
    const text = await readFile(sheet, 'utf8');
    await writeFile(
      sheet,
      text.replace('PAY-2026-11-0002,125.50,', 'PAY-2026-11-0002,99999999999999999999.99,'),
    );
    const result = await runAgainst(sb, sheet, ['--json', '--rate', '200']);
    expect(result.code, result.stderr).toBe(1);
    expect(summaryOf(result).statuses).toMatchObject({ submitted: 11, invalid: 1 });
    expect(paymentsOf(sb).map((t) => t.amount)).not.toContain('99999999999999999999.99');
    expect(paymentsOf(sb)).toHaveLength(11);
    const rows = await readCsv(summaryOf(result).results);
    const row = rows.find((r) => r['reference'] === 'PAY-2026-11-0002')!;
    expect(row['result.status']).toBe('invalid');
    expect(row['result.errors']).toBe(
      'amount "99999999999999999999.99" is above 1,000,000,000,000.00, more than any real payout (a pasted account number?): fix the amount cell, or split the payout',
    );
  });
});
