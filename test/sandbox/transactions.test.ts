import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { MESSAGES, PATHS, SANDBOX_LEDGER_COUNTS_PATH } from '../../src/api/contract.js';
import type { Rail } from '../../src/columns/rails.js';
import { call, expectErrorBody, OTHER, quoteFor, sandbox, token } from './helpers.js';

describe('simulations (quotes)', () => {
  it('quotes USD at rate 1 with no fee, 200, and reads it back', async () => {
    const sb = await sandbox({ simulationTtl: 300 });
    const accessToken = await token(sb);
    const { simulation, simulationId, recipientId } = await quoteFor(sb, accessToken, {
      rail: 'ACH',
      amount: '1250.5',
    });
    expect(simulation).toEqual({
      id: simulationId,
      recipientId,
      amount: '1250.50',
      currency: 'USD',
      sourceAmount: '1250.50',
      sourceCurrency: 'USD',
      fxRate: '1.000000',
      fee: '0.00',
      expiresAt: expect.stringMatching(/\+00:00$/),
      createdAt: expect.stringMatching(/\+00:00$/),
    });
    expect(Date.parse(simulation.expiresAt) - Date.parse(simulation.createdAt)).toBe(300_000);
    const read = await call(sb, 'GET', PATHS.simulation(simulationId), { token: accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(simulation);
  });

  it.each<[Rail, string, number]>([
    ['SPEI', 'MXN', 17.25],
    ['PIX', 'BRL', 5.1],
    ['COP', 'COP', 3950],
  ])(
    'quotes %s (%s) with an FX rate within 1%% of the base and a fee, in exact decimal arithmetic',
    async (rail, currency, base) => {
      const sb = await sandbox({ seed: 7 });
      const { simulation } = await quoteFor(sb, await token(sb), { rail, amount: '100000.00' });
      expect(simulation.currency).toBe(currency);
      expect(simulation.fxRate).toMatch(/^\d+\.\d{6}$/);
      const rate = Number(simulation.fxRate);
      expect(Math.abs(rate / base - 1)).toBeLessThanOrEqual(0.01);
      // Recompute with bigint minor units, half up: converted = amount / rate; fee = max(1.00, 0.5%).
      const rateMicro = BigInt(simulation.fxRate.replace('.', ''));
      const converted = (10_000_000n * 1_000_000n * 2n + rateMicro) / (rateMicro * 2n);
      const percentage = (converted * 50n * 2n + 10_000n) / 20_000n;
      const fee = percentage > 100n ? percentage : 100n;
      const cents = (n: bigint) => `${n / 100n}.${(n % 100n).toString().padStart(2, '0')}`;
      expect(simulation.fee).toBe(cents(fee));
      expect(simulation.sourceAmount).toBe(cents(converted + fee));
    },
  );

  it("answers 400 for a bad body and 422 for a currency that is not the recipient's", async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const { recipientId } = await quoteFor(sb, accessToken);
    const bad = await call(sb, 'POST', PATHS.simulations, { token: accessToken, body: { amount: 12.5 } });
    expectErrorBody(bad, 400, PATHS.simulations);
    expect(bad.body.errors).toEqual([
      'The field recipientId is required',
      'The field amount must be a decimal string greater than 0 with a "." and at most 2 decimals, e.g. "1250.00" (got 12.5)',
      'The field currency is required',
    ]);
    for (const amount of ['0', '1.234', '-1', '1e3']) {
      const refused = await call(sb, 'POST', PATHS.simulations, {
        token: accessToken,
        body: { recipientId, amount, currency: 'USD' },
      });
      expectErrorBody(refused, 400, PATHS.simulations);
    }
    const mismatch = await call(sb, 'POST', PATHS.simulations, {
      token: accessToken,
      body: { recipientId, amount: '10.00', currency: 'MXN' },
    });
    expectErrorBody(mismatch, 422, PATHS.simulations);
    const unknown = await call(sb, 'POST', PATHS.simulations, {
      token: accessToken,
      body: { recipientId: 'nope', amount: '10.00', currency: 'USD' },
    });
    expectErrorBody(unknown, 404, PATHS.simulations);
  });

  it('refuses to quote for a recipient whose beneficiary was deleted (422)', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const { recipientId, beneficiaryId } = await quoteFor(sb, accessToken);
    await call(sb, 'DELETE', PATHS.beneficiary(beneficiaryId), { token: accessToken });
    const answer = await call(sb, 'POST', PATHS.simulations, {
      token: accessToken,
      body: { recipientId, amount: '10.00', currency: 'USD' },
    });
    expectErrorBody(answer, 422, PATHS.simulations);
    expect(answer.body.message).toMatch(/has been deleted/);
  });
});

