/**
 * The service side of unattended runs: an outage seen through the HTTP core, with the
 * circuit breaker; a request's outcome is its most severe attempt's; the run's stop signal ends
 * every wait.
 */
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/api/breaker.js';
import { HttpClient } from '../../src/api/client.js';
import { TOKEN_PATH } from '../../src/api/contract.js';
import { RateLimiter } from '../../src/api/rate.js';
import { TokenManager } from '../../src/api/token.js';
import { transactionFailure } from '../../src/batch/run/outcome.js';
import { InterruptedError, NetworkError, ServiceError, ServiceUnavailableError } from '../../src/errors.js';
import { type FakeTime, fakeTime } from './helpers/fake-time.js';
import {
  fail,
  type Handler,
  ok,
  script,
  startServer,
  type TestServer,
  tokenEndpoint,
} from './helpers/server.js';

const CREDENTIALS = {
  clientId: 'client-abc',
  clientSecret: 'cs-very-secret-123',
  username: 'integrator@example.com',
  password: 'pw-very-secret-456',
};

const servers: TestServer[] = [];
const clients: HttpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function client(
  routes: Record<string, Handler>,
  options: { breaker?: CircuitBreaker; stopSignal?: AbortSignal; real?: boolean } = {},
) {
  const server = await startServer({ [TOKEN_PATH]: tokenEndpoint, ...routes });
  servers.push(server);
  const time = options.real ? {} : fakeTime();
  const limiter = new RateLimiter({ rate: 1000, ...time });
  const common = {
    limiter,
    random: () => 0.5,
    ...time,
    breaker: options.breaker,
    stopSignal: options.stopSignal,
  };
  const authHttp = new HttpClient({ ...common, baseUrl: server.url });
  const tokens = new TokenManager({ http: authHttp, credentials: CREDENTIALS, ...time });
  const http = new HttpClient({ ...common, baseUrl: server.url, tokens });
  clients.push(authHttp, http);
  return { server, http, limiter };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

const tx = { method: 'POST' as const, path: '/v1/tx', body: {}, idempotencyKey: 'k-1', auth: true };

describe('the outcome of a request is its most severe attempt', () => {
  it('cut after it took effect, then the service unreachable: the transaction is unknown, not failed', async () => {
    let serverRef: TestServer | undefined;
    const { server, http } = await client({
      // The first attempt reaches the service and the service goes away before answering.
      '/v1/tx': ({ req }) => {
        req.socket.destroy();
        void serverRef?.close();
      },
    });
    serverRef = server;
    const err = (await rejection(http.request(tx))) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.errorCode).toBe('ECONNREFUSED');
    expect(err.mayHaveTakenEffect).toBe(false);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(err.inDoubt);
    expect(err.message).toContain('an earlier one got no answer');
    const failure = transactionFailure(err);
    expect(failure.status).toBe('unknown');
    expect(failure.messages).toEqual([
      `an earlier attempt of the transaction request got no answer (${err.inDoubt}) and may have taken effect, then the service could not be reached (ECONNREFUSED) - run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  });

  it('a 4xx after a cut attempt proves nothing was created: failed', async () => {
    const { http } = await client({
      '/v1/tx': script(({ req }) => req.socket.destroy(), fail(400, 'Insufficient balance')),
    });
    const err = (await rejection(http.request(tx))) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.inDoubt).toBeDefined();
    expect(transactionFailure(err)).toMatchObject({ status: 'failed', messages: ['Insufficient balance'] });
  });

  it('a 2xx after a cut attempt is the answer', async () => {
    const { http } = await client({
      '/v1/tx': script(({ req }) => req.socket.destroy(), ok({ id: 'tx-1' }, 201)),
    });
    await expect(http.request(tx)).resolves.toMatchObject({ status: 201, data: { id: 'tx-1' } });
  });
});

describe('HttpClient with a circuit breaker', () => {
  it('503 for everything: waits through the outage, then ServiceUnavailableError; a keyed POST stays in doubt', async () => {
    const time = fakeTime();
    const breaker = new CircuitBreaker({ failureThreshold: 3, maxOutageMs: 20_000, ...time });
    const { http, server } = await client({ '/v1/tx': fail(503, 'down') }, { breaker });
    const err = (await rejection(http.request(tx))) as ServiceUnavailableError;
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err.exitCode).toBe(6);
    expect(err.message).toBe(
      'POST /v1/tx was not sent: the service stayed unreachable or unavailable for more than 20 s (--max-outage) - run again later to resume',
    );
    expect(err.inDoubt).toBe('503');
    expect(breaker.gaveUp).toBe(true);
    // More than the 5 attempts of the retry budget: the breaker decided when to give up.
    expect(server.count('/v1/tx')).toBeGreaterThan(5);
    expect(transactionFailure(err).status).toBe('unknown');
    // Later requests are not sent at all.
    const before = server.count('/v1/tx');
    const next = await rejection(http.request({ ...tx, idempotencyKey: 'k-2' }));
    expect(next).toBeInstanceOf(ServiceUnavailableError);
    expect((next as ServiceUnavailableError).inDoubt).toBeUndefined();
    expect(transactionFailure(next)).toMatchObject({
      status: 'skipped',
      messages: [
        'not sent: the service stayed unreachable or unavailable for more than 20 s (--max-outage) - run again later to resume',
      ],
    });
    expect(server.count('/v1/tx')).toBe(before);
  });

  it('a short outage is waited through: the request succeeds after a probe', async () => {
    const time = fakeTime();
    const breaker = new CircuitBreaker({ failureThreshold: 3, maxOutageMs: 60_000, ...time });
    const { http } = await client(
      { '/v1/x': script(fail(503), fail(503), fail(503), fail(503), fail(503), fail(503), ok({ id: 'x' })) },
      { breaker },
    );
    await expect(http.request({ method: 'GET', path: '/v1/x', auth: true })).resolves.toMatchObject({
      data: { id: 'x' },
    });
    expect(breaker.state).toBe('closed');
  });
});

describe('a long Retry-After during an outage', () => {
  it('503 with Retry-After: 100 everywhere: the open circuit ends the backoffs, the breaker gives up on time', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, openMs: 50, maxOpenMs: 100, maxOutageMs: 500 });
    const { http } = await client(
      { '/v1/x': fail(503, 'maintenance', { 'retry-after': '100' }) },
      { breaker, real: true },
    );
    const started = Date.now();
    const errors = await Promise.all(
      [1, 2, 3].map(() => rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))),
    );
    expect(errors.map((e) => (e as Error).constructor.name)).toEqual([
      'ServiceUnavailableError',
      'ServiceUnavailableError',
      'ServiceUnavailableError',
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('the run stop signal ends every wait', () => {
  it('a Retry-After of 100 s is not waited out after the stop signal', async () => {
    const stop = new AbortController();
    const { http, limiter } = await client(
      { '/v1/x': script(fail(429, 'slow down', { 'retry-after': '100' }), ok({ id: 'x' })) },
      { stopSignal: stop.signal, real: true },
    );
    const started = Date.now();
    const pending = rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }));
    setTimeout(() => stop.abort(), 200);
    const err = await pending;
    expect(err).toBeInstanceOf(InterruptedError);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(limiter.pausedUntil - Date.now()).toBeGreaterThan(90_000);
  });

  it('a backoff after a cut attempt ends on the stop signal and the request stays in doubt', async () => {
    const stop = new AbortController();
    const { http } = await client(
      { '/v1/tx': script(({ req }) => req.socket.destroy(), fail(503, 'down', { 'retry-after': '100' })) },
      { stopSignal: stop.signal, real: true },
    );
    const pending = rejection(http.request(tx));
    setTimeout(() => stop.abort(), 300);
    const err = (await pending) as InterruptedError;
    expect(err).toBeInstanceOf(InterruptedError);
    expect(err.inDoubt).toBeDefined();
    expect(transactionFailure(err).status).toBe('unknown');
  });
});

describe('failures no wait can mend end the run at once, in their own words', () => {
  it('a 429 asking for a day, longer than --max-outage: the breaker gives up, nothing is retried', async () => {
    const breaker = new CircuitBreaker({ maxOutageMs: 30_000 });
    const { server, http } = await client(
      {
        '/v1/tx': fail(429, 'slow down', { 'retry-after': '86400' }),
      },
      { breaker },
    );
    const err = (await rejection(http.request(tx))) as ServiceUnavailableError;
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err.reason).toBe(
      'the service answered 429 Too Many Requests asking to wait 86400 s, longer than --max-outage (30 s) - run again later to resume',
    );
    expect(server.count('/v1/tx')).toBe(1);
    expect(breaker.gaveUp).toBe(true);
    expect(transactionFailure(err)).toMatchObject({
      status: 'skipped',
      messages: [`not sent: ${err.reason}`],
    });
  });

  it('a token that expires at once: one run error, the request that needed it "not sent"', async () => {
    const breaker = new CircuitBreaker({ maxOutageMs: 30_000 });
    const { server, http } = await client(
      {
        [TOKEN_PATH]: ok({ access_token: 'tok', token_type: 'Bearer', expires_in: 0 }),
        '/v1/tx': ok({ id: 'tx-1' }, 201),
      },
      { breaker },
    );
    const err = (await rejection(http.request(tx))) as ServiceUnavailableError;
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err.reason).toMatch(
      /^the identity endpoint could not issue a token \(POST \/auth\/realms\/service\/protocol\/openid-connect\/token answered 200: unexpected answer: expires_in: .+\) - run again later to resume$/,
    );
    expect(server.count('/v1/tx')).toBe(0);
    expect(breaker.gaveUpBecause).toBe(err.reason);
    const row = transactionFailure(err);
    expect(row.status).toBe('skipped');
    expect(row.messages[0]).toMatch(/^not sent: the identity endpoint could not issue a token/);
  });
});

describe('a service host name that does not resolve', () => {
  /** A dispatcher whose resolver answers "no such name" (ENOTFOUND) while `down()` says so. */
  function resolver(down: () => boolean) {
    let asked = 0;
    const dispatcher = new Agent({
      connect: {
        lookup: (_host, _options, callback) => {
          asked += 1;
          if (down()) {
            const error = Object.assign(new Error('getaddrinfo ENOTFOUND localhost'), { code: 'ENOTFOUND' });
            callback(error, '', 4);
          } else callback(null, [{ address: '127.0.0.1', family: 4 }] as never, 4);
        },
      },
    });
    return { dispatcher, asked: () => asked };
  }

  async function viaName(server: TestServer, dispatcher: Agent, breaker: CircuitBreaker, time: FakeTime) {
    const http = new HttpClient({
      // A name, so that the resolver is asked (plain http is taken for loopback names only).
      baseUrl: server.url.replace('127.0.0.1', 'localhost'),
      limiter: new RateLimiter({ rate: 1000, ...time }),
      random: () => 0.5,
      ...time,
      breaker,
      dispatcher,
    });
    clients.push(http);
    return http;
  }

  it('is an outage waited through: the request goes once the name resolves again', async () => {
    const server = await startServer({ '/v1/x': ok({ id: 'x' }) });
    servers.push(server);
    const time = fakeTime();
    const breaker = new CircuitBreaker({ failureThreshold: 3, maxOutageMs: 60_000, ...time });
    const started = time.now();
    // The resolver restarts for 20 s of the fake clock.
    const { dispatcher, asked } = resolver(() => time.now() - started < 20_000);
    const http = await viaName(server, dispatcher, breaker, time);
    await expect(http.request({ method: 'GET', path: '/v1/x', auth: false })).resolves.toMatchObject({
      data: { id: 'x' },
    });
    expect(asked()).toBeGreaterThan(5);
    expect(server.count('/v1/x')).toBe(1);
    await dispatcher.close();
  });

  it('past --max-outage: the run stops as for any outage (exit 6), the request not sent', async () => {
    const server = await startServer({ '/v1/tx': ok({ id: 'tx' }, 201) });
    servers.push(server);
    const time = fakeTime();
    const breaker = new CircuitBreaker({ failureThreshold: 3, maxOutageMs: 20_000, ...time });
    const { dispatcher } = resolver(() => true);
    const http = await viaName(server, dispatcher, breaker, time);
    const err = (await rejection(http.request({ ...tx, auth: false }))) as ServiceUnavailableError;
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err.exitCode).toBe(6);
    expect(transactionFailure(err)).toMatchObject({ status: 'skipped' });
    expect(time.now()).toBeGreaterThanOrEqual(Date.UTC(2025, 0, 1) + 20_000);
    expect(server.count('/v1/tx')).toBe(0);
    await dispatcher.close();
  });
});
