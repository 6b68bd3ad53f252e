import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, type HttpClientOptions } from '../../src/api/client.js';
import { TOKEN_PATH } from '../../src/api/contract.js';
import { type ApiLogger, parseServiceUrl } from '../../src/api/http.js';
import { RateLimiter } from '../../src/api/rate.js';
import { TokenManager } from '../../src/api/token.js';
import {
  AuthError,
  ConfigError,
  InterruptedError,
  NetworkError,
  RateLimitError,
  ServiceError,
} from '../../src/errors.js';
import { fakeTime } from './helpers/fake-time.js';
import {
  fail,
  type Handler,
  json,
  noContent,
  ok,
  resetAfterRequest,
  script,
  slow,
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

let server: TestServer | undefined;
const clients: HttpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

interface Setup {
  server: TestServer;
  http: HttpClient;
  time: ReturnType<typeof fakeTime>;
  limiter: RateLimiter;
  logs: { level: string; obj: object; msg: string }[];
}

/** A server with the given routes (plus a token endpoint) and a client with fake time. */
async function setup(
  routes: Record<string, Handler>,
  options: Partial<HttpClientOptions> = {},
): Promise<Setup> {
  server = await startServer({ [TOKEN_PATH]: tokenEndpoint, ...routes });
  const time = fakeTime();
  const limiter = new RateLimiter({ rate: 1000, ...time });
  const logs: Setup['logs'] = [];
  const logger: ApiLogger = {
    debug: (obj, msg) => logs.push({ level: 'debug', obj, msg }),
    warn: (obj, msg) => logs.push({ level: 'warn', obj, msg }),
  };
  const common = { limiter, logger, clock: time.clock, sleep: time.sleep, random: () => 0.5, ...options };
  const authHttp = new HttpClient({ ...common, baseUrl: server.url });
  const tokens = new TokenManager({ http: authHttp, credentials: CREDENTIALS, clock: time.clock });
  const http = new HttpClient({ ...common, baseUrl: server.url, tokens });
  clients.push(authHttp, http);
  return { server, http, time, limiter, logs };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('HttpClient success and JSON', () => {
  it('sends JSON with the bearer token and reads JSON back', async () => {
    const { http, server } = await setup({ '/v1/things': ok({ id: 't1' }, 201, { 'x-request-id': 'r-1' }) });
    const res = await http.request({ method: 'POST', path: '/v1/things', body: { a: 1 }, auth: true });
    expect(res).toMatchObject({ status: 201, data: { id: 't1' }, requestId: 'r-1' });
    const sent = server.received.find((r) => r.path === '/v1/things')!;
    expect(sent.headers.authorization).toBe('Bearer tok-1');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent.body)).toEqual({ a: 1 });
  });

  it('treats 204 as success without a body', async () => {
    const { http } = await setup({ '/v1/x': noContent });
    await expect(http.request({ method: 'DELETE', path: '/v1/x', auth: true })).resolves.toMatchObject({
      status: 204,
      data: undefined,
    });
  });

  it('appends paths to a base URL with a path prefix', async () => {
    const { server: s } = await setup({ '/api/v1/x': ok({ ok: true }) });
    const http = new HttpClient({ baseUrl: `${s.url}/api/` });
    clients.push(http);
    await expect(http.request({ method: 'GET', path: '/v1/x', auth: false })).resolves.toMatchObject({
      status: 200,
    });
  });

  it('refuses a 2xx answer that is not JSON, keeping the 2xx status', async () => {
    const { http } = await setup({ '/v1/x': ({ res }) => res.writeHead(201).end('<html>created</html>') });
    const err = await rejection(http.request({ method: 'POST', path: '/v1/x', auth: true }));
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).status).toBe(201);
  });
});

