/**
 * The HTTP core every service call goes through: rate limiter, bearer token, JSON in and out,
 * error bodies (docs/service.md "Error body") into ServiceError, the single re-authentication on
 * 401, retries per retry.ts, 429 pausing all sending, and network failures classified by whether
 * the request may have taken effect (README "Never pay twice: the register": such a transaction
 * is `unknown`).
 *
 * Nothing secret leaves this module: errors and logs carry method, path, status, the service's
 * message and request id, never headers or request bodies.
 */
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { type Clock, realSleep, type Sleep, systemClock } from '../clock.js';
import {
  AuthError,
  ConfigError,
  InterruptedError,
  NetworkError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
} from '../errors.js';
import { OUTAGE_BUDGET } from '../outage-budget.js';
import { LinkedAbort } from './abort.js';
import type { AttemptVerdict, CircuitBreaker } from './breaker.js';
import { ErrorBodySchema, HEADERS } from './contract.js';
import type { RateLimiter } from './rate.js';
import {
  classifyNetworkError,
  delayFor,
  type HttpMethod,
  parseRetryAfter,
  RETRY_DEFAULTS,
  type RetryQuestion,
  shouldRetry,
} from './retry.js';
import { parseServiceUrl } from './service-url.js';

export { parseServiceUrl };

/** Connection timing. Keep-alive stays below a typical server idle timeout (Node's is 5 s). */
export interface Timeouts {
  /**
   * The whole of one attempt: connect, headers and the complete body. A stalled or dribbling
   * answer fails the attempt like a reset would (the request may have taken effect).
   */
  deadlineMs: number;
  connectMs: number;
  /** Waiting for the response headers after the request was sent. */
  headersMs: number;
  /** Silence between body chunks. */
  bodyMs: number;
  keepAliveMs: number;
  /** Upper bound when the server's Keep-Alive header suggests longer. */
  keepAliveMaxMs: number;
}

export const TIMEOUT_DEFAULTS: Timeouts = {
  deadlineMs: OUTAGE_BUDGET.deadlineCapMs,
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  keepAliveMs: 4_000,
  keepAliveMaxMs: 10_000,
};

/** The error code of an attempt that outlived its deadline (retry.ts: it may have taken effect). */
export const DEADLINE_CODE = 'PAYOUTS_DEADLINE';

/** The error code of an attempt abandoned when a stopped run's grace ran out. */
export const ABANDONED_CODE = 'PAYOUTS_ABANDONED';

/** Bodies larger than this are refused: no answer of this service is anywhere near it. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface RetryPolicy {
  maxAttempts: number;
  maxThrottledAttempts: number;
  baseMs: number;
  capMs: number;
  maxRetryAfterMs: number;
  jitter: 'full' | 'equal';
}

/** The logging the client does; a pino logger fits. */
export interface ApiLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Where bearer tokens come from (token.ts). */
export interface TokenSource {
  getToken(signal?: AbortSignal): Promise<string>;
  /** Forgets `token` if it is still the current one (a 401 said it is no good). */
  invalidate(token: string): void;
}

/**
 * One undici Agent for all origins: it keeps one connection pool per origin (the service and
 * the identity endpoint) with the keep-alive and timeouts above.
 */
export function createDispatcher(timeouts: Partial<Timeouts> = {}, connectionsPerOrigin?: number): Agent {
  const t = { ...TIMEOUT_DEFAULTS, ...timeouts };
  return new Agent({
    connect: { timeout: Math.min(t.connectMs, t.deadlineMs) },
    headersTimeout: Math.min(t.headersMs, t.deadlineMs),
    bodyTimeout: Math.min(t.bodyMs, t.deadlineMs),
    keepAliveTimeout: t.keepAliveMs,
    keepAliveMaxTimeout: t.keepAliveMaxMs,
    connections: connectionsPerOrigin ?? null,
  });
}