describe('transactions', () => {
  it('creates a PENDING transaction (201) that completes after --settle-delay', async () => {
    const sb = await sandbox({ settleDelayMs: 30 });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken, { amount: '42.00' });
    const created = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId, reference: 'INV-1' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      simulationId: ids.simulationId,
      recipientId: ids.recipientId,
      beneficiaryId: ids.beneficiaryId,
      amount: '42.00',
      currency: 'USD',
      status: 'PENDING',
      reference: 'INV-1',
      failureReason: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const path = PATHS.transaction(created.body.id);
    expect((await call(sb, 'GET', path, { token: accessToken })).body.status).toBe('PENDING');
    await sb.whenIdle();
    const settled = await call(sb, 'GET', path, { token: accessToken });
    expect(settled.status).toBe(200);
    expect(settled.body.status).toBe('COMPLETED');
    expect(sb.ledger().transactions).toEqual([
      expect.objectContaining({
        id: created.body.id,
        simulationId: ids.simulationId,
        recipientId: ids.recipientId,
        beneficiaryId: ids.beneficiaryId,
        amount: '42.00',
        currency: 'USD',
        status: 'COMPLETED',
        idempotencyKey: null,
      }),
    ]);
  });

  it.each([
    ['individualName', { name: 'FAIL Smith' }],
    ['individualName, any case', { name: 'failing Ana' }],
  ])('fails a payment to a recipient named FAIL... (%s) with a failureReason', async (_case, options) => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken, options);
    const created = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId },
    });
    await sb.whenIdle();
    const settled = await call(sb, 'GET', PATHS.transaction(created.body.id), { token: accessToken });
    expect(settled.body.status).toBe('FAILED');
    expect(settled.body.failureReason).toMatch(/^The receiving bank rejected the payment/);
  });

  it('fails on a SPEI receiverName starting with FAIL', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const beneficiary = await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'Ana', country: 'MX' },
    });
    const recipient = await call(sb, 'POST', PATHS.recipients, {
      token: accessToken,
      body: {
        individualName: 'Ana',
        beneficiaryId: beneficiary.body.id,
        currency: 'MXN',
        type: 'SPEI',
        details: { clabe: '032180000118359719', bankCode: '032', receiverName: 'Fail Bank Test' },
      },
    });
    const simulation = await call(sb, 'POST', PATHS.simulations, {
      token: accessToken,
      body: { recipientId: recipient.body.id, amount: '500.00', currency: 'MXN' },
    });
    await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: simulation.body.id },
    });
    await sb.whenIdle();
    expect(sb.ledger().transactions[0]?.status).toBe('FAILED');
  });

  it('answers 422 for a simulation already used', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const { simulationId } = await quoteFor(sb, accessToken);
    const first = await call(sb, 'POST', PATHS.transactions, { token: accessToken, body: { simulationId } });
    expect(first.status).toBe(201);
    const again = await call(sb, 'POST', PATHS.transactions, { token: accessToken, body: { simulationId } });
    expectErrorBody(again, 422, PATHS.transactions);
    expect(again.body.message.startsWith(MESSAGES.simulationUsedPrefix)).toBe(true);
    expect(sb.ledger().transactions).toHaveLength(1);
  });

  it('answers 422 for an expired simulation (--simulation-ttl)', async () => {
    let now = Date.parse('2026-11-21T03:00:00Z');
    const sb = await sandbox({ simulationTtl: 60, clock: { now: () => now } });
    const accessToken = await token(sb);
    const { simulationId, simulation } = await quoteFor(sb, accessToken);
    expect(simulation.expiresAt).toBe('2026-11-21T03:01:00.000+00:00');
    now += 60_000;
    const expired = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId },
    });
    expectErrorBody(expired, 422, PATHS.transactions);
    expect(expired.body.message.startsWith(MESSAGES.simulationExpiredPrefix)).toBe(true);
    expect(sb.ledger().transactions).toHaveLength(0);
  });

  it('expires a simulation in real time with a 1 s TTL', async () => {
    const sb = await sandbox({ simulationTtl: 1 });
    const accessToken = await token(sb);
    const { simulationId } = await quoteFor(sb, accessToken);
    // The wall clock moved, not waited for: Date alone is faked, the server's timers are real.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1010 });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const expired = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId },
    });
    expect(expired.status).toBe(422);
  });

  it('answers 400 for a bad body', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const answer = await call(sb, 'POST', PATHS.transactions, { token: accessToken, body: { reference: 7 } });
    expectErrorBody(answer, 400, PATHS.transactions);
    expect(answer.body.errors).toEqual([
      'The field simulationId is required',
      'The field reference must be a string of at most 255 characters',
    ]);
  });
});

