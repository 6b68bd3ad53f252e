import { createHmac } from 'node:crypto';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { PATHS, TOKEN_PATH } from '../../src/api/contract.js';
import { call, expectErrorBody, OTHER, quoteFor, sandbox, token } from './helpers.js';

describe('protected endpoints: 401 without a good token', () => {
  it('refuses a missing, malformed, non-Bearer or badly signed token with 401 and a 2.5 body', async () => {
    const sb = await sandbox();
    const good = await token(sb);
    const [header, payload] = good.split('.');
    const forged = `${header}.${payload}.${createHmac('sha256', 'not-the-key').update(`${header}.${payload}`).digest('base64url')}`;
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['missing', {}, /Authorization: Bearer/],
      ['malformed', { authorization: 'Bearer not-a-jwt' }, /malformed/],
      ['basic scheme', { authorization: `Basic ${good}` }, /must be Bearer/],
      ['bad signature', { authorization: `Bearer ${forged}` }, /signature is invalid/],
    ];
    for (const [, headers, message] of cases) {
      const answer = await call(sb, 'GET', PATHS.integratorMe, { headers });
      expectErrorBody(answer, 401, PATHS.integratorMe);
      expect(answer.body.message).toMatch(message);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="service"/);
    }
  });

  it('refuses a token of another sandbox (another signing key)', async () => {
    const first = await sandbox();
    const second = await sandbox();
    const answer = await call(second, 'GET', PATHS.integratorMe, { token: await token(first) });
    expect(answer.status).toBe(401);
  });

  it('refuses an expired token with 401 once --token-ttl has passed', async () => {
    let now = Date.parse('2026-11-21T03:00:00Z');
    const sb = await sandbox({ tokenTtl: 60, clock: { now: () => now } });
    const accessToken = await token(sb);
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(200);
    now += 59_000;
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(200);
    now += 1_000;
    const expired = await call(sb, 'GET', PATHS.integratorMe, { token: accessToken });
    expectErrorBody(expired, 401, PATHS.integratorMe);
    expect(expired.body.message).toBe(
      'The access token expired at 2026-11-21T03:01:00.000+00:00 - request a new token',
    );
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: await token(sb) })).status).toBe(200);
  });

  it('expires a token in real time with a 1 s TTL', async () => {
    const sb = await sandbox({ tokenTtl: 1 });
    const accessToken = await token(sb);
    // The wall clock moved, not waited for: Date alone is faked, the server's timers are real.
    // exp is whole seconds: iat is floored, so the token lapses within 1 s of issue.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1050 });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(401);
  });

  it('does not take a refresh token as an access token', async () => {
    const sb = await sandbox({ tokenResponse: 'long' });
    const answer = await call(sb, 'POST', TOKEN_PATH, {
      body: {
        grant_type: 'password',
        client_id: 'sandbox-client',
        client_secret: 'sandbox-secret',
        username: 'integrator@example.com',
        password: 'sandbox-password',
      },
    });
    const refused = await call(sb, 'GET', PATHS.integratorMe, { token: answer.body.refresh_token });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/refresh token/);
  });
});

describe('ownership: 403 across integrators, 404 for unknown ids', () => {
  it('refuses every kind of resource of another integrator with 403', async () => {
    const sb = await sandbox();
    const mine = await token(sb);
    const theirs = await token(sb, OTHER);
    const ids = await quoteFor(sb, mine);
    const transaction = await call(sb, 'POST', PATHS.transactions, {
      token: mine,
      body: { simulationId: ids.simulationId },
    });
    const primaryId = sb.integratorIds.primary;
    const refused: Array<[string, string, unknown?]> = [
      ['GET', PATHS.beneficiary(ids.beneficiaryId)],
      ['DELETE', PATHS.beneficiary(ids.beneficiaryId)],
      ['GET', PATHS.recipient(ids.recipientId)],
      ['PUT', PATHS.recipient(ids.recipientId), { individualName: 'x' }],
      ['GET', PATHS.simulation(ids.simulationId)],
      ['GET', PATHS.transaction(transaction.body.id)],
      ['POST', PATHS.transactions, { simulationId: ids.simulationId }],
      ['POST', PATHS.simulations, { recipientId: ids.recipientId, amount: '1.00', currency: 'USD' }],
      ['GET', PATHS.webhooks(primaryId)],
      ['PATCH', PATHS.webhooks(primaryId), { url: 'https://example.com/hooks' }],
      ['POST', PATHS.updateWebhookSecret(primaryId)],
      ['GET', PATHS.webhookSecret(primaryId)],
      ['POST', PATHS.termsAndConditions(primaryId)],
    ];
    for (const [method, path, body] of refused) {
      const answer = await call(sb, method, path, { token: theirs, body });
      expectErrorBody(answer, 403, path);
      expect(answer.body.message).toMatch(/belongs to another integrator/);
    }
    const recipientOfOther = await call(sb, 'POST', PATHS.recipients, {
      token: theirs,
      body: {
        individualName: 'Ana',
        beneficiaryId: ids.beneficiaryId,
        currency: 'USD',
        type: 'RTP',
        details: { accountNumber: '1', routingNumber: '021000021' },
      },
    });
    expectErrorBody(recipientOfOther, 403, PATHS.recipients);
  });

  it('answers 404 for unknown ids and unknown paths', async () => {
    const sb = await sandbox();
    const mine = await token(sb);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [
      PATHS.beneficiary(unknown),
      PATHS.recipient(unknown),
      PATHS.simulation(unknown),
      PATHS.transaction(unknown),
      PATHS.webhooks(unknown),
      '/v1/nothing-here',
      '/v1/beneficiaries/%E0%A4%A',
    ]) {
      const answer = await call(sb, 'GET', path, { token: mine });
      expectErrorBody(answer, 404, path);
    }
    const missingSimulation = await call(sb, 'POST', PATHS.transactions, {
      token: mine,
      body: { simulationId: unknown },
    });
    expectErrorBody(missingSimulation, 404, PATHS.transactions);
    expect(missingSimulation.body.message).toBe(`Simulation ${unknown} not found`);
  });

  it('puts an X-Request-Id on every answer, different each time', async () => {
    const sb = await sandbox();
    const ids = new Set<string>();
    for (const [method, path] of [
      ['GET', PATHS.integratorMe],
      ['GET', '/nowhere'],
      ['GET', '/_sandbox/ledger'],
      ['POST', TOKEN_PATH],
    ] as const) {
      const answer = await call(sb, method, path);
      ids.add(answer.headers.get('x-request-id') ?? '');
    }
    expect(ids.size).toBe(4);
    expect(ids.has('')).toBe(false);
  });
});