export interface HttpClientOptions {
  /** Service root; requests' paths are appended to its path (which may carry a prefix). */
  baseUrl: string;
  /** Name of the option the URL came from, for error messages. */
  urlOption?: string;
  /** Shared between clients; when omitted the client makes and owns one. */
  dispatcher?: Dispatcher;
  limiter?: RateLimiter;
  /** Shared by every client of one service: an outage stops them all (breaker.ts). */
  breaker?: CircuitBreaker;
  /**
   * The run's stop signal (SIGTERM): ends every wait (rate limiter, backoff, Retry-After,
   * breaker, token), but never cuts a request already sent, whose answer the run records.
   */
  stopSignal?: AbortSignal;
  /**
   * Aborted when a stopped run's grace is over: every request still under way is cut, and
   * counts as one that may have taken effect.
   */
  abandonSignal?: AbortSignal;
  tokens?: TokenSource;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  logger?: ApiLogger;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
  userAgent?: string;
  /** Answers larger than this are not read (tests lower it). */
  maxResponseBytes?: number;
}

export interface RequestOptions {
  method: HttpMethod;
  /** Path below the base URL, from contract.ts PATHS. */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as application/x-www-form-urlencoded instead of `body`. */
  form?: Record<string, string>;
  /** Sent as Idempotency-Key on every attempt; makes a POST retryable. */
  idempotencyKey?: string;
  /** Repeating the request is harmless (a PUT replacing a record, a quote, a token). */
  safeToRepeat?: boolean;
  /** Send the bearer token (everything but the token endpoint). */
  auth: boolean;
  signal?: AbortSignal;
}

/** What every resource function accepts besides its own arguments. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** A successful answer. `data` is the parsed JSON body, or undefined when there was none. */
export interface ApiResponse {
  status: number;
  data: unknown;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

type Attempt =
  | {
      kind: 'response';
      status: number;
      data: unknown;
      text: string;
      headers: ApiResponse['headers'];
      /** Why the body could not be read although it came (too large). */
      unreadable?: string;
    }
  | { kind: 'network'; code: string; cause: unknown };

/** The client core. One per base URL; several may share a dispatcher and a limiter. */
export class HttpClient {
  readonly baseUrl: URL;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly timeouts: Timeouts;
  private readonly policy: RetryPolicy;
  private readonly limiter: RateLimiter | undefined;
  private readonly breaker: CircuitBreaker | undefined;
  private readonly stopSignal: AbortSignal | undefined;
  private readonly abandonSignal: AbortSignal | undefined;
  private readonly tokens: TokenSource | undefined;
  private readonly logger: ApiLogger | undefined;
  private readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly userAgent: string;
  private readonly prefix: string;
  private readonly maxResponseBytes: number;

  constructor(options: HttpClientOptions) {
    this.baseUrl = parseServiceUrl(options.baseUrl, options.urlOption ?? '--base-url');
    this.prefix = this.baseUrl.pathname.replace(/\/+$/, '');
    this.timeouts = { ...TIMEOUT_DEFAULTS, ...options.timeouts };
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? createDispatcher(this.timeouts);
    this.policy = { ...RETRY_DEFAULTS, ...options.retry };
    this.limiter = options.limiter;
    this.breaker = options.breaker;
    this.stopSignal = options.stopSignal;
    this.abandonSignal = options.abandonSignal;
    this.tokens = options.tokens;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.userAgent = options.userAgent ?? 'payouts';
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  }

  /**
   * Sends a request with rate limiting, auth, retries and error mapping. Resolves with a 2xx
   * answer; rejects with ServiceError, RateLimitError, NetworkError, AuthError or
   * InterruptedError.
   */
  async request(options: RequestOptions): Promise<ApiResponse> {
    const { method, path } = options;
    if (options.auth && !this.tokens) throw new ConfigError(`${method} ${path} needs a token source`);
    // Waits end on the caller's signal or the run's; a request once sent is cut by the caller's only.
    const waits = new LinkedAbort([options.signal, this.stopSignal]);
    try {
      return await this.attempts(options, waits.signal);
    } finally {
      waits.dispose();
    }
  }