describe('HttpClient errors (error body and status codes of docs/service.md)', () => {
  it('parses the error body into a ServiceError and never retries a 400', async () => {
    const { http, server } = await setup({
      '/v1/recipients': fail(400, 'routingNumber must be 9 characters long', { 'x-request-id': 'rid-400' }),
    });
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/recipients', body: {}, idempotencyKey: 'k', auth: true }),
    )) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({
      code: 'SERVICE',
      status: 400,
      serviceMessage: 'routingNumber must be 9 characters long',
      requestId: 'rid-400',
      path: '/v1/recipients',
      method: 'POST',
      exitCode: 1,
    });
    expect(err.message).toBe(
      'POST /v1/recipients answered 400 Error: routingNumber must be 9 characters long (request id rid-400)',
    );
    expect(server.count('/v1/recipients')).toBe(1);
  });

  it('keeps each validation message of a 400 on its own (ErrorBody.errors)', async () => {
    const messages = ['accountNumber must be provided', 'routingNumber must be provided'];
    const { http } = await setup({
      '/v1/recipients': ({ res }) =>
        json(res, 400, { status: 400, error: 'Bad Request', message: messages.join('; '), errors: messages }),
    });
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/recipients', auth: true }),
    )) as ServiceError;
    expect(err.serviceMessage).toBe(messages.join('; '));
    expect(err.serviceErrors).toEqual(messages);
  });

  it('a keyed request whose first attempt is still in progress (409) is asked again', async () => {
    const { http, server } = await setup({
      '/v1/tx': script(
        fail(409, 'A request with this Idempotency-Key is still in progress'),
        ok({ id: 'tx' }, 201),
      ),
    });
    await http.request({ method: 'POST', path: '/v1/tx', body: {}, idempotencyKey: 'k', auth: true });
    expect(server.count('/v1/tx')).toBe(2);
  });

  it.each([403, 404, 422])('never retries %i', async (status) => {
    const { http, server } = await setup({ '/v1/x': fail(status, 'no') });
    const err = await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }));
    expect(err).toMatchObject({ status, serviceMessage: 'no' });
    expect(server.count('/v1/x')).toBe(1);
  });

  it('describes an error answer without the service error body by its status', async () => {
    const { http } = await setup({
      '/v1/x': ({ res }) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>'),
    });
    const err = (await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))) as ServiceError;
    expect(err.serviceMessage).toBe('Not Found');
  });
});

describe('HttpClient retries', () => {
  it('GET: fails twice with 503, then succeeds: 3 requests, 2 backoffs', async () => {
    const { http, server, time } = await setup({ '/v1/x': script(fail(503), fail(503), ok({ id: 'x' })) });
    const res = await http.request({ method: 'GET', path: '/v1/x', auth: true });
    expect(res.data).toEqual({ id: 'x' });
    expect(server.count('/v1/x')).toBe(3);
    // Full jitter with random 0.5: half of 250 ms, then half of 500 ms.
    expect(time.sleeps.filter((ms) => ms >= 100)).toEqual([125, 250]);
  });

  it('GET: gives up after maxAttempts with the last ServiceError', async () => {
    const { http, server } = await setup({ '/v1/x': fail(500, 'down') }, { retry: { maxAttempts: 4 } });
    const err = (await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))) as ServiceError;
    expect(err).toMatchObject({ status: 500, attempts: 4, serviceMessage: 'down' });
    expect(server.count('/v1/x')).toBe(4);
  });

  it('POST without an Idempotency-Key is not retried on 503', async () => {
    const { http, server } = await setup({ '/v1/x': script(fail(503), ok({})) });
    await expect(http.request({ method: 'POST', path: '/v1/x', body: {}, auth: true })).rejects.toMatchObject(
      {
        status: 503,
      },
    );
    expect(server.count('/v1/x')).toBe(1);
  });

  it('POST with an Idempotency-Key is retried with the same key', async () => {
    const { http, server } = await setup({ '/v1/tx': script(fail(502), fail(500), ok({ id: 'tx' }, 201)) });
    const res = await http.request({
      method: 'POST',
      path: '/v1/tx',
      body: {},
      idempotencyKey: 'key-1',
      auth: true,
    });
    expect(res.status).toBe(201);
    const keys = server.received.filter((r) => r.path === '/v1/tx').map((r) => r.headers['idempotency-key']);
    expect(keys).toEqual(['key-1', 'key-1', 'key-1']);
  });

  it('honours Retry-After on a 503', async () => {
    const { http, time } = await setup({
      '/v1/x': script(fail(503, 'maintenance', { 'retry-after': '7' }), ok({})),
    });
    await http.request({ method: 'GET', path: '/v1/x', auth: true });
    expect(time.sleeps).toContain(7000);
  });

  it('logs each retry without secrets', async () => {
    const { http, logs } = await setup({ '/v1/x': script(fail(503), ok({})) });
    await http.request({ method: 'GET', path: '/v1/x', auth: true });
    const retry = logs.find((l) => l.msg === 'retrying request')!;
    expect(retry.obj).toMatchObject({ method: 'GET', path: '/v1/x', status: 503, attempt: 1 });
    expect(JSON.stringify(logs)).not.toMatch(/tok-1|very-secret/);
  });
});

