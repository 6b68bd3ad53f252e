import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import { call, eventually, quoteFor, type ReceivedWebhook, receiver, sandbox, token } from './helpers.js';

/**
 * The webhook signature (docs/service.md), implemented here independently of src/sandbox:
 * Base64(HMAC-SHA256(raw body, secret)).
 */
function signatureValid(webhook: ReceivedWebhook, secret: string): boolean {
  const header = webhook.headers['x-service-webhook-signature'];
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(webhook.raw, 'utf8').digest('base64'));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const operations = (received: ReceivedWebhook[]) =>
  received.map((w) => JSON.parse(w.raw).operation as string);

describe('webhooks', () => {
  it('delivers signed webhook payloads for beneficiaries and the transaction lifecycle', async () => {
    const hooks = await receiver();
    const sb = await sandbox({ webhookSecret: 'whsec-test', webhookUrl: hooks.url });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken);
    const created = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId, reference: 'INV-9' },
    });
    await call(sb, 'DELETE', PATHS.beneficiary(ids.beneficiaryId), { token: accessToken });
    await sb.whenIdle();

    expect(hooks.received.every((w) => signatureValid(w, 'whsec-test'))).toBe(true);
    expect(hooks.received.some((w) => signatureValid(w, 'another-secret'))).toBe(false);
    expect(operations(hooks.received).sort()).toEqual([
      'BENEFICIARY_CREATED',
      'BENEFICIARY_DELETED',
      'TRANSACTION_COMPLETED',
      'TRANSACTION_CREATED',
    ]);
    const completed = hooks.received
      .map((w) => JSON.parse(w.raw))
      .find((p) => p.operation === 'TRANSACTION_COMPLETED');
    expect(completed).toEqual({
      operation: 'TRANSACTION_COMPLETED',
      resourceId: created.body.id,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
      integratorId: sb.integratorIds.primary,
      beneficiaryId: ids.beneficiaryId,
      message: null,
      success: true,
      data: expect.objectContaining({
        status: 'COMPLETED',
        amount: '100.00',
        currency: 'USD',
        reference: 'INV-9',
      }),
    });
    expect(hooks.received[0]?.headers['content-type']).toBe('application/json');
    expect(sb.ledger().webhookDeliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(
      true,
    );
  });

  it('sends TRANSACTION_FAILED with success false and the reason in message', async () => {
    const hooks = await receiver();
    const sb = await sandbox({ webhookUrl: hooks.url });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken, { name: 'FAIL Test' });
    await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId },
    });
    await sb.whenIdle();
    const failed = hooks.received
      .map((w) => JSON.parse(w.raw))
      .find((p) => p.operation === 'TRANSACTION_FAILED');
    expect(failed.success).toBe(false);
    expect(failed.message).toMatch(/rejected/);
    expect(failed.data.failureReason).toBe(failed.message);
  });

  it('goes to the URL set with PATCH and signs with the secret current at sending', async () => {
    const hooks = await receiver();
    const sb = await sandbox();
    const accessToken = await token(sb);
    const id = sb.integratorIds.primary;
    await call(sb, 'PATCH', PATHS.webhooks(id), { token: accessToken, body: { url: hooks.url } });
    const rotated = await call(sb, 'POST', PATHS.updateWebhookSecret(id), { token: accessToken });
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    await sb.whenIdle();
    expect(hooks.received).toHaveLength(1);
    expect(signatureValid(hooks.received[0]!, rotated.body.webhookSecret)).toBe(true);
  });

  it('delivers every event twice with --duplicate-rate 1: the same body, resourceId and operation', async () => {
    const hooks = await receiver();
    const sb = await sandbox({ webhookSecret: 's', webhookUrl: hooks.url, duplicateRate: 1 });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken);
    await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId },
    });
    await sb.whenIdle();
    expect(hooks.received).toHaveLength(6);
    const byEvent = new Map<string, string[]>();
    for (const w of hooks.received) {
      const payload = JSON.parse(w.raw);
      const key = `${payload.resourceId} ${payload.operation}`;
      byEvent.set(key, [...(byEvent.get(key) ?? []), w.raw]);
      expect(signatureValid(w, 's')).toBe(true);
    }
    expect(byEvent.size).toBe(3);
    for (const raws of byEvent.values()) expect(new Set(raws).size === 1 && raws.length === 2).toBe(true);
    expect(sb.ledger().webhookDeliveries.filter((d) => d.duplicateOf !== null)).toHaveLength(3);
  });

  it('retries with backoff while the receiver answers 500, then records the delivery', async () => {
    const hooks = await receiver((n) => (n <= 2 ? 500 : 200));
    const sb = await sandbox({ webhookUrl: hooks.url, webhookBackoffMs: 20, webhookMaxAttempts: 6 });
    const accessToken = await token(sb);
    const started = Date.now();
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    await sb.whenIdle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 + 40);
    expect(hooks.received).toHaveLength(3);
    expect(new Set(hooks.received.map((w) => w.raw)).size).toBe(1);
    const [delivery] = sb.ledger().webhookDeliveries;
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200, lastError: null });
  });

  it('gives up after --webhook-attempts and marks the delivery failed', async () => {
    const hooks = await receiver(() => 503);
    const sb = await sandbox({ webhookUrl: hooks.url, webhookBackoffMs: 1, webhookMaxAttempts: 3 });
    const accessToken = await token(sb);
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    await sb.whenIdle();
    expect(hooks.received).toHaveLength(3);
    expect(sb.ledger().webhookDeliveries[0]).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastStatus: 503,
    });
  });

  it('retries when nothing listens at the URL, and close() stops the retries at once', async () => {
    const sb = await sandbox({ webhookUrl: 'http://127.0.0.1:9/hooks', webhookBackoffMs: 60_000 });
    const accessToken = await token(sb);
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    const delivery = await eventually(() =>
      sb.ledger().webhookDeliveries.find((d) => d.attempts === 1 && d.lastError),
    );
    expect(delivery.status).toBe('pending');
    const started = Date.now();
    await sb.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('never holds up the API answer while a receiver is slow, and times a silent receiver out', async () => {
    const hooks = await receiver(() => 200, 5_000);
    const sb = await sandbox({ webhookUrl: hooks.url, webhookTimeoutMs: 100, webhookMaxAttempts: 1 });
    const accessToken = await token(sb);
    const started = Date.now();
    const answer = await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    expect(answer.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(1_000);
    await sb.whenIdle();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(sb.ledger().webhookDeliveries[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastStatus: null,
    });
    expect(sb.ledger().webhookDeliveries[0]?.lastError).toMatch(/timeout/i);
  });

  it('counts events without a callback URL and sends nothing', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    await sb.whenIdle();
    expect(sb.ledger().webhookDeliveries).toHaveLength(0);
    expect(sb.ledger().webhookEventsWithoutUrl).toBe(1);
  });
});