  private async attempts(options: RequestOptions, signal: AbortSignal): Promise<ApiResponse> {
    const { method, path } = options;
    const payload = encodeBody(options);
    const retryable = {
      method,
      hasIdempotencyKey: options.idempotencyKey !== undefined,
      safeToRepeat: options.safeToRepeat ?? false,
    };
    let attempts = 0;
    let failures = 0;
    let throttles = 0;
    let reauthenticated = false;
    // Why an attempt so far may have taken effect: a later failure must not hide it.
    let inDoubt: string | undefined;

    for (;;) {
      await this.wait(() => this.limiter?.acquire(signal), options, signal, inDoubt);
      const token = options.auth ? await this.token(options, signal, inDoubt) : undefined;
      const ticket = await this.wait(() => this.breaker?.admit(signal), options, signal, inDoubt);
      const attempt = await this.send(options, payload, token);
      attempts += 1;
      this.breaker?.record(ticket ?? { probe: false }, verdictOf(attempt));

      if (attempt.kind === 'network') {
        failures += 1;
        const aborted = options.signal?.aborted === true || attempt.code === ABANDONED_CODE;
        const errorCode = options.signal?.aborted === true ? 'ABORTED' : attempt.code;
        // An abort mid-request leaves the same doubt as a reset: the service may have acted.
        const mayHaveTakenEffect = aborted || classifyNetworkError(errorCode).mayHaveTakenEffect;
        const retry = { ...retryable, attempt: failures, maxAttempts: this.policy.maxAttempts, errorCode };
        const earlier = inDoubt;
        if (mayHaveTakenEffect) inDoubt ??= errorCode;
        const again = aborted ? false : this.retries(retry, attempt);
        if (again) {
          await this.backoff(options, signal, inDoubt, failures, { errorCode, outage: again === 'outage' });
          continue;
        }
        const effect = mayHaveTakenEffect
          ? 'no answer came after the request was sent, so it may have taken effect'
          : earlier
            ? `the last attempt was not sent, but an earlier one got no answer (${earlier}), so it may have taken effect`
            : 'the request was not sent';
        throw new NetworkError(
          `${method} ${path} failed: ${effect} (${errorCode}, ${plural(attempts, 'attempt')})`,
          {
            method,
            path,
            attempts,
            errorCode,
            mayHaveTakenEffect,
            ...(mayHaveTakenEffect ? {} : { inDoubt: earlier }),
            cause: attempt.cause,
          },
        );
      }

      const { status, headers } = attempt;
      const requestId = header(headers, HEADERS.requestId);
      if (status >= 200 && status < 300) {
        if (attempt.unreadable !== undefined || (attempt.data === undefined && attempt.text.trim() !== '')) {
          throw new ServiceError({
            method,
            path,
            status,
            requestId,
            attempts,
            serviceMessage: attempt.unreadable ?? 'the answer is not JSON',
          });
        }
        this.logger?.debug({ method, path, status, requestId }, 'service answered');
        return { status, data: attempt.data, requestId, headers };
      }

      if (status === 401 && token !== undefined) {
        if (!reauthenticated) {
          // docs/service.md "Signing in and tokens": a 401 means the token is missing, invalid or
          // expired; get a new one once.
          reauthenticated = true;
          this.tokens!.invalidate(token);
          this.logger?.debug({ method, path, requestId }, 'token refused - re-authenticating');
          continue;
        }
        throw new AuthError(
          `${method} ${path} answered 401 even with a fresh token: the service refuses these credentials - check that PAYOUTS_CLIENT_ID and PAYOUTS_USERNAME belong to this environment`,
          { status, requestId },
        );
      }

      const retryAfterMs = parseRetryAfter(header(headers, HEADERS.retryAfter), this.clock.now());
      const tooLong = retryAfterMs !== undefined && retryAfterMs > this.policy.maxRetryAfterMs;
      // A 5xx's Retry-After is paced by the breaker; a 429's is a wait the service demands.
      if (
        status === 429 &&
        this.breaker &&
        retryAfterMs !== undefined &&
        retryAfterMs > this.breaker.maxOutageMs
      ) {
        // A wait longer than --max-outage is an outage already: nothing is sent until it passes.
        const seconds = Math.ceil(retryAfterMs / 1000);
        const reason = `the service answered 429 Too Many Requests asking to wait ${seconds} s, longer than --max-outage (${Math.round(this.breaker.maxOutageMs / 1000)} s) - run again later to resume`;
        this.breaker.giveUp(reason);
        throw new ServiceUnavailableError(`${method} ${path} was not sent: ${reason}`, {
          inDoubt,
          reason,
          requestId,
        });
      }
      if (status === 429) {
        throttles += 1;
        const retry = {
          ...retryable,
          attempt: throttles,
          maxAttempts: this.policy.maxThrottledAttempts,
          status,
        };
        if (!tooLong && this.retries(retry, attempt)) {
          await this.throttle(options, signal, inDoubt, throttles, retryAfterMs, requestId);
          continue;
        }
        const why = tooLong
          ? `the service asked to wait ${Math.ceil(retryAfterMs / 1000)} s, longer than payouts waits`
          : `still throttled after ${plural(attempts, 'attempt')}`;
        throw new RateLimitError(`${method} ${path} answered 429 Too Many Requests: ${why}`, {
          method,
          path,
          attempts,
          requestId,
          retryAfterMs,
          inDoubt,
          throttled: throttles,
        });
      }

      failures += 1;
      const earlier = inDoubt;
      // A 5xx may come from a service that acted and then failed to answer (docs/service.md
      // "Status codes", 500).
      if (status >= 500) inDoubt ??= String(status);
      const retry = { ...retryable, attempt: failures, maxAttempts: this.policy.maxAttempts, status };
      const again = tooLong ? false : this.retries(retry, attempt);
      if (again) {
        await this.backoff(
          options,
          signal,
          inDoubt,
          failures,
          { status, requestId, outage: again === 'outage' },
          retryAfterMs,
        );
        continue;
      }
      throw toServiceError(attempt, { method, path, requestId, attempts, inDoubt: earlier });
    }
  }