describe('HttpClient 401: one re-authentication', () => {
  it('401 once, then OK: one new token, one retry', async () => {
    const { http, server } = await setup({ '/v1/x': script(fail(401, 'token expired'), ok({ id: 'x' })) });
    await expect(
      http.request({ method: 'POST', path: '/v1/x', body: {}, auth: true }),
    ).resolves.toMatchObject({
      data: { id: 'x' },
    });
    expect(server.count('/v1/x')).toBe(2);
    expect(server.count(TOKEN_PATH)).toBe(2);
    const auth = server.received.filter((r) => r.path === '/v1/x').map((r) => r.headers.authorization);
    expect(auth).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('401 twice: AuthError (exit 3) after exactly one re-authentication', async () => {
    const { http, server } = await setup({ '/v1/x': fail(401, 'invalid token') });
    const err = (await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))) as AuthError;
    expect(err).toBeInstanceOf(AuthError);
    expect(err.exitCode).toBe(3);
    expect(server.count('/v1/x')).toBe(2);
    expect(server.count(TOKEN_PATH)).toBe(2);
    expect(err.message).not.toMatch(/tok-\d|very-secret/);
  });
});

describe('HttpClient 429: pause everything', () => {
  it('429 with Retry-After 1, then OK: pauses the limiter for 1 s and lowers the rate', async () => {
    const { http, server, limiter, time } = await setup({
      '/v1/x': script(fail(429, 'slow down', { 'retry-after': '1' }), ok({ id: 'x' })),
    });
    const start = time.now();
    await expect(
      http.request({ method: 'POST', path: '/v1/x', body: {}, auth: true }),
    ).resolves.toMatchObject({
      status: 200,
    });
    expect(server.count('/v1/x')).toBe(2);
    expect(limiter.pausedUntil).toBe(start + 1000);
    expect(time.now() - start).toBeGreaterThanOrEqual(1000);
    expect(limiter.currentRate).toBeLessThan(1000);
  });

  it('a 429 holds back other requests too', async () => {
    const { http, server, time } = await setup({
      '/v1/a': script(fail(429, 'slow down', { 'retry-after': '2' }), ok({})),
      '/v1/b': ({ res }) => json(res, 200, { at: time.now() }),
    });
    const start = time.now();
    await http.request({ method: 'GET', path: '/v1/a', auth: true });
    const b = await http.request({ method: 'GET', path: '/v1/b', auth: true });
    expect((b.data as { at: number }).at - start).toBeGreaterThanOrEqual(2000);
    expect(server.count('/v1/a')).toBe(2);
  });

  it('gives up with RateLimitError after the throttle budget', async () => {
    const { http, server } = await setup(
      { '/v1/x': fail(429, 'no') },
      { retry: { maxThrottledAttempts: 3 } },
    );
    const err = await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ code: 'RATE_LIMIT', status: 429, attempts: 3 });
    expect(server.count('/v1/x')).toBe(3);
  });

  it('does not wait for a Retry-After beyond the limit', async () => {
    const { http, server } = await setup({ '/v1/x': fail(429, 'no', { 'retry-after': '86400' }) });
    const err = await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(86_400_000);
    expect(server.count('/v1/x')).toBe(1);
  });
});

