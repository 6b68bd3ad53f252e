/**
 * The fault soak: 10% errors, 3% connections cut after the request took effect, and
 * a service rate limit below the requested rate, all at once. Every row ends submitted, or
 * failed or unknown with a clear message; nothing is paid twice, and a re-run finishes the job.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  duplicates,
  expectClearOutcomes,
  expectOnePaymentPerRow,
  paymentsOf,
  resumeUntilDone,
  runAgainst,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { generateRows, writeSheet } from '../helpers/sheets.js';

describe('payouts run fault soak', () => {
  it('ends every row submitted, failed or unknown with a clear message, and never pays twice', async () => {
    const sb = await testSandbox({
      errorRate: 0.1,
      resetRate: 0.03,
      // Well below what the run asks (--rate 150), so that a run slowed by a loaded machine still
      // meets the limit (at 60 a loaded CI run never did).
      rateLimit: 25,
      seed: 4242,
      latencyMs: 2,
    });
    const dir = await testDir();
    const sheet = path.join(dir, 'soak.csv');
    const rows = generateRows(60, { prefix: 'SOAK' });
    await writeSheet(sheet, rows);
    const args = ['--json', '--concurrency', '8', '--rate', '150'];

    const first = await runAgainst(sb, sheet, args);
    await expectClearOutcomes(sb, first);
    const payments = paymentsOf(sb);
    expect(duplicates(payments, (t) => t.idempotencyKey)).toEqual([]);
    expect(duplicates(payments, (t) => t.reference)).toEqual([]);
    const { injected } = sb.ledger().requests;
    expect(injected.errors).toBeGreaterThan(0);
    expect(injected.resets).toBeGreaterThan(0);
    expect(injected.rateLimited).toBeGreaterThan(0);

    // Resume (re-sending unknown rows with their keys) until every row is paid.
    if (first.code !== 0) await resumeUntilDone(sb, sheet, args);
    await expectOnePaymentPerRow(sb, rows);
  });
});