  /**
   * Whether to try again: per retry.ts, or, past the attempt budget, while the breaker sees the
   * same failure everywhere ('outage': the breaker, not each request, decides when to give up).
   */
  private retries(question: RetryQuestion, attempt: Attempt): 'retry' | 'outage' | false {
    if (shouldRetry(question)) return 'retry';
    if (!this.breaker || verdictOf(attempt) !== 'failure') return false;
    const outage = shouldRetry({ ...question, attempt: 1 }) && this.breaker.sharesOutage(question.attempt);
    return outage ? 'outage' : false;
  }

  /** `request` then `parseBody`: the answer's body checked against a contract.ts schema. */
  async requestAs<T>(schema: z.ZodType<Partial<T>>, options: RequestOptions): Promise<T> {
    return parseBody<T>(schema, await this.request(options), options);
  }

  /** Closes the connection pools this client made (a shared dispatcher is its owner's to close). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async send(
    options: RequestOptions,
    payload: EncodedBody | undefined,
    token: string | undefined,
  ): Promise<Attempt> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent };
    if (payload) headers['content-type'] = payload.contentType;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (options.idempotencyKey !== undefined)
      headers[HEADERS.idempotencyKey.toLowerCase()] = options.idempotencyKey;
    // One deadline for the whole attempt (connect, headers, body): undici's own timeouts
    // measure silence, which a dribbling answer never gives.
    const attempt = new LinkedAbort([options.signal, this.abandonSignal], this.timeouts.deadlineMs);
    try {
      const res = await this.dispatcher.request({
        origin: this.baseUrl.origin,
        path: this.prefix + options.path,
        method: options.method,
        headers,
        body: payload?.text ?? null,
        signal: attempt.signal,
        headersTimeout: Math.min(this.timeouts.headersMs, this.timeouts.deadlineMs),
        bodyTimeout: Math.min(this.timeouts.bodyMs, this.timeouts.deadlineMs),
      });
      // The body is read inside the try: a reset while reading it is a network failure too.
      const text = await readLimited(res.body, this.maxResponseBytes);
      const base = { kind: 'response', status: res.statusCode, headers: res.headers } as const;
      if (text === undefined) {
        // An answer too large to read is still an answer: the request reached the service.
        const unreadable = `the answer was larger than ${megabytes(this.maxResponseBytes)} and was not read`;
        return { ...base, text: '', data: undefined, unreadable };
      }
      return { ...base, text, data: parseJson(text) };
    } catch (cause) {
      if (options.signal?.aborted) return { kind: 'network', code: 'ABORTED', cause };
      if (this.abandonSignal?.aborted) return { kind: 'network', code: ABANDONED_CODE, cause };
      if (attempt.timedOut) return { kind: 'network', code: DEADLINE_CODE, cause };
      return { kind: 'network', code: errorCode(cause), cause };
    } finally {
      attempt.dispose();
    }
  }

  /**
   * The bearer token for a request. A connection failure on the way to the identity endpoint
   * is reported against this request as "not sent": the runner must not mark a transaction
   * `unknown` when it never left.
   */
  private async token(
    options: RequestOptions,
    signal: AbortSignal | undefined,
    inDoubt: string | undefined,
  ): Promise<string | undefined> {
    try {
      return await this.wait(() => this.tokens!.getToken(signal), options, signal, inDoubt);
    } catch (err) {
      if (this.breaker && (err instanceof ServiceError || err instanceof RateLimitError)) {
        // The identity endpoint answered, but no token came of it (an unreadable answer, one
        // that expires at once, a 5xx past its retries): no request of this run can be sent.
        const reason = `the identity endpoint could not issue a token (${err.message}) - run again later to resume`;
        this.breaker.giveUp(reason);
        throw new ServiceUnavailableError(`${options.method} ${options.path} was not sent: ${reason}`, {
          inDoubt,
          reason,
          cause: err,
        });
      }
      if (!(err instanceof NetworkError)) throw err;
      throw new NetworkError(`${options.method} ${options.path} was not sent: no token (${err.message})`, {
        method: options.method,
        path: options.path,
        attempts: 0,
        errorCode: err.errorCode,
        mayHaveTakenEffect: false,
        inDoubt,
        cause: err,
      });
    }
  }

