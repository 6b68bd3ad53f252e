/**
 * The service's refusals land on the right rows with its own words (400,
 * 403, 404 and 422), the other rows are paid, and a re-run neither pays a row twice nor turns
 * a failed payment into a successful one.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { duplicates, paymentsOf, runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { readCsv, type SheetRow, sampleRows, writeSheet } from '../helpers/sheets.js';
import { call, OTHER, recipientBody, token } from '../sandbox/helpers.js';

/** Ids made through the API before the run, for the rows that name existing records. */
async function existingRecords(sb: SandboxHandle) {
  const mine = await token(sb);
  const theirs = await token(sb, OTHER);
  const beneficiary = async (accessToken: string) => {
    const answer = await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'Ana Lopez', country: 'US' },
    });
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };
  const recipient = async (accessToken: string, beneficiaryId: string) => {
    const answer = await call(sb, 'POST', PATHS.recipients, {
      token: accessToken,
      body: recipientBody('ACH', beneficiaryId),
    });
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };
  const myBeneficiary = await beneficiary(mine);
  const myRecipient = await recipient(mine, myBeneficiary);
  const otherBeneficiary = await beneficiary(theirs);
  const otherRecipient = await recipient(theirs, otherBeneficiary);
  const goneBeneficiary = await beneficiary(mine);
  const orphanRecipient = await recipient(mine, goneBeneficiary);
  const deleted = await call(sb, 'DELETE', PATHS.beneficiary(goneBeneficiary), { token: mine });
  expect(deleted.status).toBe(204);
  return { myBeneficiary, myRecipient, otherBeneficiary, otherRecipient, goneBeneficiary, orphanRecipient };
}

/** The sample's ACH row paid to an existing beneficiary: its own columns, no new-beneficiary ones. */
function toBeneficiary(reference: string, beneficiaryId: string): SheetRow {
  return {
    ...sampleRows()[0]!,
    reference,
    beneficiaryId,
    beneficiaryType: '',
    beneficiaryName: '',
    beneficiaryEmail: '',
    beneficiaryCountry: '',
  };
}

/** A row paying an existing recipient: only the payout's own columns. */
function toRecipient(reference: string, recipientId: string, rail = 'ACH', currency = 'USD'): SheetRow {
  return { reference, amount: '42.00', currency, type: rail, recipientId };
}

