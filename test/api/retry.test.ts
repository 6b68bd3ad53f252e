import { describe, expect, it } from 'vitest';
import {
  classifyNetworkError,
  delayFor,
  type HttpMethod,
  parseRetryAfter,
  type RetryQuestion,
  shouldRetry,
} from '../../src/api/retry.js';

const base = { attempt: 1, maxAttempts: 5, hasIdempotencyKey: false };

describe('shouldRetry', () => {
  const cases: [string, Partial<RetryQuestion> & { method: HttpMethod }, boolean][] = [
    ['GET 500', { method: 'GET', status: 500 }, true],
    ['GET 502', { method: 'GET', status: 502 }, true],
    ['GET 503', { method: 'GET', status: 503 }, true],
    ['GET 504', { method: 'GET', status: 504 }, true],
    ['GET 501 (not transient)', { method: 'GET', status: 501 }, false],
    ['DELETE 503', { method: 'DELETE', status: 503 }, true],
    ['GET 429', { method: 'GET', status: 429 }, true],
    ['POST 429 without key (not processed)', { method: 'POST', status: 429 }, true],
    ['POST 408 without key (not processed)', { method: 'POST', status: 408 }, true],
    ['POST 500 without key', { method: 'POST', status: 500 }, false],
    ['POST 500 with key', { method: 'POST', status: 500, hasIdempotencyKey: true }, true],
    ['PATCH 503 without key', { method: 'PATCH', status: 503 }, false],
    ['PUT 503 without key', { method: 'PUT', status: 503 }, false],
    ['PUT 503 declared safe', { method: 'PUT', status: 503, safeToRepeat: true }, true],
    ['POST 503 declared safe', { method: 'POST', status: 503, safeToRepeat: true }, true],
    [
      'POST 409 with key (first attempt in progress)',
      { method: 'POST', status: 409, hasIdempotencyKey: true },
      true,
    ],
    ['POST 409 without key', { method: 'POST', status: 409 }, false],
    ['GET 409', { method: 'GET', status: 409 }, false],
    ['GET 400', { method: 'GET', status: 400 }, false],
    ['GET 401', { method: 'GET', status: 401 }, false],
    ['GET 403', { method: 'GET', status: 403 }, false],
    ['GET 404', { method: 'GET', status: 404 }, false],
    ['POST 422 with key', { method: 'POST', status: 422, hasIdempotencyKey: true }, false],
    ['POST 400 with key', { method: 'POST', status: 400, hasIdempotencyKey: true }, false],
    ['GET ECONNRESET', { method: 'GET', errorCode: 'ECONNRESET' }, true],
    ['GET headers timeout', { method: 'GET', errorCode: 'UND_ERR_HEADERS_TIMEOUT' }, true],
    ['POST ECONNRESET without key', { method: 'POST', errorCode: 'ECONNRESET' }, false],
    ['POST ECONNRESET with key', { method: 'POST', errorCode: 'ECONNRESET', hasIdempotencyKey: true }, true],
    ['POST socket closed without key', { method: 'POST', errorCode: 'UND_ERR_SOCKET' }, false],
    ['POST ECONNREFUSED without key (never sent)', { method: 'POST', errorCode: 'ECONNREFUSED' }, true],
    [
      'POST connect timeout without key (never sent)',
      { method: 'POST', errorCode: 'UND_ERR_CONNECT_TIMEOUT' },
      true,
    ],
    [
      'GET ENOTFOUND (a resolver restarting: waited through)',
      { method: 'GET', errorCode: 'ENOTFOUND' },
      true,
    ],
    ['POST ENOTFOUND without a key (never sent)', { method: 'POST', errorCode: 'ENOTFOUND' }, true],
    ['GET TLS certificate (permanent)', { method: 'GET', errorCode: 'CERT_HAS_EXPIRED' }, false],
    ['GET unknown error code', { method: 'GET', errorCode: 'EWHATEVER' }, false],
    ['GET 503 on the last attempt', { method: 'GET', status: 503, attempt: 5 }, false],
    ['GET 429 on the last attempt', { method: 'GET', status: 429, attempt: 5 }, false],
    ['GET ECONNREFUSED beyond the budget', { method: 'GET', errorCode: 'ECONNREFUSED', attempt: 6 }, false],
  ];
  it.each(cases)('%s → %s', (_name, q, expected) => {
    expect(shouldRetry({ ...base, ...q })).toBe(expected);
  });
});

describe('classifyNetworkError', () => {
  it.each([
    ['ECONNREFUSED', false, true],
    ['UND_ERR_CONNECT_TIMEOUT', false, true],
    ['ENOTFOUND', false, true],
    ['ERR_TLS_CERT_ALTNAME_INVALID', false, false],
    ['ECONNRESET', true, true],
    ['UND_ERR_SOCKET', true, true],
    ['UND_ERR_HEADERS_TIMEOUT', true, true],
    ['UND_ERR_BODY_TIMEOUT', true, true],
    ['ABORTED', true, false],
    [undefined, true, false],
  ])('%s: mayHaveTakenEffect %s, transient %s', (code, mayHaveTakenEffect, transient) => {
    expect(classifyNetworkError(code)).toEqual({ mayHaveTakenEffect, transient });
  });
});

describe('delayFor', () => {
  const opts = { baseMs: 100, capMs: 1000 };
  it.each([
    // attempt, random, jitter, retryAfterMs, expected
    [1, 1, 'full', undefined, 100],
    [2, 1, 'full', undefined, 200],
    [3, 1, 'full', undefined, 400],
    [4, 1, 'full', undefined, 800],
    [5, 1, 'full', undefined, 1000],
    [50, 1, 'full', undefined, 1000],
    [3, 0, 'full', undefined, 0],
    [3, 0.5, 'full', undefined, 200],
    [3, 0, 'equal', undefined, 200],
    [3, 1, 'equal', undefined, 400],
    [3, 0.5, 'equal', undefined, 300],
    [1, 0, 'full', 1000, 1000],
    [4, 1, 'full', 500, 800],
    [1, 0.2, 'full', 30_000, 30_000],
    [1, 0, 'full', 0, 0],
  ] as const)(
    'attempt %i random %f %s retryAfter %s → %i ms',
    (attempt, r, jitter, retryAfterMs, expected) => {
      expect(delayFor(attempt, { ...opts, jitter, retryAfterMs, random: () => r })).toBe(expected);
    },
  );

  it('never exceeds the cap without Retry-After, whatever the attempt', () => {
    for (let attempt = 1; attempt < 2000; attempt += 37) {
      expect(delayFor(attempt, { ...opts, random: () => 0.999 })).toBeLessThanOrEqual(1000);
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    ['1', 1000],
    ['0', 0],
    ['120', 120_000],
    [' 2 ', 2000],
    ['1.5', 1500],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    [['3', '9'], 3000],
    ['', undefined],
    [undefined, undefined],
    [null, undefined],
    ['-1', undefined],
    ['soon', undefined],
    ['12abc', undefined],
  ] as const)('%j → %s', (header, expected) => {
    expect(parseRetryAfter(header as string | string[] | undefined | null, now)).toBe(expected);
  });
});
