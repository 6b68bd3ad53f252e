import { describe, expect, it } from 'vitest';
import { MESSAGES, PATHS } from '../../src/api/contract.js';
import { call, eventually, expectErrorBody, OTHER, quoteFor, sandbox, token } from './helpers.js';

describe('Idempotency-Key on POSTs', () => {
  it('replays the first answer for the same key and body, with Idempotent-Replayed: true', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const { simulationId } = await quoteFor(sb, accessToken);
    const request = {
      token: accessToken,
      headers: { 'idempotency-key': 'batch-1:INV-1' },
      body: { simulationId, reference: 'INV-1' },
    };
    const first = await call(sb, 'POST', PATHS.transactions, request);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    await sb.whenIdle();
    const second = await call(sb, 'POST', PATHS.transactions, request);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    const ledger = sb.ledger();
    expect(ledger.transactions).toHaveLength(1);
    expect(ledger.transactions[0]?.idempotencyKey).toBe('batch-1:INV-1');
  });

  it('refuses the same key with another body with 422 and the conflict message', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const headers = { 'idempotency-key': 'k-1' };
    const body = { type: 'INDIVIDUAL', name: 'Ana', country: 'US' };
    expect((await call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, headers, body })).status).toBe(
      201,
    );
    const other = await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      headers,
      body: { ...body, name: 'Bea' },
    });
    expectErrorBody(other, 422, PATHS.beneficiaries);
    expect(other.body.message.startsWith(MESSAGES.idempotencyConflictPrefix)).toBe(true);
    const otherPath = await call(sb, 'POST', PATHS.recipients, { token: accessToken, headers, body });
    expect(otherPath.status).toBe(422);
    expect(sb.ledger().beneficiaries).toHaveLength(1);
  });

  it('answers 409 while the first request with the key is still in progress', async () => {
    const sb = await sandbox({ latencyMs: 150 });
    const accessToken = await token(sb);
    const request = {
      token: accessToken,
      headers: { 'idempotency-key': 'slow' },
      body: { type: 'INDIVIDUAL', name: 'Ana', country: 'US' },
    };
    const requests = sb.ledger().requests.total;
    const first = call(sb, 'POST', PATHS.beneficiaries, request);
    // The first is in progress (asleep in --latency) once the sandbox has counted it.
    await eventually(() => sb.ledger().requests.total === requests + 1);
    const second = await call(sb, 'POST', PATHS.beneficiaries, request);
    expectErrorBody(second, 409, PATHS.beneficiaries);
    expect(second.body.message.startsWith(MESSAGES.idempotencyInProgressPrefix)).toBe(true);
    expect((await first).status).toBe(201);
    expect((await call(sb, 'POST', PATHS.beneficiaries, request)).headers.get('idempotent-replayed')).toBe(
      'true',
    );
  });

  it('keeps only 2xx answers: after a 4xx the key can carry a corrected request', async () => {
    let now = Date.parse('2026-11-21T03:00:00Z');
    const sb = await sandbox({ simulationTtl: 60, clock: { now: () => now } });
    const accessToken = await token(sb);
    const expiredQuote = await quoteFor(sb, accessToken);
    now += 61_000;
    const headers = { 'idempotency-key': 'INV-7' };
    const refused = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      headers,
      body: { simulationId: expiredQuote.simulationId },
    });
    expect(refused.status).toBe(422);
    const fresh = await call(sb, 'POST', PATHS.simulations, {
      token: accessToken,
      body: { recipientId: expiredQuote.recipientId, amount: '100.00', currency: 'USD' },
    });
    const retried = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      headers,
      body: { simulationId: fresh.body.id },
    });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps keys per integrator, and makes no difference without a key', async () => {
    const sb = await sandbox();
    const mine = await token(sb);
    const theirs = await token(sb, OTHER);
    const request = {
      headers: { 'idempotency-key': 'shared' },
      body: { type: 'INDIVIDUAL', name: 'Ana', country: 'US' },
    };
    const a = await call(sb, 'POST', PATHS.beneficiaries, { ...request, token: mine });
    const b = await call(sb, 'POST', PATHS.beneficiaries, { ...request, token: theirs });
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(a.body.id).not.toBe(b.body.id);
    const body = { type: 'INDIVIDUAL', name: 'Ana', country: 'US' };
    const c = await call(sb, 'POST', PATHS.beneficiaries, { token: mine, body });
    const d = await call(sb, 'POST', PATHS.beneficiaries, { token: mine, body });
    expect(c.body.id).not.toBe(d.body.id);
    expect(sb.ledger().beneficiaries).toHaveLength(4);
  });

  it('refuses an over-long key with 400', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'POST', PATHS.beneficiaries, {
      token: await token(sb),
      headers: { 'idempotency-key': 'k'.repeat(256) },
      body: { type: 'INDIVIDUAL', name: 'Ana', country: 'US' },
    });
    expectErrorBody(answer, 400, PATHS.beneficiaries);
  });
});