describe('payouts run when the service refuses rows', () => {
  it('puts each 400, 403, 404 and 422 on its row with the service message, and pays the rest', async () => {
    const sb = await testSandbox();
    const ids = await existingRecords(sb);
    const unknownBeneficiary = randomUUID();
    const unknownRecipient = randomUUID();
    const longReference = `LONG-${'x'.repeat(300)}`;
    const sample = sampleRows();
    const failPayee = {
      ...sample[0]!,
      reference: 'REF-FAIL',
      beneficiaryName: 'Fail Payee',
      individualName: 'FAIL Payee',
    };
    const rows: SheetRow[] = [
      { ...sample[0]!, reference: 'REF-OK-NEW' },
      toBeneficiary('REF-OK-BENEFICIARY', ids.myBeneficiary),
      toRecipient('REF-OK-RECIPIENT', ids.myRecipient),
      toBeneficiary('REF-403-BENEFICIARY', ids.otherBeneficiary),
      toRecipient('REF-403-RECIPIENT', ids.otherRecipient),
      toBeneficiary('REF-404-BENEFICIARY', unknownBeneficiary),
      toRecipient('REF-404-RECIPIENT', unknownRecipient),
      toBeneficiary('REF-404-DELETED', ids.goneBeneficiary),
      toRecipient('REF-422-DELETED', ids.orphanRecipient),
      toRecipient('REF-422-CURRENCY', ids.myRecipient, 'SPEI', 'MXN'),
      { ...sample[1]!, reference: longReference },
      failPayee,
    ];
    const dir = await testDir();
    const sheet = path.join(dir, 'refusals.csv');
    await writeSheet(sheet, rows);

    const result = await runAgainst(sb, sheet, [
      '--json',
      '--concurrency',
      '4',
      '--rate',
      '200',
      '--wait',
      '3',
    ]);
    expect(result.code, result.stderr).toBe(1);
    const summary = summaryOf(result);
    const results = new Map((await readCsv(summary.results)).map((r) => [r['reference']!, r]));
    const outcome = (reference: string) => ({
      status: results.get(reference)?.['result.status'],
      errors: results.get(reference)?.['result.errors'],
    });
    const failed = (errors: string) => ({ status: 'failed', errors });
    const refused = (id: string, kind: string) =>
      `${kind} ${id} belongs to another integrator - this token may not use it`;

    expect(outcome('REF-OK-NEW')).toEqual({ status: 'completed', errors: '' });
    expect(outcome('REF-OK-BENEFICIARY')).toEqual({ status: 'completed', errors: '' });
    expect(outcome('REF-OK-RECIPIENT')).toEqual({ status: 'completed', errors: '' });
    expect(outcome('REF-403-BENEFICIARY')).toEqual(failed(refused(ids.otherBeneficiary, 'Beneficiary')));
    expect(outcome('REF-403-RECIPIENT')).toEqual(failed(refused(ids.otherRecipient, 'Recipient')));
    expect(outcome('REF-404-BENEFICIARY')).toEqual(failed(`Beneficiary ${unknownBeneficiary} not found`));
    expect(outcome('REF-404-RECIPIENT')).toEqual(failed(`Recipient ${unknownRecipient} not found`));
    expect(outcome('REF-404-DELETED')).toEqual(failed(`Beneficiary ${ids.goneBeneficiary} not found`));
    expect(outcome('REF-422-DELETED')).toEqual(
      failed(
        `Beneficiary ${ids.goneBeneficiary} of recipient ${ids.orphanRecipient} has been deleted - nothing can be paid to it`,
      ),
    );
    expect(outcome('REF-422-CURRENCY')).toEqual(
      failed(`Currency MXN does not match currency USD of recipient ${ids.myRecipient}`),
    );
    // The service's limit on the reference's length is checked by the dry run: never sent.
    expect(outcome(longReference)).toEqual({
      status: 'invalid',
      errors: 'reference is longer than 255 characters, which the service refuses: shorten it',
    });
    // Paid, then refused by the receiving bank (the sandbox's FAIL trigger), seen by --wait.
    expect(outcome('REF-FAIL').status).toBe('failed');
    expect(outcome('REF-FAIL').errors).toMatch(/^The receiving bank rejected the payment to "FAIL Payee"/);

    const payments = paymentsOf(sb);
    expect(payments.map((t) => t.reference).sort()).toEqual(
      ['REF-FAIL', 'REF-OK-BENEFICIARY', 'REF-OK-NEW', 'REF-OK-RECIPIENT'].sort(),
    );
    expect(results.get('REF-OK-RECIPIENT')?.['result.recipientId']).toBe(ids.myRecipient);
    expect(results.get('REF-OK-BENEFICIARY')?.['result.beneficiaryId']).toBe(ids.myBeneficiary);
    expect(results.get('REF-FAIL')?.['result.transactionId']).toBe(
      payments.find((t) => t.reference === 'REF-FAIL')?.id,
    );

    // Run again: the refused rows are tried again and refused again; the paid ones are skipped,
    // and the payment the bank refused stays failed (its transaction exists, it is not re-sent).
    const again = await runAgainst(sb, sheet, ['--json', '--concurrency', '4', '--rate', '200']);
    expect(again.code, again.stderr).toBe(1);
    const rerun = new Map((await readCsv(summaryOf(again).results)).map((r) => [r['reference']!, r]));
    expect(rerun.get('REF-OK-NEW')?.['result.status']).toBe('skipped');
    expect(rerun.get('REF-OK-RECIPIENT')?.['result.status']).toBe('skipped');
    expect(rerun.get('REF-404-RECIPIENT')?.['result.status']).toBe('failed');
    expect(rerun.get('REF-FAIL')?.['result.status']).toBe('failed');
    expect(rerun.get('REF-FAIL')?.['result.errors']).toMatch(/The receiving bank rejected the payment/);
    expect(rerun.get('REF-FAIL')?.['result.transactionId']).toBe(
      results.get('REF-FAIL')?.['result.transactionId'],
    );
    expect(duplicates(paymentsOf(sb), (t) => t.reference)).toEqual([]);
    expect(paymentsOf(sb)).toHaveLength(4);
  });

  it('puts a 400 the dry run did not foresee on its row, every message word for word', async () => {
    const sb = await testSandbox();
    const rejected = sampleRows()[2]!;
    // The service's rules may be stricter than the dry run's copy of them; its 400 answer for
    // the recipient (error body, validation messages) must reach the row as it is.
    const proxy = await scriptedProxy(sb.url, ({ method, path: url, body }) =>
      method === 'POST' && url === '/v1/recipients' && body.includes(`"${rejected['businessName']}"`)
        ? {
            kind: 'answer',
            status: 400,
            body: {
              timestamp: '2026-11-21T03:00:00.000+00:00',
              status: 400,
              error: 'Bad Request',
              message: 'routingNumber is invalid; bankName must be provided',
              path: '/v1/recipients',
              errors: ['routingNumber is invalid', 'bankName must be provided'],
            },
          }
        : FORWARD,
    );
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await writeSheet(sheet, [rejected, { ...sampleRows()[0]!, reference: 'REF-OK' }]);
    const result = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(result.code, result.stderr).toBe(1);
    const rows = new Map((await readCsv(summaryOf(result).results)).map((r) => [r['reference']!, r]));
    expect(rows.get(rejected['reference']!)?.['result.status']).toBe('failed');
    expect(rows.get(rejected['reference']!)?.['result.errors']).toBe(
      'routingNumber is invalid; bankName must be provided',
    );
    expect(rows.get('REF-OK')?.['result.status']).toBe('submitted');
    expect(paymentsOf(sb).map((t) => t.reference)).toEqual(['REF-OK']);
  });
});
