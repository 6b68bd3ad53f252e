/**
 * The client against the real sandbox (src/sandbox): every resource once, then a fault soak
 * (5xx, resets after effect, a rate limit below the client's rate) where keyed transactions
 * must land exactly once each. Proves the client and the sandbox read contract.ts alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type PayoutsClient } from '../../src/api/client.js';
import { isSimulationUsed } from '../../src/api/transactions.js';
import { NetworkError } from '../../src/errors.js';
import { transactionKey } from '../../src/register/identity.js';
import type { RecipientRequest } from '../../src/rows/types.js';
import { type SandboxHandle, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

/** A payout's key as `run` derives it, for a made-up scope. */
const idempotencyKey = (scope: string, reference: string) =>
  transactionKey({ service: 'http://127.0.0.1', integratorId: scope }, reference);

let sandbox: SandboxHandle | undefined;
let client: PayoutsClient | undefined;
afterEach(async () => {
  await client?.close();
  await sandbox?.close();
  client = undefined;
  sandbox = undefined;
});

async function connect(options: SandboxOptions = {}, rate?: number): Promise<PayoutsClient> {
  sandbox = await startSandbox({ seed: 7, ...options });
  client = createClient({
    baseUrl: sandbox.url,
    authUrl: sandbox.url,
    credentials: sandbox.credentials,
    rate,
    concurrency: 8,
    retry: { baseMs: 5, capMs: 50 },
  });
  return client;
}

function achRecipient(beneficiaryId: string, name: string): RecipientRequest {
  return {
    individualName: name,
    beneficiaryId,
    currency: 'USD',
    type: 'ACH',
    details: {
      accountNumber: '000123456789',
      routingNumber: '021000021',
      bankName: 'Chase',
      bankCountry: 'US',
      accountType: 'Checking',
      recipientAddress: {
        street1: '1 Main St',
        city: 'Austin',
        state: 'TX',
        postalCode: '73301',
        country: 'US',
      },
    },
  };
}

describe('client against the sandbox', () => {
  it('walks every resource the batch uses', async () => {
    const api = await connect();
    const me = await api.integrators.me();
    expect(me.id).toBe(sandbox!.integratorIds.primary);
    await api.integrators.setWebhookUrl(me.id, 'https://hooks.example.com/payouts');
    expect(await api.integrators.getWebhookUrl(me.id)).toBe('https://hooks.example.com/payouts');
    const rotated = await api.integrators.rotateWebhookSecret(me.id);
    expect(await api.integrators.fetchWebhookSecret(me.id)).toBe(rotated);
    await api.terms.accept(me.id);

    const ben = await api.beneficiaries.create({
      type: 'INDIVIDUAL',
      name: 'Ana Diaz',
      email: 'ana@example.com',
      country: 'US',
    });
    expect((await api.beneficiaries.get(ben.id)).id).toBe(ben.id);
    const rcp = await api.recipients.create(achRecipient(ben.id, 'Ana Diaz'));
    expect(
      (await api.recipients.update(rcp.id, { ...achRecipient(ben.id, 'Ana Diaz'), nickname: 'Ana' })).id,
    ).toBe(rcp.id);
    expect((await api.recipients.get(rcp.id)).id).toBe(rcp.id);
    const sim = await api.simulations.create({ recipientId: rcp.id, amount: '125.00', currency: 'USD' });
    expect((await api.simulations.get(sim.id)).id).toBe(sim.id);

    const key = idempotencyKey('b-test', 'INV-1');
    const first = await api.transactions.create(
      { simulationId: sim.id, reference: 'INV-1' },
      { idempotencyKey: key },
    );
    expect(first).toMatchObject({ replayed: false, transaction: { status: 'PENDING' } });
    const again = await api.transactions.create(
      { simulationId: sim.id, reference: 'INV-1' },
      { idempotencyKey: key },
    );
    expect(again.replayed).toBe(true);
    expect(again.transaction.id).toBe(first.transaction.id);
    expect((await api.transactions.get(first.transaction.id)).id).toBe(first.transaction.id);

    const reuse = await api.transactions
      .create(
        { simulationId: sim.id, reference: 'INV-2' },
        { idempotencyKey: idempotencyKey('b-test', 'INV-2') },
      )
      .catch((e: unknown) => e);
    expect(isSimulationUsed(reuse)).toBe(true);

    await api.beneficiaries.delete(ben.id);
    await expect(api.beneficiaries.get(ben.id)).rejects.toMatchObject({ status: 404 });
    expect(sandbox!.ledger().transactions).toHaveLength(1);
  });

  it('the sandbox credentials refused: exit 3 without any secret in the message', async () => {
    sandbox = await startSandbox({ seed: 1 });
    client = createClient({
      baseUrl: sandbox.url,
      authUrl: sandbox.url,
      credentials: { ...sandbox.credentials, password: 'wrong-password-123' },
    });
    const err = (await client.integrators.me().catch((e: unknown) => e)) as Error & { exitCode: number };
    expect(err.exitCode).toBe(3);
    expect(err.message).not.toMatch(/wrong-password-123|sandbox-secret/);
  });

  it('a 429 storm: every request gets through, the client slows down', async () => {
    const api = await connect({ rateLimit: 50 }, 200);
    const me = await api.integrators.me();
    const answers = await Promise.all(
      Array.from({ length: 120 }, () => api.integrators.getWebhookUrl(me.id)),
    );
    expect(answers).toHaveLength(120);
    expect(sandbox!.ledger().requests.injected.rateLimited).toBeGreaterThan(0);
    expect(api.limiter.currentRate).toBeLessThan(200);
  }, 30_000);

  it('fault soak: 5xx, resets after effect and a rate limit below ours; one transaction per key', async () => {
    const api = await connect({ errorRate: 0.15, resetRate: 0.05, rateLimit: 150 }, 200);
    const ben = await retryUnknown(() =>
      api.beneficiaries.create(
        { type: 'INDIVIDUAL', name: 'Bo', country: 'US' },
        { idempotencyKey: 'ben-bo' },
      ),
    );
    const rcp = await retryUnknown(() =>
      api.recipients.create(achRecipient(ben.id, 'Bo'), { idempotencyKey: 'rcp-bo' }),
    );
    const n = 40;
    const created = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const reference = `INV-${i}`;
        const sim = await api.simulations.create({ recipientId: rcp.id, amount: '10.00', currency: 'USD' });
        const key = idempotencyKey('b-soak', reference);
        // The runner re-sends an `unknown` only with --retry-unknown; here: always, same key.
        return retryUnknown(() =>
          api.transactions.create({ simulationId: sim.id, reference }, { idempotencyKey: key }),
        );
      }),
    );
    expect(new Set(created.map((c) => c.transaction.id)).size).toBe(n);
    const ledger = sandbox!.ledger();
    const keys = ledger.transactions.map((t) => t.idempotencyKey);
    expect(keys).toHaveLength(n);
    expect(new Set(keys).size).toBe(n);
    expect(ledger.requests.injected.errors + ledger.requests.injected.resets).toBeGreaterThan(0);
  }, 30_000);
});

/** Repeats a keyed call whose outcome was unknown: the key makes the repeat safe. */
async function retryUnknown<T>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof NetworkError) || i >= 5) throw err;
    }
  }
}