describe('GET /v1/transactions?reference=', () => {
  it("finds the caller's transactions with the reference, newest first, and no one else's", async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const otherToken = await token(sb, OTHER);
    // A '?' inside the query is a plain character of the query (RFC 3986), not a second query.
    const reference = 'INV?7';
    const ids: string[] = [];
    for (const at of [accessToken, accessToken, otherToken]) {
      const { simulationId } = await quoteFor(sb, at);
      const made = await call(sb, 'POST', PATHS.transactions, {
        token: at,
        body: { simulationId, reference },
      });
      ids.push(made.body.id);
    }
    for (const path of [PATHS.transactionsByReference(reference), `${PATHS.transactions}?reference=INV?7`]) {
      const found = await call(sb, 'GET', path, { token: accessToken });
      expect(found.status).toBe(200);
      expect(found.body.data.map((t: { id: string }) => t.id)).toEqual([ids[1], ids[0]]);
    }
    const none = await call(sb, 'GET', PATHS.transactionsByReference('INV'), { token: accessToken });
    expect(none.body).toEqual({ data: [] });
    const missing = await call(sb, 'GET', PATHS.transactions, { token: accessToken });
    expectErrorBody(missing, 400, PATHS.transactions);
    expect(missing.body.errors).toEqual(['reference is required to list transactions']);
  });
});

describe('GET /_sandbox/ledger/counts', () => {
  it('counts the ledger and names the references paid more than once', async () => {
    const sb = await sandbox({ settleDelayMs: 60_000 });
    const accessToken = await token(sb);
    const pay = async (reference: string) => {
      const { simulationId } = await quoteFor(sb, accessToken, { amount: '10.00' });
      const created = await call(sb, 'POST', PATHS.transactions, {
        token: accessToken,
        body: { simulationId, reference },
      });
      expect(created.status).toBe(201);
    };
    await pay('INV-1');
    await pay('INV-2');
    await pay('INV-2');
    const answer = await call(sb, 'GET', SANDBOX_LEDGER_COUNTS_PATH);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      beneficiaries: 3,
      recipients: 3,
      simulations: 3,
      transactions: 3,
      transactionsByStatus: { PENDING: 3 },
      references: { paid: 2, paidMoreThanOnce: 1, firstPaidMoreThanOnce: ['INV-2'] },
    });
    // Not counted among the requests, as the ledger itself is not.
    expect(answer.body.requests.total).toBe(sb.ledger().requests.total);
  });
});
