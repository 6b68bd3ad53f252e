/**
 * What the sandbox holds as objects does not grow with its ledger: the requests in flight and
 * the recent records of each kind (src/sandbox/table.ts), never a map of every beneficiary,
 * recipient, quote, transaction and kept answer. Measured as the V8 heap in use after a forced
 * collection, at two ledger sizes, with a window of 64 records so that both sizes are well past
 * it. Holding every payout as objects, as the sandbox did before its store, costs about 6 KB a
 * payout: 3,000 payouts more would be 18 MB more.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { call, recipientBody, sandbox, token } from './helpers.js';

const MB = 1024 * 1024;
/** Payouts paid at once, as a run keeps rows in flight. */
const IN_FLIGHT = 8;

/** A forced collection, where the test process was not started with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** The heap in use after a forced collection, once the sandbox has settled everything. */
async function heapAfterCollection(sb: SandboxHandle): Promise<number> {
  await sb.whenIdle();
  collectGarbage();
  return getHeapStatistics().used_heap_size;
}

/** What a run asks for one row: beneficiary, recipient, quote and transaction, each POST with a key. */
async function payOne(sb: SandboxHandle, accessToken: string, n: number): Promise<void> {
  const post = async (path: string, body: unknown, step: string) => {
    const answer = await call(sb, 'POST', path, {
      token: accessToken,
      headers: { 'idempotency-key': `HEAP-${n}:${step}` },
      body,
    });
    if (answer.status >= 300) throw new Error(`${step} of payout ${n}: ${answer.text}`);
    return answer.body as { id: string };
  };
  const beneficiary = await post(
    PATHS.beneficiaries,
    { type: 'INDIVIDUAL', name: `Payee ${n}`, country: 'US' },
    'beneficiary',
  );
  const recipient = await post(PATHS.recipients, recipientBody('ACH', beneficiary.id), 'recipient');
  const quote = await post(
    PATHS.simulations,
    { recipientId: recipient.id, amount: `${n}.25`, currency: 'USD' },
    'simulation',
  );
  await post(PATHS.transactions, { simulationId: quote.id, reference: `HEAP-${n}` }, 'transaction');
}

/** Pays payouts `from` to `to` - 1, IN_FLIGHT at a time. */
async function pay(sb: SandboxHandle, accessToken: string, from: number, to: number): Promise<void> {
  let next = from;
  const lane = async () => {
    while (next < to) await payOne(sb, accessToken, next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

describe('the sandbox at any size', () => {
  it('slow: holds no objects per payout: the heap after 4,000 payouts is within 1.5 MB of that after 1,000', {
    timeout: 180_000,
  }, async () => {
    const sb = await sandbox({ recentRecords: 64, settleDelayMs: 1 });
    const accessToken = await token(sb);
    await pay(sb, accessToken, 0, 1_000);
    const small = await heapAfterCollection(sb);
    await pay(sb, accessToken, 1_000, 4_000);
    const large = await heapAfterCollection(sb);

    const counts = await (await fetch(`${sb.url}/_sandbox/ledger/counts`)).json();
    expect(counts).toMatchObject({
      beneficiaries: 4_000,
      recipients: 4_000,
      simulations: 4_000,
      transactions: 4_000,
      transactionsByStatus: { COMPLETED: 4_000 },
      references: { paid: 4_000, paidMoreThanOnce: 0 },
    });
    const growth = large - small;
    expect(growth, `${(growth / MB).toFixed(2)} MB more for 3,000 more payouts`).toBeLessThan(1.5 * MB);
  });
});
