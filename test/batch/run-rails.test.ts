/**
 * `payouts run` end to end against the sandbox: all seven rails, the
 * results file against the ledger, and beneficiaries and recipients created once per payee.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOnePaymentPerRow, runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { CLEAN_SAMPLE, generateRows, readCsv, sampleRows, writeSheet } from '../helpers/sheets.js';

const RAILS = ['ACH', 'WIRE', 'SWIFT', 'RTP', 'SPEI', 'PIX', 'COP'];

describe('payouts run on the clean sample (all seven rails)', () => {
  it('submits every row once, and the results file names what the ledger holds', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const rows = sampleRows();

    const result = await runAgainst(sb, sheet, ['--json', '--concurrency', '4', '--rate', '200']);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(summary.statuses).toMatchObject({ submitted: 12, failed: 0, unknown: 0, invalid: 0 });

    const payments = await expectOnePaymentPerRow(sb, rows);
    const ledger = sb.ledger();
    const recipients = new Map(ledger.recipients.map((r) => [r.id, r]));
    // Every rail was paid, each in its own currency.
    expect(new Set([...payments.values()].map((t) => recipients.get(t.recipientId)?.type))).toEqual(
      new Set(RAILS),
    );

    const results = await readCsv(summary.results);
    expect(results.map((r) => r['reference'])).toEqual(rows.map((r) => r['reference']));
    for (const row of results) {
      const payment = payments.get(row['reference']!)!;
      expect(row['result.status']).toBe('submitted');
      expect(row['result.errors']).toBe('');
      expect({
        transactionId: row['result.transactionId'],
        simulationId: row['result.simulationId'],
        recipientId: row['result.recipientId'],
        beneficiaryId: row['result.beneficiaryId'],
      }).toEqual({
        transactionId: payment.id,
        simulationId: payment.simulationId,
        recipientId: payment.recipientId,
        // The integrator-level row has no beneficiary.
        beneficiaryId: payment.beneficiaryId ?? '',
      });
      expect(recipients.get(payment.recipientId)?.currency).toBe(row['currency']);
      expect(recipients.get(payment.recipientId)?.type).toBe(row['type']!.toUpperCase());
    }
    const integratorLevel = results.find((r) => r['integratorLevel'] === 'true')!;
    expect(integratorLevel['result.beneficiaryId']).toBe('');
    expect(recipients.get(integratorLevel['result.recipientId']!)?.integratorLevel).toBe(true);
  });

  it('with --wait, confirms every row completed by a status check', async () => {
    const sb = await testSandbox({ settleDelayMs: 50 });
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);

    const result = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--wait', '5']);
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses).toMatchObject({ completed: 12, submitted: 0 });
    const payments = await expectOnePaymentPerRow(sb, sampleRows());
    expect([...payments.values()].every((t) => t.status === 'COMPLETED')).toBe(true);
    const results = await readCsv(summaryOf(result).results);
    expect(results.map((r) => r['result.status'])).toEqual(Array(12).fill('completed'));
    expect(results.map((r) => r['result.transactionId'])).toEqual(
      results.map((r) => payments.get(r['reference']!)!.id),
    );
  });
});

describe('payouts run creates each beneficiary and recipient once', () => {
  it('at concurrency 8, rows naming the same payee share one beneficiary and one recipient', async () => {
    const sb = await testSandbox({ latencyMs: 5 });
    const dir = await testDir();
    const sheet = path.join(dir, 'shared.csv');
    // 48 rows, 6 payees of 8 rows each: a whole payee's rows are in flight together.
    const rows = generateRows(48, { rowsPerPayee: 8 });
    await writeSheet(sheet, rows);

    const result = await runAgainst(sb, sheet, ['--json', '--concurrency', '8', '--rate', '500']);
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses).toMatchObject({ submitted: 48 });
    await expectOnePaymentPerRow(sb, rows);

    const ledger = sb.ledger();
    // The sample's templates 0..5 are the first six payees; none is integrator-level.
    expect(ledger.beneficiaries).toHaveLength(6);
    expect(ledger.recipients).toHaveLength(6);
    expect(ledger.requests.byRoute['POST /v1/beneficiaries']).toBe(6);
    expect(ledger.requests.byRoute['POST /v1/recipients']).toBe(6);

    const results = await readCsv(summaryOf(result).results);
    for (let payee = 0; payee < 6; payee += 1) {
      const block = results.slice(payee * 8, payee * 8 + 8);
      expect(new Set(block.map((r) => r['result.recipientId'])).size).toBe(1);
      expect(new Set(block.map((r) => r['result.beneficiaryId'])).size).toBe(1);
    }
    expect(new Set(results.map((r) => r['result.recipientId'])).size).toBe(6);
  });
});
