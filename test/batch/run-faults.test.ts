/**
 * `payouts run` through the service's bad days: a token that expires
 * mid-run, 429 storms, 5xx, connections reset after the request took effect, and expired
 * simulations. Every row still ends paid exactly once.
 */

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectClearOutcomes,
  expectOnePaymentPerRow,
  paymentsOf,
  registerRecords,
  resumeUntilDone,
  runAgainst,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { generateRows, readCsv, sampleRows, writeSheet } from '../helpers/sheets.js';

const TOKEN_ROUTE = 'POST /auth/realms/service/protocol/openid-connect/token';

describe('payouts run when the service misbehaves', () => {
  it('carries on when the token expires mid-run, before the client meant to refresh it', async () => {
    // The service's clock runs 1.5 times as fast: its 2 s tokens die after 0.7 to 1.3 s, before
    // the client's refresh at 80% of expires_in, so requests meet 401 and re-authenticate.
    const t0 = Date.now();
    const sb = await testSandbox({
      tokenTtl: 2,
      latencyMs: 5,
      clock: { now: () => t0 + (Date.now() - t0) * 1.5 },
    });
    const dir = await testDir();
    const sheet = path.join(dir, 'token.csv');
    const rows = generateRows(90, { prefix: 'TOK' });
    await writeSheet(sheet, rows);

    const result = await runAgainst(sb, sheet, ['--json', '--concurrency', '4', '--rate', '80']);
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses).toMatchObject({ submitted: 90 });
    await expectOnePaymentPerRow(sb, rows);
    const { requests } = sb.ledger();
    expect(requests.byStatus['401']).toBeGreaterThanOrEqual(2);
    expect(requests.byRoute[TOKEN_ROUTE]).toBeGreaterThanOrEqual(3);
  });

  it('waits out a 429 storm: a sandbox limit well below --rate', async () => {
    // A bucket of 16 refilled at 16 per second: 144 requests meet it even on a loaded machine
    // (the run sends at 35 per second or more there; at 40 it sometimes did not).
    const sb = await testSandbox({ rateLimit: 16 });
    const dir = await testDir();
    const sheet = path.join(dir, 'storm.csv');
    const rows = generateRows(36, { prefix: 'STORM' });
    await writeSheet(sheet, rows);

    const result = await runAgainst(sb, sheet, ['--json', '--concurrency', '8', '--rate', '400']);
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses).toMatchObject({ submitted: 36 });
    await expectOnePaymentPerRow(sb, rows);
    const { requests } = sb.ledger();
    expect(requests.injected.rateLimited).toBeGreaterThan(0);
    expect(requests.byStatus['429']).toBe(requests.injected.rateLimited);
  });

  // Retries are bounded (5 attempts), so at these rates a row now and then runs out of them: it
  // must then say so clearly, and the next run pays it, never twice. Creations cut off after
  // they took effect are answered again from their Idempotency-Key: each payee is created once.
  it.each([
    { fault: '500, 502 and 503 answers', options: { errorRate: 0.2, seed: 7 }, injected: 'errors' },
    {
      fault: 'connections cut after the request took effect',
      options: { resetRate: 0.2, seed: 11 },
      injected: 'resets',
    },
  ] as const)('gets through $fault without paying or creating twice', async ({ options, injected }) => {
    const sb = await testSandbox(options);
    const dir = await testDir();
    const sheet = path.join(dir, `${injected}.csv`);
    const rows = generateRows(36, { prefix: injected.toUpperCase() });
    await writeSheet(sheet, rows);
    const args = ['--json', '--concurrency', '8', '--rate', '400'];

    const first = await expectClearOutcomes(sb, await runAgainst(sb, sheet, args));
    expect(first.filter((r) => r['result.status'] === 'submitted').length).toBeGreaterThanOrEqual(34);
    expect(sb.ledger().requests.injected[injected]).toBeGreaterThan(5);
    if (first.some((r) => r['result.status'] !== 'submitted')) await resumeUntilDone(sb, sheet, args);
    await expectOnePaymentPerRow(sb, rows);
    const { beneficiaries, recipients } = sb.ledger();
    // 36 rows, 3 per payee; the sample's 12th template is integrator-level (no beneficiary).
    expect(recipients).toHaveLength(12);
    expect(beneficiaries).toHaveLength(11);
  });

  it('re-quotes a simulation that expired before its transaction arrived, under the same key', async () => {
    const sb = await testSandbox({ simulationTtl: 1 });
    // The first transaction request of each row is held past the quote's lifetime.
    const seen = new Set<string>();
    const proxy = await scriptedProxy(sb.url, ({ method, path: url, body }) => {
      if (method !== 'POST' || url !== '/v1/transactions') return FORWARD;
      const { reference } = JSON.parse(body) as { reference: string };
      if (seen.has(reference)) return FORWARD;
      seen.add(reference);
      return { kind: 'forward', holdMs: 1100 };
    });
    const dir = await testDir();
    const sheet = path.join(dir, 'expired.csv');
    const rows = sampleRows();
    await writeSheet(sheet, rows);

    const result = await runAgainst(proxy, sheet, ['--json', '--concurrency', '12', '--rate', '400']);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(summary.statuses).toMatchObject({ submitted: 12 });
    const payments = await expectOnePaymentPerRow(sb, rows, proxy);
    const ledger = sb.ledger();
    expect(ledger.requests.byStatus['422']).toBe(12);
    // Two quotes per row: the expired one, unused, and the one paid.
    expect(ledger.simulations).toHaveLength(24);
    const results = await readCsv(summary.results);
    for (const row of results) {
      const payment = payments.get(row['reference']!)!;
      expect(row['result.simulationId']).toBe(payment.simulationId);
      const quotes = ledger.simulations.filter(
        (q) => q.recipientId === payment.recipientId && q.amount === payment.amount,
      );
      expect(quotes.map((q) => q.transactionId ?? 'unused').sort()).toEqual([payment.id, 'unused'].sort());
    }
    // The register holds each row once, submitted with its second quote and its one key.
    const records = await registerRecords(summary.register!, sb, proxy);
    for (const row of rows) {
      const payment = payments.get(row['reference']!)!;
      expect(records.get(row['reference']!)).toMatchObject({
        state: 'submitted',
        simulationId: payment.simulationId,
        transactionId: payment.id,
        idempotencyKey: payment.idempotencyKey,
      });
    }
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('stops with exit 6 when the credentials are refused mid-run (rows remain to run again); fixed, the next run pays each row once', async () => {
    // Tokens die fast (the service's clock runs at 3x); once rows were paid the identity endpoint
    // refuses the password (rotated while the run was under way): the event, not a guessed time.
    const t0 = Date.now();
    const sb = await testSandbox({
      tokenTtl: 2,
      latencyMs: 5,
      clock: { now: () => t0 + (Date.now() - t0) * 3 },
    });
    let rotated = true;
    const proxy = await scriptedProxy(sb.url, ({ path: url }) =>
      rotated && url.includes('/token') && paymentsOf(sb).length > 0
        ? {
            kind: 'answer',
            status: 401,
            body: { error: 'invalid_grant', error_description: 'Invalid user credentials' },
          }
        : FORWARD,
    );
    const dir = await testDir();
    const sheet = path.join(dir, 'rotated.csv');
    const rows = generateRows(150, { prefix: 'ROT' });
    await writeSheet(sheet, rows);

    const refused = await runAgainst(proxy, sheet, ['--concurrency', '8', '--rate', '100']);
    expect(refused.code, refused.stderr).toBe(6);
    expect(refused.stderr).toContain('refused the credentials (401 invalid_grant: Invalid user credentials)');
    const paid = paymentsOf(sb).length;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThan(rows.length);
    // The results file is still written: every row, the paid ones submitted, the rest saying why.
    const written = await readCsv(path.join(dir, 'rotated.results.csv'));
    expect(written).toHaveLength(rows.length);
    const statuses = written.map((r) => r['result.status']);
    expect(statuses.filter((s) => s === 'submitted').length).toBeLessThanOrEqual(paid);
    expect(statuses.every((s) => s === 'submitted' || s === 'unknown' || s === 'skipped')).toBe(true);
    for (const row of written.filter((r) => r['result.status'] !== 'submitted')) {
      expect(row['result.errors']).toMatch(/the run stopped \(.*credentials/);
    }
    // Nothing more leaves once the run has ended.
    const requests = sb.ledger().requests.total;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sb.ledger().requests.total).toBe(requests);

    // Rows whose transaction was about to leave are unknown to the next run: --retry-unknown
    // sends them with their keys, and nothing is paid twice. (The same base URL: the proxy,
    // now letting the new password through; another URL would be another service.)
    rotated = false;
    const resumed = await runAgainst(proxy, sheet, [
      '--json',
      '--concurrency',
      '8',
      '--rate',
      '400',
      '--retry-unknown',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(summaryOf(resumed).statuses['skipped']).toBeGreaterThanOrEqual(paid);
    await expectOnePaymentPerRow(sb, rows, proxy);
  });
});