describe('HttpClient network failures', () => {
  it('a reset after the request was read: POST without key → NetworkError that may have taken effect, 1 request', async () => {
    const { http, server } = await setup({ '/v1/tx': resetAfterRequest });
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/tx', body: {}, auth: true }),
    )) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.mayHaveTakenEffect).toBe(true);
    expect(err.code).toBe('NETWORK');
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(err.errorCode);
    expect(err.message).toMatch(/may have taken effect/);
    expect(server.count('/v1/tx')).toBe(1);
  });

  it('a reset on a GET is retried', async () => {
    const { http, server } = await setup({ '/v1/x': script(resetAfterRequest, ok({ id: 'x' })) });
    await expect(http.request({ method: 'GET', path: '/v1/x', auth: true })).resolves.toMatchObject({
      data: { id: 'x' },
    });
    expect(server.count('/v1/x')).toBe(2);
  });

  it('a reset on a keyed POST is retried with the same key', async () => {
    const { http, server } = await setup({ '/v1/tx': script(resetAfterRequest, ok({ id: 'tx' }, 201)) });
    await http.request({ method: 'POST', path: '/v1/tx', body: {}, idempotencyKey: 'k-9', auth: true });
    expect(
      server.received.filter((r) => r.path === '/v1/tx').map((r) => r.headers['idempotency-key']),
    ).toEqual(['k-9', 'k-9']);
  });

  it('slow headers time out: NetworkError that may have taken effect, not retried without a key', async () => {
    const { http, server } = await setup(
      { '/v1/tx': slow(2000, ok({ id: 'late' })) },
      { timeouts: { headersMs: 150 } },
    );
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/tx', body: {}, auth: true }),
    )) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.errorCode).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(err.mayHaveTakenEffect).toBe(true);
    expect(server.count('/v1/tx')).toBe(1);
  });

  it('a body dribbled one byte at a time ends at the overall deadline, then is retried under its key', async () => {
    const dribble: Handler = (exchange) => {
      const { res, index } = exchange;
      if (index > 0) return ok({ id: 'tx-1' })(exchange);
      res.writeHead(200, { 'content-type': 'application/json' });
      // Never silent for long (undici's body timeout never fires), never finished in time.
      const timer = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(timer));
    };
    const { http, server } = await setup(
      { '/v1/tx': dribble },
      { timeouts: { deadlineMs: 300, bodyMs: 10_000 } },
    );
    const started = Date.now();
    const answer = await http.request({
      method: 'POST',
      path: '/v1/tx',
      body: {},
      idempotencyKey: 'k-d',
      auth: true,
    });
    expect(answer.data).toEqual({ id: 'tx-1' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(
      server.received.filter((r) => r.path === '/v1/tx').map((r) => r.headers['idempotency-key']),
    ).toEqual(['k-d', 'k-d']);
  });

  it('a stalled keyed POST past every attempt is a NetworkError that may have taken effect', async () => {
    const { http, server } = await setup(
      { '/v1/tx': slow(5_000, ok({ id: 'late' })) },
      { timeouts: { deadlineMs: 100 }, retry: { maxAttempts: 2 } },
    );
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/tx', body: {}, idempotencyKey: 'k-s', auth: true }),
    )) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.errorCode).toBe('PAYOUTS_DEADLINE');
    expect(err.mayHaveTakenEffect).toBe(true);
    expect(server.count('/v1/tx')).toBe(2);
  });

  it('an answer larger than the limit is an answer that could not be read, with its status', async () => {
    const big: Handler = ({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"id":"${'x'.repeat(4096)}"}`);
    };
    const { http } = await setup({ '/v1/integrators/me': big }, { maxResponseBytes: 1024 });
    const err = (await rejection(
      http.request({ method: 'GET', path: '/v1/integrators/me', auth: true }),
    )) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.status).toBe(200);
    expect(err.message).toContain('the answer was larger than 1024 bytes and was not read');
  });

  it('an abandoned request (a stop past its grace) may have taken effect and is not retried', async () => {
    const abandon = new AbortController();
    const { http, server } = await setup(
      { '/v1/tx': slow(5_000, ok({ id: 'late' })) },
      { abandonSignal: abandon.signal },
    );
    const pending = rejection(
      http.request({ method: 'POST', path: '/v1/tx', body: {}, idempotencyKey: 'k-a', auth: true }),
    );
    while (server.count('/v1/tx') === 0) await new Promise((r) => setTimeout(r, 10));
    abandon.abort();
    const err = (await pending) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.errorCode).toBe('PAYOUTS_ABANDONED');
    expect(err.mayHaveTakenEffect).toBe(true);
    expect(server.count('/v1/tx')).toBe(1);
  });

  it('connection refused: never sent, so retried even for a POST, and reported as not taken effect', async () => {
    const { server: s } = await setup({});
    const url = s.url;
    await s.close();
    server = undefined;
    const time = fakeTime();
    const http = new HttpClient({
      baseUrl: url,
      clock: time.clock,
      sleep: time.sleep,
      retry: { maxAttempts: 3 },
    });
    clients.push(http);
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/x', body: {}, auth: false }),
    )) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ errorCode: 'ECONNREFUSED', mayHaveTakenEffect: false, attempts: 3 });
    expect(time.sleeps).toHaveLength(2);
  });
});

describe('HttpClient abort', () => {
  it('an abort before sending is an InterruptedError and sends nothing', async () => {
    const { http, server } = await setup({ '/v1/x': ok({}) });
    const err = await rejection(
      http.request({ method: 'GET', path: '/v1/x', auth: true, signal: AbortSignal.abort() }),
    );
    expect(err).toBeInstanceOf(InterruptedError);
    expect(server.count('/v1/x')).toBe(0);
  });

  it('an abort mid-request leaves the outcome unknown', async () => {
    const controller = new AbortController();
    // Abort once the service holds the request: deterministic, whatever the machine's speed.
    const { http } = await setup({ '/v1/x': () => controller.abort() });
    const pending = http.request({
      method: 'POST',
      path: '/v1/x',
      body: {},
      auth: true,
      signal: controller.signal,
    });
    const err = (await rejection(pending)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ errorCode: 'ABORTED', mayHaveTakenEffect: true });
  });
});

describe('secrets stay out of errors', () => {
  it('a service that echoes the Authorization header does not leak the token', async () => {
    const { http } = await setup({
      '/v1/x': ({ req, res }) =>
        json(res, 400, {
          status: 400,
          error: 'Bad Request',
          message: `bad header ${req.headers.authorization}`,
        }),
    });
    const err = (await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))) as ServiceError;
    expect(err.message).not.toContain('tok-1');
    expect(err.serviceMessage).not.toContain('tok-1');
    expect(err.message).toContain('Bearer [REDACTED]');
  });

  it('a failing token request reports neither the password nor the client secret', async () => {
    const { http } = await setup({ [TOKEN_PATH]: fail(500, 'identity down') }, { retry: { maxAttempts: 2 } });
    const err = (await rejection(http.request({ method: 'GET', path: '/v1/x', auth: true }))) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(`${err.message} ${JSON.stringify(err)} ${String(err.cause)}`).not.toMatch(
      /very-secret|integrator%40/,
    );
  });
});

describe('parseServiceUrl', () => {
  it.each([
    ['https://api.example.com', true],
    ['https://api.example.com/prefix', true],
    ['http://127.0.0.1:8080', true],
    ['http://127.1.2.3', true],
    ['http://localhost:3000', true],
    ['http://[::1]:3000', true],
    ['http://api.example.com', false],
    ['http://10.0.0.1', false],
    ['http://127.0.0.1.evil.com', false],
    ['http://localhost.evil.com', false],
    ['ftp://api.example.com', false],
    ['https://user:pw@api.example.com', false],
    ['not a url', false],
  ])('%s → %s', (url, accepted) => {
    if (accepted) expect(parseServiceUrl(url, '--base-url')).toBeInstanceOf(URL);
    else expect(() => parseServiceUrl(url, '--base-url')).toThrow(ConfigError);
  });

  it('names the option and says what to do, without the URL credentials', () => {
    expect(() => parseServiceUrl('http://api.example.com', '--auth-url')).toThrow(
      /--auth-url http:\/\/api.example.com uses plain http:\/\/.*use https:\/\//,
    );
    try {
      parseServiceUrl('https://me:hunter2@api.example.com', '--base-url');
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});

describe('token failures', () => {
  it('a broken connection to the identity endpoint leaves the request "not sent"', async () => {
    const { http, server } = await setup({ [TOKEN_PATH]: resetAfterRequest, '/v1/tx': ok({}) });
    const err = (await rejection(
      http.request({ method: 'POST', path: '/v1/tx', body: {}, idempotencyKey: 'k', auth: true }),
    )) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ path: '/v1/tx', mayHaveTakenEffect: false, attempts: 0 });
    expect(err.message).toMatch(/^POST \/v1\/tx was not sent: no token/);
    expect(server.count('/v1/tx')).toBe(0);
  });
});
