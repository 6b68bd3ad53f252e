/**
 * A transaction whose answer never arrives is `unknown` (docs/sheets.md "The results file",
 * statuses): it is not sent again without --retry-unknown, and with it the same Idempotency-Key
 * fetches the one transaction the service made instead of paying twice.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectOnePaymentPerRow,
  paymentsOf,
  runAgainst,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { CLEAN_SAMPLE, readCsv, type SheetRow, sampleRows } from '../helpers/sheets.js';

const LOST = 'PAY-2026-11-0003';

describe('payouts run with a transaction whose answer is lost', () => {
  it('marks it unknown, leaves it alone on a plain re-run, and resolves it with --retry-unknown', async () => {
    const sb = await testSandbox();
    // Every attempt at the row's transaction reaches the service, and its answer is cut off.
    let cut = true;
    const proxy = await scriptedProxy(sb.url, ({ method, path: url, body }) =>
      cut && method === 'POST' && url === '/v1/transactions' && body.includes(`"reference":"${LOST}"`)
        ? { kind: 'cut' }
        : FORWARD,
    );
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const row = (rows: SheetRow[]) => rows.find((r) => r['reference'] === LOST)!;
    const transactionPosts = () => sb.ledger().requests.byRoute['POST /v1/transactions'] ?? 0;

    const first = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(first.code, first.stderr).toBe(1);
    expect(summaryOf(first).statuses).toMatchObject({ submitted: 11, unknown: 1 });
    const lost = row(await readCsv(summaryOf(first).results));
    expect(lost['result.status']).toBe('unknown');
    expect(lost['result.errors']).toMatch(
      /^the connection was lost while the transaction was being sent \(.+\), so it may have been paid - run again with --retry-unknown/,
    );
    expect(lost['result.transactionId']).toBe('');
    expect(lost['result.simulationId']).not.toBe('');
    // The service did make it (once, however many attempts were cut off).
    expect(paymentsOf(sb).filter((t) => t.reference === LOST)).toHaveLength(1);

    const postsBefore = transactionPosts();
    // Runs again against the same base URL (another one would be another service).
    const plain = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(plain.code, plain.stderr).toBe(1);
    expect(summaryOf(plain).statuses).toMatchObject({ skipped: 11, unknown: 1 });
    const stillLost = row(await readCsv(summaryOf(plain).results));
    expect(stillLost['result.status']).toBe('unknown');
    // The earlier run did not stop: it lost this one answer, and the row says so, with its advice.
    expect(stillLost['result.errors']).toMatch(
      /^an earlier run of sheet payouts\.csv sent the transaction request on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ and its outcome is unknown: the connection was lost while the transaction was being sent \(.+\), so it may have been paid - run again with --retry-unknown/,
    );
    expect(transactionPosts()).toBe(postsBefore);

    cut = false;
    const retried = await runAgainst(proxy, sheet, ['--json', '--rate', '200', '--retry-unknown']);
    expect(retried.code, retried.stderr).toBe(0);
    expect(summaryOf(retried).statuses).toMatchObject({ skipped: 11, submitted: 1 });
    const payments = await expectOnePaymentPerRow(sb, sampleRows(), proxy);
    const resolved = row(await readCsv(summaryOf(retried).results));
    expect(resolved['result.status']).toBe('submitted');
    expect(resolved['result.transactionId']).toBe(payments.get(LOST)!.id);
    expect(transactionPosts()).toBe(postsBefore + 1);
  });
});
