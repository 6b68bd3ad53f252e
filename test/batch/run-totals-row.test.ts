// A TOTAL row is a control total that comes for free. `payouts run` refuses the batch
// (exit 4, nothing sent) when it does not match the rows above it, and otherwise pays the rows
// without counting or sending the totals row.
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { paymentsOf, runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/real-sheets');

async function copied(name: string): Promise<string> {
  const target = path.join(await testDir(), name);
  await copyFile(path.join(FIXTURES, name), target);
  return target;
}

describe('payouts run and the totals row', () => {
  it('exit 4 and nothing sent when the TOTAL row does not match', async () => {
    const sb = await testSandbox();
    const result = await runAgainst(sb, await copied('excel-monthly-total-off.xlsx'));
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain(
      'control totals do not match, so nothing was sent: the totals row (row 10) says USD 2,701.00 but the 5 rows above it add up to USD 2,700.00',
    );
    expect(sb.ledger().requests.total).toBe(0);
  });

  it('pays the 5 rows of the workbook, --expect-count 5 holds, the totals row is not sent', async () => {
    const sb = await testSandbox();
    const result = await runAgainst(sb, await copied('excel-monthly.xlsx'), [
      '--json',
      '--expect-count',
      '5',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(summary.rows).toBe(5);
    expect(summary.totals).toEqual({ USD: '2700.00' });
    const payments = paymentsOf(sb);
    expect(payments.map((t) => t.amount).sort()).toEqual(['0.30', '1049.41', '1250.00', '300.30', '99.99']);
    // One payee written with a no-break space and with a plain one: one beneficiary.
    expect(new Set(payments.map((t) => t.beneficiaryId)).size).toBe(4);
  });
});
