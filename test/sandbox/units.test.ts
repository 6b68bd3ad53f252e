import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../src/errors.js';
import { RateLimiter, retryAfterSeconds } from '../../src/sandbox/faults.js';
import {
  DEFAULT_CLI_PORT,
  resolveSandboxConfig,
  SANDBOX_DEFAULTS,
  SANDBOX_FLAGS,
  type SandboxOptions,
  sandboxOptionsFromFlags,
} from '../../src/sandbox/flags.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { signJwt, verifyJwt } from '../../src/sandbox/jwt.js';
import { divideHalfUp, formatFixed } from '../../src/sandbox/money.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { quote } from '../../src/sandbox/quote.js';
import { retryDelay } from '../../src/sandbox/webhooks.js';
import { callbackUrlProblem, isLoopbackHost } from '../../src/webhooks/callback-url.js';
import { sandbox } from './helpers.js';

describe('SANDBOX_FLAGS', () => {
  it('names every flag the README and docs/sandbox.md give, with help text and a default or a reason to have none', () => {
    const names = SANDBOX_FLAGS.map((f) => f.name);
    for (const name of [
      'latency',
      'jitter',
      'error-rate',
      'rate-limit',
      'reset-rate',
      'token-ttl',
      'simulation-ttl',
      'duplicate-rate',
      'webhook-secret',
      'seed',
      'port',
      'host',
    ]) {
      expect(names).toContain(name);
    }
    expect(new Set(names).size).toBe(names.length);
    for (const flag of SANDBOX_FLAGS) {
      expect(flag.help.length).toBeGreaterThan(10);
      if (flag.option !== 'port' && flag.default !== undefined) {
        expect(flag.default).toBe(SANDBOX_DEFAULTS[flag.option as keyof typeof SANDBOX_DEFAULTS]);
      }
    }
    expect(SANDBOX_FLAGS.find((f) => f.name === 'port')?.default).toBe(DEFAULT_CLI_PORT);
  });

  it('turns parsed flags (kebab or camel case) into options', () => {
    const options = sandboxOptionsFromFlags({
      'error-rate': 0.1,
      rateLimit: 50,
      port: 0,
      'token-response': 'long',
      _: [],
    });
    expect(options).toEqual({ errorRate: 0.1, rateLimit: 50, port: 0, tokenResponse: 'long' });
  });

  it.each<[SandboxOptions, string]>([
    [{ errorRate: 1.5 }, '--error-rate must be a number from 0 to 1, got 1.5'],
    [{ port: 70000 }, '--port must be a whole number from 0 to 65535, got 70000'],
    [{ tokenTtl: 0 }, '--token-ttl must be a whole number from 1 to 31536000, got 0'],
    [{ latencyMs: Number.NaN }, '--latency must be a number from 0 to 600000, got NaN'],
    [{ tokenResponse: 'medium' as 'long' }, '--token-response must be one of short, long, got "medium"'],
    [{ webhookUrl: 'http://example.com/x' }, '--webhook-url: url must use https'],
    [{ webhookSecret: '' }, '--webhook-secret must not be empty'],
  ])('refuses %j with a UsageError naming the flag', (options, message) => {
    expect(() => resolveSandboxConfig(options)).toThrow(UsageError);
    expect(() => resolveSandboxConfig(options)).toThrow(message);
  });

  it('refuses a port in use with a ConfigError', async () => {
    const first = await sandbox();
    await expect(startSandbox({ port: first.port })).rejects.toThrow(ConfigError);
  });
});

