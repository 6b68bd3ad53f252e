/**
 * Retry policy as pure functions, testable as tables (after stripe-node `_shouldRetry` /
 * `_getSleepTimeInMS`, ky `retry-timing.ts`). The retry layer (layers/retry.ts) asks these; nothing here sleeps or
 * reads a clock.
 *
 * Rules (docs/service.md "Status codes"):
 * - 408 and 429 and connect-phase failures mean the service never processed the request, so
 *   they are retried for every method.
 * - 500, 502, 503, 504 and connections broken after sending are retried for GET, HEAD and
 *   DELETE, and for other methods only when the request carries an Idempotency-Key (or its
 *   caller declares it safe to repeat, e.g. a PUT replacing a record or a quote).
 * - 409 is retried for a request with an Idempotency-Key: its first attempt is still in
 *   progress (docs/api-assumptions.md).
 * - 400, 401, 403, 404, 422 and every other status are never retried here; the single
 *   re-authentication on 401 and the re-quote on an expired simulation live elsewhere.
 */

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Defaults in one object. Attempts count the first try. */
export const RETRY_DEFAULTS = {
  maxAttempts: 5,
  /** 429s have their own budget: the rate limiter slows down, so they are expected to pass. */
  maxThrottledAttempts: 12,
  baseMs: 250,
  capMs: 15_000,
  /** A Retry-After beyond this is not waited for: the request fails with a RateLimitError. */
  maxRetryAfterMs: 5 * 60_000,
  jitter: 'full' as Jitter,
};

export type Jitter = 'full' | 'equal';

/**
 * Network error codes raised before the request was written: the service never saw it. A name
 * that does not resolve is among them: a resolver answers "no such name" during its own restart
 * as readily as it times out, so both are an outage waited through (README, "Exit codes").
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
]);

/** Codes where the request may have been received and acted on before the connection broke. */
const IN_FLIGHT_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  // layers/deadline.ts: an attempt past its overall deadline (a stalled or dribbling answer).
  'PAYOUTS_DEADLINE',
]);

/** Codes raised before the request was written that another try cannot fix. */
const NEVER_SENT_PERMANENT = /^(ERR_TLS_.*|ERR_SSL_.*|.*CERT.*|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/;

/** What a failed connection means for the request. */
export interface NetworkFailure {
  /**
   * False only when the code proves the request never left; everything else (resets, closed
   * sockets, timeouts waiting for the answer, codes we do not know) may have taken effect.
   */
  mayHaveTakenEffect: boolean;
  /** Whether another attempt can help. */
  transient: boolean;
}

/** Classifies a socket/undici error code. */
export function classifyNetworkError(code: string | undefined): NetworkFailure {
  if (code !== undefined && NOT_SENT_CODES.has(code)) return { mayHaveTakenEffect: false, transient: true };
  if (code !== undefined && NEVER_SENT_PERMANENT.test(code))
    return { mayHaveTakenEffect: false, transient: false };
  if (code !== undefined && IN_FLIGHT_CODES.has(code)) return { mayHaveTakenEffect: true, transient: true };
  return { mayHaveTakenEffect: true, transient: false };
}

/** Statuses whose answer says the request was not processed at all. */
const NOT_PROCESSED_STATUSES = new Set([408, 429]);
/**
 * Server-side statuses worth another try (docs/service.md "Status codes": 500 "try again later",
 * 502, 503).
 */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);
/** Methods that are idempotent by HTTP semantics as payouts uses them. */
const IDEMPOTENT_METHODS = new Set<HttpMethod>(['GET', 'HEAD', 'DELETE']);

export interface RetryQuestion {
  /** Attempts made so far, counting the one that just failed (1 after the first failure). */
  attempt: number;
  maxAttempts: number;
  method: HttpMethod;
  /** The HTTP status of the failed attempt, when the service answered. */
  status?: number;
  /** The socket/undici error code, when it did not. */
  errorCode?: string;
  hasIdempotencyKey: boolean;
  /** The caller declares the request safe to repeat without a key (a PUT, a quote). */
  safeToRepeat?: boolean;
}

/** Whether a failed attempt should be tried again. */
export function shouldRetry(q: RetryQuestion): boolean {
  if (q.attempt >= q.maxAttempts) return false;
  const repeatable = IDEMPOTENT_METHODS.has(q.method) || q.hasIdempotencyKey || q.safeToRepeat === true;
  if (q.status !== undefined) {
    if (NOT_PROCESSED_STATUSES.has(q.status)) return true;
    // contract.ts: a 409 on a keyed request means the first request with that key is still in
    // progress; the same request later gets its answer.
    if (q.status === 409) return q.hasIdempotencyKey;
    return TRANSIENT_STATUSES.has(q.status) && repeatable;
  }
  const failure = classifyNetworkError(q.errorCode);
  if (!failure.transient) return false;
  return !failure.mayHaveTakenEffect || repeatable;
}

export interface DelayOptions {
  baseMs: number;
  capMs: number;
  /** The service's Retry-After in milliseconds: the delay is never shorter. */
  retryAfterMs?: number;
  /** A uniform random number in [0, 1). */
  random: () => number;
  jitter?: Jitter;
}

/**
 * Backoff before attempt `attempt + 1`: exponential from `baseMs`, capped at `capMs`, with
 * full jitter (uniform in [0, d]) or equal jitter (d/2 plus uniform in [0, d/2]) so that
 * workers that failed together do not retry together. Retry-After wins when it is longer.
 */
export function delayFor(attempt: number, options: DelayOptions): number {
  const exponent = Math.max(0, attempt - 1);
  // 2 ** exponent overflows to Infinity long before it matters; the cap bounds it.
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** exponent);
  const r = Math.min(Math.max(options.random(), 0), 1);
  const jittered = (options.jitter ?? 'full') === 'full' ? ceiling * r : ceiling / 2 + (ceiling / 2) * r;
  const backoff = Math.round(jittered);
  return options.retryAfterMs === undefined ? backoff : Math.max(backoff, Math.ceil(options.retryAfterMs));
}

/**
 * Retry-After (RFC 9110 10.2.3) as milliseconds from `now`: delay-seconds or an HTTP date.
 * Returns undefined when absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfter(
  header: string | string[] | null | undefined,
  now: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // Only date-shaped values: Date.parse accepts far too much (e.g. "-1" or "12").
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
