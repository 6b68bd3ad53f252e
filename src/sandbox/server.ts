import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { HEADERS, MESSAGES } from '../api/contract.js';
import { errorReply, HttpError, type Reply } from './errors.js';
import {
  drawRequest,
  injectedErrorMessage,
  RateLimiter,
  type RequestDraws,
  retryAfterSeconds,
} from './faults.js';
import { IdempotencyStore, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import { mulberry32, type Random } from './prng.js';
import { type CompiledRoute, type Match, type RouteRequest, Router, type Sandbox } from './router.js';
import { ROUTES } from './routes/index.js';
import type { IntegratorRecord } from './state.js';

/**
 * Largest request body read (assumed: the service gives no payload limit; docs/api-assumptions.md
 * "Limits"); above it 413.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);
const INSPECTION_PREFIX = '/_sandbox/';
const UNMATCHED = 'unmatched';

/** A reply with its body serialized: what is sent, and what an Idempotency-Key replays. */
interface Answer {
  status: number;
  payload: string | undefined;
  headers: Record<string, string> | undefined;
}

/** What was decided about a request before any latency: an early answer, or the route to run. */
interface Plan {
  answer?: Answer;
  compiled?: CompiledRoute;
  params?: string[];
  integrator?: IntegratorRecord;
  /** The Idempotency-Key this request reserved. */
  reservedKey?: string;
}

/**
 * The request pipeline, in order: count, draw the request's chances, take a
 * rate-limit token, read the body, route, inject an error (before any effect), authenticate,
 * check the Idempotency-Key, wait the latency, run the route, keep the answer for replay, and
 * answer, or cut the connection (`--reset-rate`) after the effect. /_sandbox/* skips the
 * counting and every fault.
 */
export class RequestPipeline {
  private readonly router = new Router(ROUTES);
  private readonly random: Random;
  private readonly limiter: RateLimiter;

  constructor(private readonly sandbox: Sandbox) {
    this.random = mulberry32(sandbox.config.seed);
    // The sandbox's one clock, so that a test moves the bucket's refill as it moves tokens.
    this.limiter = new RateLimiter(sandbox.config.rateLimit, sandbox.config.clock.now());
  }

  /** The node:http request listener. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = randomUUID();
    this.process(req, res, requestId).catch((error: unknown) => {
      this.sandbox.config.onInternalError(error);
      if (res.headersSent) res.destroy();
      else this.send(res, requestId, internalError(requestId, pathOf(req), this.sandbox.config.clock.now()));
    });
  };

  private async process(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const { config, state, scheduler } = this.sandbox;
    const method = req.method ?? 'GET';
    const path = pathOf(req);
    const inspection = path.startsWith(INSPECTION_PREFIX);
    let draws: RequestDraws = NO_DRAWS;
    let rateLimitWaitMs = 0;
    if (!inspection) {
      state.requests.total += 1;
      draws = drawRequest(this.random, config);
      rateLimitWaitMs = this.limiter.take(config.clock.now());
    }
    const body = await readBody(req);
    if (body === undefined) return; // the client went away mid-body: nobody to answer
    const plan = this.plan(req, requestId, method, path, body, draws, rateLimitWaitMs);
    const label = plan.compiled?.label ?? UNMATCHED;

    if (draws.latencyMs > 0) {
      await scheduler.sleep(draws.latencyMs);
      if (scheduler.closed) {
        req.socket.destroy();
        return;
      }
    }
    if (plan.answer !== undefined) return this.finish(res, requestId, plan.answer, label, inspection);

    const compiled = plan.compiled!;
    const request: RouteRequest = {
      method,
      path,
      query: queryOf(req),
      params: plan.params!,
      headers: req.headers,
      rawBody: body.bytes,
      now: config.clock.now(),
      draws,
      idempotencyKey: plan.reservedKey ?? null,
    };
    const answer = serialize(this.run(compiled, request, plan.integrator, requestId));
    if (plan.reservedKey !== undefined) {
      this.sandbox.idempotency.finish(plan.integrator!.id, plan.reservedKey, {
        status: answer.status,
        payload: answer.payload,
      });
    }
    if (compiled.resource && draws.reset) {
      state.requests.injected.resets += 1;
      state.countAnswer(label, 'reset');
      req.socket.destroy();
      return;
    }
    this.finish(res, requestId, answer, label, inspection);
  }

  /** Everything decided before the latency; errors here are answers, not effects. */
  private plan(
    req: IncomingMessage,
    requestId: string,
    method: string,
    path: string,
    body: Body,
    draws: RequestDraws,
    rateLimitWaitMs: number,
  ): Plan {
    const match = this.router.match(method, path);
    const plan: Plan = match.kind === 'route' ? { compiled: match.compiled, params: match.params } : {};
    try {
      const refusal = this.refusal(match, method, path, body, draws, rateLimitWaitMs, requestId);
      if (refusal !== undefined) throw refusal;
      const { route, resource } = plan.compiled!;
      if (!route.auth) return plan;
      plan.integrator = this.sandbox.tokens.authenticate(req.headers.authorization);
      const key = req.headers['idempotency-key'];
      if (method === 'POST' && resource && typeof key === 'string') {
        const replay = this.reserveKey(plan, plan.integrator, key, method, path, body);
        if (replay !== undefined) plan.answer = replay;
      }
      return plan;
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return { ...plan, answer: serialize(errorReply(error, path, this.sandbox.config.clock.now())) };
    }
  }

  /** Why the request is refused before anything else: rate limit, size, route, injected error. */
  private refusal(
    match: Match,
    method: string,
    path: string,
    body: Body,
    draws: RequestDraws,
    rateLimitWaitMs: number,
    requestId: string,
  ): HttpError | undefined {
    const { config, state } = this.sandbox;
    if (rateLimitWaitMs > 0) {
      state.requests.injected.rateLimited += 1;
      const seconds = retryAfterSeconds(rateLimitWaitMs);
      const message = `Rate limit of ${config.rateLimit} requests per second exceeded - retry after ${seconds} s`;
      return new HttpError(429, message, { headers: { [HEADERS.retryAfter]: String(seconds) } });
    }
    if (body.tooLarge) return new HttpError(413, `Request body is larger than ${MAX_BODY_BYTES} bytes`);
    if (match.kind === 'none') return new HttpError(404, `No resource at ${method} ${path}`);
    if (match.kind === 'method-not-allowed') {
      const allow = match.allow.join(', ');
      return new HttpError(405, `${method} is not allowed on ${path} - use ${allow}`, {
        headers: { Allow: allow },
      });
    }
    if (match.compiled.resource && draws.error !== undefined) {
      state.requests.injected.errors += 1;
      return new HttpError(draws.error, injectedErrorMessage(draws.error, requestId));
    }
    return undefined;
  }

  /**
   * Looks the Idempotency-Key up: reserves it for this request (undefined), or gives the answer
   * to replay; throws 400, 409 or 422.
   */
  private reserveKey(
    plan: Plan,
    integrator: IntegratorRecord,
    key: string,
    method: string,
    path: string,
    body: Body,
  ): Answer | undefined {
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw new HttpError(
        400,
        `${HEADERS.idempotencyKey} must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
      );
    }
    const fingerprint = IdempotencyStore.fingerprint(method, path, body.bytes);
    const decision = this.sandbox.idempotency.begin(integrator.id, key, fingerprint);
    switch (decision.kind) {
      case 'new':
        plan.reservedKey = key;
        return undefined;
      case 'replay':
        return { ...decision.reply, headers: { [HEADERS.idempotentReplayed]: 'true' } };
      case 'conflict':
        throw new HttpError(
          422,
          `${MESSAGES.idempotencyConflictPrefix}: send a new ${HEADERS.idempotencyKey} for a different request`,
        );
      case 'in-progress':
        throw new HttpError(
          409,
          `${MESSAGES.idempotencyInProgressPrefix} - retry the same request once it has finished`,
        );
    }
  }

  /** Runs the route; an HttpError is its answer, anything else a 500 (a bug, reported). */
  private run(
    compiled: CompiledRoute,
    request: RouteRequest,
    integrator: IntegratorRecord | undefined,
    requestId: string,
  ): Reply {
    try {
      const { route } = compiled;
      return route.auth
        ? route.handler({ ...request, integrator: integrator! }, this.sandbox)
        : route.handler(request, this.sandbox);
    } catch (error) {
      if (error instanceof HttpError) return errorReply(error, request.path, this.sandbox.config.clock.now());
      this.sandbox.config.onInternalError(error);
      return internalError(requestId, request.path, this.sandbox.config.clock.now());
    }
  }

  private finish(
    res: ServerResponse,
    requestId: string,
    answer: Answer,
    label: string,
    inspection: boolean,
  ): void {
    if (!inspection) this.sandbox.state.countAnswer(label, answer.status);
    this.send(res, requestId, answer);
  }

  private send(res: ServerResponse, requestId: string, answer: Answer): void {
    const headers: OutgoingHttpHeaders = { [HEADERS.requestId]: requestId, ...answer.headers };
    if (answer.payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(answer.payload);
    }
    res.writeHead(answer.status, headers);
    res.end(answer.payload);
  }
}

const NO_DRAWS: RequestDraws = { latencyMs: 0, error: undefined, reset: false, aux: [0, 0, 0] };

interface Body {
  bytes: Buffer;
  tooLarge: boolean;
}

/**
 * Reads the request body, up to MAX_BODY_BYTES (the rest is drained and dropped); undefined
 * when the client aborted it.
 */
function readBody(req: IncomingMessage): Promise<Body | undefined> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve({ bytes: EMPTY, tooLarge: false });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve({ bytes: tooLarge ? EMPTY : Buffer.concat(chunks, size), tooLarge }));
    req.on('error', () => resolve(undefined));
  });
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The query string's parameters: everything after the first '?', where a later '?' is an
 * ordinary character of the query (RFC 3986 3.4), so `?reference=INV?7` looks for `INV?7`.
 */
function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '';
  const start = url.indexOf('?');
  return new URLSearchParams(start === -1 ? '' : url.slice(start + 1));
}

function serialize(reply: Reply): Answer {
  return {
    status: reply.status,
    payload: reply.body === undefined ? undefined : JSON.stringify(reply.body),
    headers: reply.headers,
  };
}

function internalError(requestId: string, path: string, now: number): Answer {
  const message = `Internal sandbox error - quote request id ${requestId}`;
  return serialize(errorReply(new HttpError(500, message), path, now));
}