  /**
   * Runs a wait (limiter, token, breaker, sleep). An abort becomes InterruptedError and a
   * breaker that gave up ServiceUnavailableError, both naming this request and carrying
   * whether an earlier attempt may have taken effect.
   */
  private async wait<T>(
    fn: () => Promise<T> | undefined,
    options: RequestOptions,
    signal: AbortSignal | undefined,
    inDoubt: string | undefined,
  ): Promise<T | undefined> {
    const stopped = () => new InterruptedError('stopped before sending', { cause: signal?.reason, inDoubt });
    if (signal?.aborted) throw stopped();
    try {
      return await fn();
    } catch (err) {
      if (signal?.aborted) throw stopped();
      if (err instanceof ServiceUnavailableError) {
        throw new ServiceUnavailableError(`${options.method} ${options.path} was not sent: ${err.message}`, {
          inDoubt,
          cause: err,
          reason: err.reason,
        });
      }
      throw err;
    }
  }

  private async backoff(
    options: RequestOptions,
    signal: AbortSignal | undefined,
    inDoubt: string | undefined,
    attempt: number,
    what: { status?: number; errorCode?: string; requestId?: string | undefined; outage?: boolean },
    retryAfterMs?: number,
  ): Promise<void> {
    // Past its budget, a request kept going by an outage backs off briefly: the breaker paces it.
    const capMs = what.outage && this.breaker ? this.breaker.outageBackoffMs : this.policy.capMs;
    const delayMs = delayFor(attempt, { ...this.policy, capMs, retryAfterMs, random: this.random });
    this.logger?.warn(
      { method: options.method, path: options.path, ...what, attempt, delayMs },
      'retrying request',
    );
    // An open circuit ends the backoff: the breaker paces the next attempt (or gives up).
    const outage = this.breaker?.outageSignal;
    const ends = anySignal(signal, outage);
    await this.wait(
      async () => {
        try {
          await this.sleep(delayMs, ends);
        } catch (error) {
          if (signal?.aborted || !outage?.aborted) throw error;
        }
      },
      options,
      signal,
      inDoubt,
    );
  }

