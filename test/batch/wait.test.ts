/** run --wait's status check (batch/wait.ts), on injected time: the one reconcile uses too. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { PayoutsClient } from '../../src/api/client.js';
import { askTransaction, awaitOutcomes } from '../../src/batch/wait.js';
import { fakeTime } from '../api/helpers/fake-time.js';

/** A client whose transactions answer from a script of statuses, one per check. */
function clientOf(script: Record<string, string[]>) {
  const asked: string[] = [];
  const client = {
    transactions: {
      async get(id: string) {
        asked.push(id);
        const status = script[id]!.length > 1 ? script[id]!.shift()! : script[id]![0]!;
        return { id, status, failureReason: status === 'FAILED' ? 'Insufficient balance' : null };
      },
    },
  } as unknown as PayoutsClient;
  return { client, asked };
}

const row = (transactionId: string) => ({
  status: 'submitted' as const,
  errors: [],
  transactionId,
  rowNumber: 2,
});

describe('awaitOutcomes', () => {
  it('settles each transaction as it ends and leaves the pending ones submitted when time is up', async () => {
    const time = fakeTime();
    const { client, asked } = clientOf({
      'tx-1': ['PENDING', 'COMPLETED'],
      'tx-2': ['PENDING', 'PENDING', 'FAILED'],
      'tx-3': ['PENDING'],
    });
    const results = new Map([
      ['A', row('tx-1')],
      ['B', row('tx-2')],
      ['C', row('tx-3')],
    ]);
    const settled: string[] = [];
    await awaitOutcomes(
      client,
      async (reference, result) => void settled.push(`${reference} ${result.status}`),
      results,
      {
        seconds: 2,
        pollMs: 500,
        logger: pino({ level: 'silent' }),
        signal: new AbortController().signal,
        clock: time.clock,
        sleep: time.sleep,
      },
    );
    expect(settled).toEqual(['A completed', 'B failed']);
    expect(results.get('B')!.errors).toEqual(['Insufficient balance']);
    expect(results.get('C')!.status).toBe('submitted');
    // Rounds at 0, 0.5, 1, 1.5 s: four checks of the one still pending, and no more.
    expect(asked.filter((id) => id === 'tx-3')).toHaveLength(4);
    expect(time.sleeps).toEqual([500, 500, 500, 500]);
  });

  it('askTransaction: pending, completed, or failed with the reason', async () => {
    const { client } = clientOf({ p: ['PENDING'], c: ['COMPLETED'], f: ['FAILED'] });
    expect(await askTransaction(client, 'p')).toEqual({ state: 'pending' });
    expect(await askTransaction(client, 'c')).toEqual({ state: 'completed' });
    expect(await askTransaction(client, 'f')).toEqual({ state: 'failed', reason: 'Insufficient balance' });
  });
});
