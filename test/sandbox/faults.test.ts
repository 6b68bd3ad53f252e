import { describe, expect, it } from 'vitest';
import { PATHS, SANDBOX_LEDGER_PATH } from '../../src/api/contract.js';
import { drawRequest } from '../../src/sandbox/faults.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { call, eventually, expectErrorBody, quoteFor, sandbox, token } from './helpers.js';

const BENEFICIARY = { type: 'INDIVIDUAL', name: 'Ana', country: 'US' };

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

describe('--latency and --jitter', () => {
  it('adds the latency to every answer but /_sandbox/*', async () => {
    const sb = await sandbox({ latencyMs: 250 });
    const [accessToken, tokenMs] = await timed(() => token(sb));
    expect(tokenMs).toBeGreaterThanOrEqual(245);
    const [me, meMs] = await timed(() => call(sb, 'GET', PATHS.integratorMe, { token: accessToken }));
    expect(me.status).toBe(200);
    expect(meMs).toBeGreaterThanOrEqual(245);
    const [, ledgerMs] = await timed(() => call(sb, 'GET', SANDBOX_LEDGER_PATH));
    expect(ledgerMs).toBeLessThan(200);
  });

  it('adds a uniform extra delay of at most --jitter', async () => {
    const sb = await sandbox({ jitterMs: 80, seed: 3 });
    const accessToken = await token(sb);
    const durations: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      const [, ms] = await timed(() => call(sb, 'GET', PATHS.integratorMe, { token: accessToken }));
      durations.push(ms);
    }
    expect(Math.max(...durations)).toBeLessThan(80 + 200);
    expect(Math.max(...durations) - Math.min(...durations)).toBeGreaterThan(10);
  });
});

describe('close()', () => {
  it('returns promptly with a request asleep in --latency and a settlement pending', async () => {
    const sb = await sandbox({ latencyMs: 10_000, settleDelayMs: 60_000 });
    const pending = token(sb);
    // Asleep in --latency once the sandbox has counted it.
    await eventually(() => sb.ledger().requests.total === 1);
    const [, closeMs] = await timed(() => sb.close());
    expect(closeMs).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
    await sb.close();
  });

  it('cancels pending settlements', async () => {
    const sb = await sandbox({ settleDelayMs: 60_000 });
    const accessToken = await token(sb);
    const { simulationId } = await quoteFor(sb, accessToken);
    await call(sb, 'POST', PATHS.transactions, { token: accessToken, body: { simulationId } });
    const idle = sb.whenIdle();
    const [, closeMs] = await timed(() => sb.close());
    await idle;
    expect(closeMs).toBeLessThan(1000);
    expect(sb.ledger().transactions[0]?.status).toBe('PENDING');
  });
});

describe('--error-rate', () => {
  it('answers 500, 502 and 503 with 2.5 bodies before the request takes effect', async () => {
    const sb = await sandbox({ errorRate: 1, seed: 11 });
    const accessToken = await token(sb);
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i += 1) {
      const answer = await call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, body: BENEFICIARY });
      expect([500, 502, 503]).toContain(answer.status);
      expectErrorBody(answer, answer.status, PATHS.beneficiaries);
      expect(answer.body.message).toMatch(/sandbox --error-rate/);
      statuses.add(answer.status);
    }
    expect([...statuses].sort()).toEqual([500, 502, 503]);
    const ledger = sb.ledger();
    expect(ledger.beneficiaries).toHaveLength(0);
    expect(ledger.requests.injected.errors).toBe(30);
    expect(ledger.requests.byStatus['200']).toBe(1);
  });

  it('quotes the request id in a 500 message', async () => {
    const sb = await sandbox({ errorRate: 1, seed: 1 });
    const accessToken = await token(sb);
    for (;;) {
      const answer = await call(sb, 'GET', PATHS.integratorMe, { token: accessToken });
      if (answer.status !== 500) continue;
      expect(answer.body.message).toContain(answer.headers.get('x-request-id'));
      break;
    }
  });

  it('leaves the token endpoint and the ledger alone', async () => {
    const sb = await sandbox({ errorRate: 1, resetRate: 1 });
    expect(await token(sb)).toMatch(/\./);
    expect((await call(sb, 'GET', SANDBOX_LEDGER_PATH)).status).toBe(200);
  });
});

