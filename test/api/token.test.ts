import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/api/client.js';
import { TOKEN_PATH } from '../../src/api/contract.js';
import { checkCredentials, TokenManager } from '../../src/api/token.js';
import { AuthError, ConfigError } from '../../src/errors.js';
import { fakeTime } from './helpers/fake-time.js';
import {
  fail,
  type Handler,
  json,
  ok,
  script,
  startServer,
  type TestServer,
  TOKEN,
} from './helpers/server.js';

const CREDENTIALS = {
  clientId: 'client-abc',
  clientSecret: 'cs-very-secret-123',
  username: 'integrator@example.com',
  password: 'pw-very-secret-456',
};

let server: TestServer | undefined;
let http: HttpClient | undefined;
afterEach(async () => {
  await http?.close();
  await server?.close();
  server = undefined;
  http = undefined;
});

async function manager(handler: Handler, options: { delayMs?: number } = {}) {
  const wrapped: Handler = options.delayMs
    ? (ex) => new Promise<void>((r) => setTimeout(() => r(handler(ex) as undefined), options.delayMs))
    : handler;
  server = await startServer({ [TOKEN_PATH]: wrapped });
  const time = fakeTime();
  http = new HttpClient({
    baseUrl: server.url,
    clock: time.clock,
    sleep: time.sleep,
    retry: { maxAttempts: 3 },
  });
  const tokens = new TokenManager({ http, credentials: CREDENTIALS, clock: time.clock });
  return { tokens, time, server };
}

const issue =
  (lifetimeS: number): Handler =>
  ({ res, index }) =>
    json(res, 200, { ...TOKEN, access_token: `tok-${index + 1}`, expires_in: lifetimeS });