  /** A 429 pauses every request, not just this one (as in octokit plugin-throttling). */
  private async throttle(
    options: RequestOptions,
    signal: AbortSignal | undefined,
    inDoubt: string | undefined,
    attempt: number,
    retryAfterMs: number | undefined,
    requestId?: string,
  ) {
    const waitMs = retryAfterMs ?? delayFor(attempt, { ...this.policy, random: this.random });
    this.logger?.warn(
      {
        method: options.method,
        path: options.path,
        requestId,
        retryAfterMs: waitMs,
        rate: this.limiter?.currentRate,
      },
      'service throttled - pausing all requests',
    );
    if (this.limiter) {
      this.limiter.throttled();
      this.limiter.pause(this.clock.now() + waitMs);
    } else {
      await this.wait(() => this.sleep(waitMs, signal), options, signal, inDoubt);
    }
  }
}

/**
 * Validates a response body against a contract.ts schema, which checks the fields payouts acts
 * on; the rest of `T` is trusted as contract.ts declares it. A mismatch is a ServiceError with
 * the answer's own (2xx) status: the request took effect but payouts cannot read the result.
 */
export function parseBody<T>(
  schema: z.ZodType<Partial<T>>,
  response: ApiResponse,
  context: { method: HttpMethod; path: string },
): T {
  const parsed = schema.safeParse(response.data);
  // The one place a light check stands in for the full type (fields we use are checked).
  if (parsed.success) return parsed.data as T;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  throw new ServiceError({
    ...context,
    status: response.status,
    requestId: response.requestId,
    serviceMessage: `unexpected answer: ${where}: ${issue?.message ?? 'invalid'}`,
  });
}

interface EncodedBody {
  contentType: string;
  text: string;
}

function encodeBody(options: RequestOptions): EncodedBody | undefined {
  if (options.form) {
    return {
      contentType: 'application/x-www-form-urlencoded',
      text: new URLSearchParams(options.form).toString(),
    };
  }
  if (options.body === undefined) return undefined;
  return { contentType: 'application/json', text: JSON.stringify(options.body) };
}

/**
 * The body as text, or undefined once it grows past `limit` bytes (the rest is not read: the
 * connection is dropped rather than drained).
 */
async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.floor(bytes / (1024 * 1024))} MB` : `${bytes} bytes`;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toServiceError(
  attempt: Extract<Attempt, { kind: 'response' }>,
  context: {
    method: HttpMethod;
    path: string;
    requestId: string | undefined;
    attempts: number;
    inDoubt: string | undefined;
  },
): ServiceError {
  const body = ErrorBodySchema.safeParse(attempt.data);
  const fields = body.success ? body.data : {};
  const reason = fields.error ?? STATUS_CODES[attempt.status];
  // An answer without a readable message (an HTML 502 from a proxy) is described by its status.
  const serviceMessage = fields.message ?? fields.error_description ?? reason ?? `status ${attempt.status}`;
  return new ServiceError({
    ...context,
    status: attempt.status,
    reason,
    serviceMessage,
    serviceErrors: fields.errors,
  });
}

/** What an attempt tells the breaker: no answer, 5xx and 429 count against the service. */
function verdictOf(attempt: Attempt): AttemptVerdict {
  if (attempt.kind === 'network') {
    if (attempt.code === 'ABORTED') return 'neutral';
    return classifyNetworkError(attempt.code).transient ? 'failure' : 'neutral';
  }
  return attempt.status === 429 || attempt.status >= 500 ? 'failure' : 'success';
}

/** One signal that aborts when either does. */
function anySignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a || !b) return a ?? b;
  return AbortSignal.any([a, b]);
}

function header(headers: ApiResponse['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function errorCode(err: unknown): string {
  let current: unknown = err;
  // undici and net sometimes put the socket error one level down (`cause`).
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return err instanceof Error && err.name === 'AbortError' ? 'ABORTED' : 'UNKNOWN';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