describe('--rate-limit', () => {
  it('answers 429 with Retry-After and a 2.5 body above N requests per second, across endpoints', async () => {
    // A bucket of 2 refilled at 2 per second: the token and one more call, then 429.
    let now = Date.parse('2026-11-21T03:00:00Z');
    const sb = await sandbox({ rateLimit: 2, clock: { now: () => now } });
    const accessToken = await token(sb);
    const first = await call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, body: BENEFICIARY });
    const limited = await call(sb, 'GET', PATHS.integratorMe, { token: accessToken });
    expect(first.status).toBe(201);
    expectErrorBody(limited, 429, PATHS.integratorMe);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.body.message).toMatch(/Rate limit of 2 requests per second/);
    const limitedToken = await call(sb, 'POST', '/auth/realms/service/protocol/openid-connect/token', {
      body: {},
    });
    expect(limitedToken.status).toBe(429);
    now += 1000;
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(200);
    expect(sb.ledger().requests.injected.rateLimited).toBe(2);
  });

  it('lets one request through every 1/N seconds when N is under 1', async () => {
    // --rate-limit 0.5: one request every 2 s, not a bucket too small ever to hold a token.
    let now = Date.parse('2026-11-21T03:00:00Z');
    const sb = await sandbox({ rateLimit: 0.5, clock: { now: () => now } });
    const accessToken = await token(sb);
    const limited = await call(sb, 'GET', PATHS.integratorMe, { token: accessToken });
    expectErrorBody(limited, 429, PATHS.integratorMe);
    expect(limited.headers.get('retry-after')).toBe('2');
    now += 2000;
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(200);
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).status).toBe(429);
  });
});

describe('--reset-rate', () => {
  it('applies the request and then cuts the connection without an answer', async () => {
    const sb = await sandbox({ resetRate: 1 });
    const accessToken = await token(sb);
    await expect(
      call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, body: BENEFICIARY }),
    ).rejects.toThrow();
    const ledger = sb.ledger();
    expect(ledger.beneficiaries).toHaveLength(1);
    expect(ledger.requests.injected.resets).toBe(1);
  });

  it('replays the answer the client never heard when it retries with the same Idempotency-Key', async () => {
    // The stream is seeded: find a seed where request 2 (after the token) is cut and request 3 is not.
    const settings = { latencyMs: 0, jitterMs: 0, errorRate: 0, resetRate: 0.5 };
    let seed = 0;
    for (; ; seed += 1) {
      const random = mulberry32(seed);
      const draws = [1, 2, 3].map(() => drawRequest(random, settings).reset);
      if (draws[1] && !draws[2]) break;
    }
    const sb = await sandbox({ seed, resetRate: 0.5 });
    const accessToken = await token(sb);
    const request = { token: accessToken, headers: { 'idempotency-key': 'cut-1' }, body: BENEFICIARY };
    await expect(call(sb, 'POST', PATHS.beneficiaries, request)).rejects.toThrow();
    const retried = await call(sb, 'POST', PATHS.beneficiaries, request);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(sb.ledger().beneficiaries.map((b) => b.id)).toEqual([retried.body.id]);
  });
});

describe('--seed', () => {
  async function run(seed: number) {
    const sb = await sandbox({ seed, errorRate: 0.4, resetRate: 0.2 });
    const accessToken = await token(sb);
    const outcomes: string[] = [];
    for (let i = 0; i < 25; i += 1) {
      outcomes.push(
        await call(sb, 'GET', PATHS.integratorMe, { token: accessToken }).then(
          (answer) => String(answer.status),
          () => 'reset',
        ),
      );
    }
    await sb.close();
    return outcomes;
  }

  it('replays the same faults for the same seed and requests, and others for another seed', async () => {
    const a = await run(42);
    expect(await run(42)).toEqual(a);
    expect(a).toContain('reset');
    expect(a.some((status) => status.startsWith('5'))).toBe(true);
    expect(await run(43)).not.toEqual(a);
  });

  it('replays the same quotes for the same seed', async () => {
    const rates: string[] = [];
    for (const seed of [5, 5, 6]) {
      const sb = await sandbox({ seed });
      const { simulation } = await quoteFor(sb, await token(sb), { rail: 'PIX' });
      rates.push(simulation.fxRate);
      await sb.close();
    }
    expect(rates[0]).toBe(rates[1]);
    expect(rates[2]).not.toBe(rates[0]);
  });

  it('reports the random seed it drew when none was given', async () => {
    const sb = await sandbox();
    expect(Number.isInteger(sb.seed)).toBe(true);
    expect(sb.config.seed).toBe(sb.seed);
  });
});

describe('limits', () => {
  it('answers 413 for a body over 1 MiB', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'POST', PATHS.beneficiaries, {
      token: await token(sb),
      body: { name: 'x'.repeat(1024 * 1024) },
    });
    expectErrorBody(answer, 413, PATHS.beneficiaries);
  });

  it('counts requests by route and status in the ledger', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    await call(sb, 'GET', PATHS.beneficiary('x'), { token: accessToken });
    await call(sb, 'GET', '/nowhere');
    const ledger = (await call(sb, 'GET', SANDBOX_LEDGER_PATH)).body;
    expect(ledger.requests).toEqual({
      total: 3,
      byRoute: {
        'POST /auth/realms/service/protocol/openid-connect/token': 1,
        'GET /v1/beneficiaries/{id}': 1,
        unmatched: 1,
      },
      byStatus: { '200': 1, '404': 2 },
      injected: { errors: 0, resets: 0, rateLimited: 0 },
    });
  });
});