describe('TokenManager', () => {
  it('sends the password grant, form-urlencoded', async () => {
    const { tokens, server } = await manager(issue(3600));
    expect(await tokens.getToken()).toBe('tok-1');
    const sent = server.received[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent.body))).toEqual({
      grant_type: 'password',
      client_id: 'client-abc',
      client_secret: 'cs-very-secret-123',
      username: 'integrator@example.com',
      password: 'pw-very-secret-456',
    });
    expect(sent.headers.authorization).toBeUndefined();
  });

  it('single flight: 20 concurrent callers cause exactly 1 token request', async () => {
    const { tokens, server } = await manager(issue(3600), { delayMs: 30 });
    const got = await Promise.all(Array.from({ length: 20 }, () => tokens.getToken()));
    expect(new Set(got)).toEqual(new Set(['tok-1']));
    expect(server.count(TOKEN_PATH)).toBe(1);
  });

  it('reuses the token, then refreshes it before expiry (60 s margin on long lifetimes)', async () => {
    const { tokens, time, server } = await manager(issue(3600));
    expect(await tokens.getToken()).toBe('tok-1');
    time.advance(3539_000);
    expect(await tokens.getToken()).toBe('tok-1');
    time.advance(1_000);
    expect(await tokens.getToken()).toBe('tok-2');
    expect(server.count(TOKEN_PATH)).toBe(2);
  });

  it('refreshes short-lived tokens at 80% of their lifetime', async () => {
    const { tokens, time } = await manager(issue(30));
    await tokens.getToken();
    time.advance(23_999);
    expect(await tokens.getToken()).toBe('tok-1');
    time.advance(1);
    expect(await tokens.getToken()).toBe('tok-2');
  });

  it('invalidate() drops the current token only when it is the one refused', async () => {
    const { tokens, server } = await manager(issue(3600));
    const first = await tokens.getToken();
    tokens.invalidate(first);
    const second = await tokens.getToken();
    expect(second).toBe('tok-2');
    // A late 401 for the old token must not throw away the new one.
    tokens.invalidate(first);
    expect(await tokens.getToken()).toBe('tok-2');
    expect(server.count(TOKEN_PATH)).toBe(2);
  });

  it('keeps using a still-valid token when the early refresh fails for a passing reason', async () => {
    const { tokens, time } = await manager(script(issue(100), fail(503), fail(503), fail(503), issue(100)));
    expect(await tokens.getToken()).toBe('tok-1');
    time.advance(81_000); // past the refresh point (80 s), before expiry (100 s)
    expect(await tokens.getToken()).toBe('tok-1');
    time.advance(20_000); // expired: the fallback is over
    expect(await tokens.getToken()).toBe('tok-5');
  });

  it('retries the token request on 5xx (a second grant is harmless)', async () => {
    const { tokens, server } = await manager(script(fail(502), issue(3600)));
    expect(await tokens.getToken()).toBe('tok-2');
    expect(server.count(TOKEN_PATH)).toBe(2);
  });

  it('401 from the token endpoint: AuthError naming the client credentials, never their values', async () => {
    const { tokens, server } = await manager(({ res }) =>
      json(res, 401, {
        error: 'invalid_client',
        error_description: 'Invalid client or Invalid client credentials',
      }),
    );
    const err = await tokens.getToken().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    const auth = err as AuthError;
    expect(auth.exitCode).toBe(3);
    expect(auth.status).toBe(401);
    expect(auth.message).toContain('PAYOUTS_CLIENT_ID and PAYOUTS_CLIENT_SECRET');
    expect(auth.message).toContain('Invalid client credentials');
    expect(`${auth.message} ${JSON.stringify(auth)}`).not.toMatch(
      /very-secret|client-abc|integrator@example/,
    );
    expect(server.count(TOKEN_PATH)).toBe(1);
  });

  it('401 invalid_grant (wrong user credentials): AuthError naming the user credentials', async () => {
    const { tokens } = await manager(({ res }) =>
      json(res, 401, { error: 'invalid_grant', error_description: 'Invalid user credentials' }),
    );
    const err = (await tokens.getToken().catch((e: unknown) => e)) as AuthError;
    expect(err.message).toContain('check PAYOUTS_USERNAME and PAYOUTS_PASSWORD');
    expect(err.message).not.toContain('CLIENT_SECRET');
  });

  it('400 invalid_grant: AuthError naming the user credentials', async () => {
    const { tokens, server } = await manager(({ res }) =>
      json(res, 400, { error: 'invalid_grant', error_description: 'Invalid user credentials' }),
    );
    const err = (await tokens.getToken().catch((e: unknown) => e)) as AuthError;
    expect(err).toBeInstanceOf(AuthError);
    expect(err.message).toMatch(/refused the credentials \(400 invalid_grant: Invalid user credentials\)/);
    expect(err.message).toContain('PAYOUTS_USERNAME and PAYOUTS_PASSWORD');
    expect(server.count(TOKEN_PATH)).toBe(1);
  });

  it('a failed fetch is not cached: the next caller tries again', async () => {
    const { tokens } = await manager(script(fail(401), issue(3600)));
    await expect(tokens.getToken()).rejects.toBeInstanceOf(AuthError);
    expect(await tokens.getToken()).toBe('tok-2');
  });

  it('refuses an answer without an access token', async () => {
    const { tokens } = await manager(ok({ token_type: 'Bearer', expires_in: 60 }));
    await expect(tokens.getToken()).rejects.toMatchObject({
      code: 'SERVICE',
      serviceMessage: /access_token/,
    });
  });

  it('one caller aborting does not fail the others waiting on the same request', async () => {
    const { tokens } = await manager(issue(3600), { delayMs: 50 });
    const controller = new AbortController();
    const a = tokens.getToken(controller.signal);
    const b = tokens.getToken();
    controller.abort();
    await expect(a).rejects.toBeDefined();
    await expect(b).resolves.toBe('tok-1');
  });
});

describe('checkCredentials', () => {
  it('names every missing variable, not the values', () => {
    expect(() => checkCredentials({ clientId: 'x', password: 'p' })).toThrow(ConfigError);
    expect(() => checkCredentials({ clientId: 'x', password: 'p' })).toThrow(
      'missing credentials: set PAYOUTS_CLIENT_SECRET, PAYOUTS_USERNAME (dashboard Settings > API Credentials)',
    );
  });
});
