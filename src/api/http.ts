/**
 * The words every layer of the request path speaks (a request on its way, `Call`; what came of
 * one attempt, `Attempt`; a `Layer` around the next) and the transport at the bottom of the path:
 * one attempt through undici, its answer read within a size limit. Also what is made of an
 * answer: a 2xx's body, an error body (docs/service.md "Error body") as a ServiceError.
 *
 * Nothing secret leaves this module: errors and logs carry method, path, status, the service's
 * message and request id, never headers or request bodies.
 */
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { InterruptedError, ServiceError, ServiceUnavailableError } from '../errors.js';
import { OUTAGE_BUDGET } from '../outage-budget.js';
import type { AttemptVerdict, OutageStanding } from './breaker.js';
import { ErrorBodySchema, HEADERS } from './contract.js';
import { classifyNetworkError, type HttpMethod } from './retry.js';
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

/** What came of one attempt: an answer (of any status) or none (the socket's error code). */
export type Attempt = Answer | NoAnswer;

export interface Answer {
  kind: 'response';
  status: number;
  data: unknown;
  text: string;
  headers: ApiResponse['headers'];
  /** Why the body could not be read although it came (too large). */
  unreadable?: string;
  /** The outage layer's word on the attempt, for the retry layer above it. */
  outage?: OutageStanding;
  /** A layer below mended the cause (a refused token, now forgotten): send again at once. */
  again?: boolean;
}

export interface NoAnswer {
  kind: 'network';
  code: string;
  cause: unknown;
  outage?: OutageStanding;
}

/** What an attempt tells the breaker: no answer, 5xx and 429 count against the service. */
export function verdictOf(attempt: Attempt): AttemptVerdict {
  if (attempt.kind === 'network') {
    if (attempt.code === 'ABORTED') return 'neutral';
    return classifyNetworkError(attempt.code).transient ? 'failure' : 'neutral';
  }
  return attempt.status === 429 || attempt.status >= 500 ? 'failure' : 'success';
}

/** A 429's wait, which the rate layer turns into a pause of every request. */
export interface Throttle {
  waitMs: number;
  requestId: string | undefined;
}

/**
 * One request on its way down the layers and back up: what it asks for, and the trail its
 * attempts leave. Each layer reads and writes only its own fields; none calls another layer.
 */
export interface Call {
  readonly options: RequestOptions;
  readonly payload: EncodedBody | undefined;
  /** Ends every wait (the caller's signal or the run's stop), never an attempt already sent. */
  readonly waits: AbortSignal;
  /** Cuts the attempt under way: set by the deadline layer for the transport. */
  cut: AbortSignal | undefined;
  /** The bearer token of the attempt (token layer). */
  token: string | undefined;
  /** A refused token was replaced once already (token layer). */
  reauthenticated: boolean;
  /** Set by the retry layer after a 429, applied by the rate layer before the next attempt. */
  throttle: Throttle | undefined;
  /** Attempts sent (transport), failed ones and throttled ones (retry layer), for the messages. */
  attempts: number;
  failures: number;
  throttles: number;
  /**
   * The in-doubt trail: why an attempt so far may have taken effect (an error code or a 5xx). A
   * later failure must not hide it: the caller records such a payout `unknown`, not `failed`.
   */
  inDoubt: string | undefined;
}

/** The path below a layer: sends the call once, resolves with what came of it. */
export type Handler = (call: Call) => Promise<Attempt>;

/** A policy around the rest of the path (as octokit's `hook.wrap`, undici's `compose`). */
export type Layer = (next: Handler) => Handler;

/** A call at its start, before any layer. */
export function startCall(options: RequestOptions, waits: AbortSignal): Call {
  return {
    options,
    payload: encodeBody(options),
    waits,
    cut: undefined,
    token: undefined,
    reauthenticated: false,
    throttle: undefined,
    attempts: 0,
    failures: 0,
    throttles: 0,
    inDoubt: undefined,
  };
}

/** The error of a call stopped before it could send, carrying its in-doubt trail. */
export function stopped(call: Call): InterruptedError {
  return new InterruptedError('stopped before sending', { cause: call.waits.reason, inDoubt: call.inDoubt });
}