describe('jwt', () => {
  const key = Buffer.alloc(32, 1);
  const claims = {
    iss: 'i',
    sub: 's',
    azp: 'c',
    typ: 'Bearer' as const,
    iat: 1,
    exp: 2,
    jti: 'j',
    sid: 'x',
    scope: 'read write',
    email: 'e',
    preferred_username: 'e',
  };

  it('verifies what it signed and refuses tampering', () => {
    const jwt = signJwt(claims, key);
    expect(verifyJwt(jwt, key)).toEqual({ ok: true, claims });
    expect(verifyJwt(jwt, Buffer.alloc(32, 2))).toEqual({ ok: false, reason: 'signature' });
    const [h, , s] = jwt.split('.');
    const payload = Buffer.from(JSON.stringify({ ...claims, sub: 'other' })).toString('base64url');
    expect(verifyJwt(`${h}.${payload}.${s}`, key)).toEqual({ ok: false, reason: 'signature' });
    const none = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    expect(verifyJwt(`${none}.${payload}.${s}`, key)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyJwt('a.b', key)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyJwt('a.b.c!', key)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('money and quotes', () => {
  it.each([
    [5n, 2n, 3n],
    [4n, 2n, 2n],
    [7n, 2n, 4n],
    [1n, 3n, 0n],
    [2n, 3n, 1n],
    [149n, 100n, 1n],
    [150n, 100n, 2n],
  ])('divideHalfUp(%s, %s) = %s', (n, d, q) => {
    expect(divideHalfUp(n, d)).toBe(q);
  });

  it('formats fixed point', () => {
    expect(formatFixed(17_250_000n, 6)).toBe('17.250000');
    expect(formatFixed(5n, 2)).toBe('0.05');
    expect(formatFixed(-1234n, 2)).toBe('-12.34');
    expect(formatFixed(7n, 0)).toBe('7');
  });

  it('quotes at the extremes of the variation and with the minimum fee', () => {
    // Cross-checked with Python's Decimal, ROUND_HALF_UP.
    expect(quote(10_000_000n, 'MXN', 0)).toEqual({
      fxRate: '17.077500',
      fee: '29.28',
      sourceAmount: '5884.94',
    });
    expect(quote(10_000_000n, 'MXN', 0.9999999)).toEqual({
      fxRate: '17.422500',
      fee: '28.70',
      sourceAmount: '5768.40',
    });
    expect(quote(100n, 'BRL', 0.5)).toEqual({ fxRate: '5.100000', fee: '1.00', sourceAmount: '1.20' });
    expect(quote(12_345n, 'USD', 0.3)).toEqual({ fxRate: '1.000000', fee: '0.00', sourceAmount: '123.45' });
  });
});

describe('faults, webhooks and URLs', () => {
  it('rate-limits with a token bucket of N per second', () => {
    const limiter = new RateLimiter(2, 0);
    expect([limiter.take(0), limiter.take(0), limiter.take(0)]).toEqual([0, 0, 500]);
    expect(limiter.take(499)).toBe(2);
    expect(limiter.take(500)).toBe(0);
    expect(new RateLimiter(0, 0).take(0)).toBe(0);
    expect([retryAfterSeconds(1), retryAfterSeconds(1000), retryAfterSeconds(1001)]).toEqual([1, 1, 2]);
  });

  it('backs webhook retries off exponentially', () => {
    expect([2, 3, 4, 5, 6].map((attempt) => retryDelay(attempt, 500))).toEqual([500, 1000, 2000, 4000, 8000]);
  });

  it('accepts https anywhere and http only to loopback', () => {
    expect(callbackUrlProblem('https://example.com/x')).toBeUndefined();
    expect(callbackUrlProblem('http://127.0.0.2:80/x')).toBeUndefined();
    expect(callbackUrlProblem('http://example.com/x')).toMatch(/https/);
    expect(callbackUrlProblem('/relative')).toMatch(/absolute URL/);
    expect(['localhost', 'api.localhost', '127.0.0.1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['example.com', '10.0.0.1', '::2', '127.example.com'].some(isLoopbackHost)).toBe(false);
  });

  it('draws a repeatable stream from a seed', () => {
    const a = mulberry32(9);
    const b = mulberry32(9);
    const values = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(values);
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
  });
});
