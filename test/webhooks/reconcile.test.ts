import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATHS, type WebhookPayload } from '../../src/api/contract.js';
import { readTransactionOutcomes, transactionOutcomeOf } from '../../src/webhooks/reconcile.js';
import { call, quoteFor, sandbox, token } from '../sandbox/helpers.js';
import { payload, receiver, SECRET, tempDir } from './helpers.js';

async function eventsFileWith(lines: (WebhookPayload | string | object)[]): Promise<string> {
  const file = path.join(await tempDir(), 'events.jsonl');
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
  await writeFile(file, `${text}\n`);
  return file;
}

const record = (event: WebhookPayload, receivedAt = '2026-01-02T03:04:05.000Z') => ({ receivedAt, event });

describe('transactionOutcomeOf', () => {
  it('maps TRANSACTION_COMPLETED to completed and TRANSACTION_FAILED to failed; other events to nothing', () => {
    expect(transactionOutcomeOf(payload({ resourceId: 't1' }))).toEqual({
      transactionId: 't1',
      outcome: {
        status: 'completed',
        message: null,
        operation: 'TRANSACTION_COMPLETED',
        occurredAt: '2026-01-02T03:04:05.678',
        receivedAt: '',
      },
    });
    const failed = payload({ operation: 'TRANSACTION_FAILED', success: false, message: 'Account closed' });
    expect(transactionOutcomeOf(failed)?.outcome).toMatchObject({
      status: 'failed',
      message: 'Account closed',
    });
    expect(transactionOutcomeOf(payload({ operation: 'TRANSACTION_CREATED' }))).toBeUndefined();
    expect(transactionOutcomeOf(payload({ operation: 'BENEFICIARY_CREATED' }))).toBeUndefined();
  });

  it('takes the message from data.failureReason when message is null, and success false as failure', () => {
    const fromData = payload({
      operation: 'TRANSACTION_FAILED',
      success: false,
      message: null,
      data: { failureReason: 'Insufficient funds' },
    });
    expect(transactionOutcomeOf(fromData)?.outcome).toMatchObject({
      status: 'failed',
      message: 'Insufficient funds',
    });
    const completedButFalse = payload({ success: false, message: '' });
    expect(transactionOutcomeOf(completedButFalse)?.outcome).toMatchObject({
      status: 'failed',
      message: null,
    });
  });
});

describe('readTransactionOutcomes', () => {
  it('reads a missing file as no outcomes', async () => {
    const dir = await tempDir();
    expect((await readTransactionOutcomes(path.join(dir, 'none.jsonl'))).size).toBe(0);
  });

  it('skips and reports lines that are not events; accepts bare payload lines', async () => {
    const file = await eventsFileWith([
      record(payload({ resourceId: 't1' })),
      'not json',
      { receivedAt: 'x', event: { operation: 'TRANSACTION_COMPLETED' } },
      payload({ resourceId: 't2', operation: 'TRANSACTION_FAILED', success: false, message: 'No' }),
    ]);
    const bad: number[] = [];
    const outcomes = await readTransactionOutcomes(file, { onBadLine: (line) => void bad.push(line) });
    expect(bad).toEqual([2, 3]);
    expect([...outcomes].map(([id, o]) => [id, o.status, o.receivedAt])).toEqual([
      ['t1', 'completed', '2026-01-02T03:04:05.000Z'],
      ['t2', 'failed', ''],
    ]);
  });

  it('keeps the outcome that occurred last when a transaction has two, whatever the file order', async () => {
    const failedLater = payload({
      operation: 'TRANSACTION_FAILED',
      success: false,
      message: 'Returned by the bank',
      createdAt: '2026-01-02T03:04:06.5',
    });
    const completedEarlier = payload({ createdAt: '2026-01-02T03:04:05.678' });
    const file = await eventsFileWith([record(failedLater), record(completedEarlier)]);
    expect((await readTransactionOutcomes(file)).get('tx-1')).toMatchObject({
      status: 'failed',
      message: 'Returned by the bank',
    });
  });

  it('turns sandbox deliveries into completed and failed (failure trigger: a name starting with FAIL)', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const r = await receiver({ eventsFile });
    const sb = await sandbox({ webhookSecret: SECRET, webhookUrl: r.url, duplicateRate: 1 });
    const accessToken = await token(sb);
    const paid = await quoteFor(sb, accessToken, { name: 'Ana Lopez' });
    const refused = await quoteFor(sb, accessToken, { name: 'FAIL Test' });
    const pending = await quoteFor(sb, accessToken, { name: 'Not Sent' });
    const ok = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: paid.simulationId },
    });
    const ko = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: refused.simulationId },
    });
    await sb.whenIdle();
    await r.idle();

    const outcomes = await readTransactionOutcomes(eventsFile);
    expect(outcomes.size).toBe(2);
    expect(outcomes.get(ok.body.id)).toMatchObject({ status: 'completed', message: null });
    expect(outcomes.get(ko.body.id)).toMatchObject({
      status: 'failed',
      operation: 'TRANSACTION_FAILED',
      message: expect.stringContaining('rejected the payment to "FAIL Test"'),
    });
    expect(outcomes.has(pending.simulationId)).toBe(false);
  });
});