/**
 * Runs a wait (limiter, token, breaker, sleep). An abort becomes InterruptedError and a breaker
 * that gave up ServiceUnavailableError, both naming this request and carrying whether an
 * earlier attempt may have taken effect.
 */
export async function waitFor<T>(call: Call, wait: () => Promise<T>): Promise<T> {
  if (call.waits.aborted) throw stopped(call);
  try {
    return await wait();
  } catch (err) {
    if (call.waits.aborted) throw stopped(call);
    if (err instanceof ServiceUnavailableError) {
      const { method, path } = call.options;
      throw new ServiceUnavailableError(`${method} ${path} was not sent: ${err.message}`, {
        inDoubt: call.inDoubt,
        cause: err,
        reason: err.reason,
      });
    }
    throw err;
  }
}

/** Where and how the transport sends. */
export interface TransportSettings {
  baseUrl: URL;
  dispatcher: Dispatcher;
  timeouts: Timeouts;
  userAgent: string;
  maxResponseBytes?: number;
}

/**
 * The bottom of the path: one attempt through undici, cut by `call.cut`, its body read inside
 * the attempt (a reset while reading it is a failure to answer too). Never throws: a failure is
 * an attempt without an answer, with its socket's error code.
 */
export function transport(settings: TransportSettings): Handler {
  const origin = settings.baseUrl.origin;
  const prefix = settings.baseUrl.pathname.replace(/\/+$/, '');
  const { deadlineMs, headersMs, bodyMs } = settings.timeouts;
  const headersTimeout = Math.min(headersMs, deadlineMs);
  const bodyTimeout = Math.min(bodyMs, deadlineMs);
  const limit = settings.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return async (call) => {
    call.attempts += 1;
    try {
      const res = await settings.dispatcher.request({
        origin,
        path: prefix + call.options.path,
        method: call.options.method,
        headers: headersOf(call, settings.userAgent),
        body: call.payload?.text ?? null,
        signal: call.cut,
        headersTimeout,
        bodyTimeout,
      });
      const text = await readLimited(res.body, limit);
      const base = { kind: 'response', status: res.statusCode, headers: res.headers } as const;
      if (text === undefined) {
        // An answer too large to read is still an answer: the request reached the service.
        const unreadable = `the answer was larger than ${megabytes(limit)} and was not read`;
        return { ...base, text: '', data: undefined, unreadable };
      }
      return { ...base, text, data: parseJson(text) };
    } catch (cause) {
      return { kind: 'network', code: errorCode(cause), cause };
    }
  };
}

function headersOf(call: Call, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': userAgent };
  if (call.payload) headers['content-type'] = call.payload.contentType;
  if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
  if (call.options.idempotencyKey !== undefined)
    headers[HEADERS.idempotencyKey.toLowerCase()] = call.options.idempotencyKey;
  return headers;
}

/**
 * The caller's answer from the final attempt, a 2xx: its JSON body, or a ServiceError when the
 * body cannot be read (the request took effect, but payouts cannot tell what came of it).
 */
export function responseOf(call: Call, answer: Answer, logger: ApiLogger | undefined): ApiResponse {
  const { method, path } = call.options;
  const { status, headers } = answer;
  const requestId = header(headers, HEADERS.requestId);
  if (answer.unreadable !== undefined || (answer.data === undefined && answer.text.trim() !== '')) {
    throw new ServiceError({
      method,
      path,
      status,
      requestId,
      attempts: call.attempts,
      serviceMessage: answer.unreadable ?? 'the answer is not JSON',
    });
  }
  logger?.debug({ method, path, status, requestId }, 'service answered');
  return { status, data: answer.data, requestId, headers };
}

/** What a resource module needs of the client (client.ts `HttpClient`). */
export interface Requester {
  readonly baseUrl: URL;
  request(options: RequestOptions): Promise<ApiResponse>;
  requestAs<T>(schema: z.ZodType<Partial<T>>, options: RequestOptions): Promise<T>;
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

export interface EncodedBody {
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

/** An answer the retry layer gives up on, as the caller's error. */
export function toServiceError(
  attempt: Answer,
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

/** One header's value (the first, when repeated). */
export function header(headers: ApiResponse['headers'], name: string): string | undefined {
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

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
