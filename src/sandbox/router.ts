import type { IncomingHttpHeaders } from 'node:http';
import type { TokenService } from './auth.js';
import { HttpError, type Reply } from './errors.js';
import type { RequestDraws } from './faults.js';
import type { SandboxConfig } from './flags.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Scheduler, WorkTracker } from './scheduler.js';
import type { IntegratorRecord, SandboxState } from './state.js';
import type { WebhookDispatcher } from './webhooks.js';

/** The services of one running sandbox, shared by its routes. */
export interface Sandbox {
  config: SandboxConfig;
  state: SandboxState;
  tokens: TokenService;
  webhooks: WebhookDispatcher;
  idempotency: IdempotencyStore;
  scheduler: Scheduler;
  work: WorkTracker;
}

/** One request as a route sees it. */
export interface RouteRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** The query string's parameters. */
  query: URLSearchParams;
  /** Path parameters in order, decoded. */
  params: readonly string[];
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** Wall-clock time the route runs at. */
  now: number;
  draws: RequestDraws;
  /** Idempotency-Key of a POST, or null. */
  idempotencyKey: string | null;
}

/** A request of an authenticated integrator. */
export interface AuthedRequest extends RouteRequest {
  integrator: IntegratorRecord;
}

interface RouteBase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path pattern, a path of contract.ts PATHS built with PARAM for each parameter. */
  pattern: string;
}

export type Route =
  | (RouteBase & { auth: false; handler: (request: RouteRequest, sandbox: Sandbox) => Reply })
  | (RouteBase & { auth: true; handler: (request: AuthedRequest, sandbox: Sandbox) => Reply });

/** Stands for a path parameter when a route's pattern is built from a contract.ts path. */
export const PARAM = '__param__';

export interface CompiledRoute {
  route: Route;
  /** `POST /v1/transactions`, `GET /v1/beneficiaries/{id}`: for request counts. */
  label: string;
  /** Under /v1: faults and idempotency apply. */
  resource: boolean;
  segments: readonly string[];
}

export type Match =
  | { kind: 'route'; compiled: CompiledRoute; params: string[] }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'none' };

/** Finds the route of a method and path; paths come from contract.ts, so changing one changes both. */
export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.routes = routes.map((route) => ({
      route,
      label: `${route.method} ${route.pattern.split(PARAM).join('{id}')}`,
      resource: route.pattern.startsWith('/v1/'),
      segments: route.pattern.split('/'),
    }));
  }

  match(method: string, path: string): Match {
    const segments = path.split('/');
    const allow: string[] = [];
    for (const compiled of this.routes) {
      const params = matchSegments(compiled.segments, segments);
      if (params === undefined) continue;
      if (compiled.route.method === method) return { kind: 'route', compiled, params };
      allow.push(compiled.route.method);
    }
    return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'none' };
  }
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): string[] | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: string[] = [];
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i]!;
    const actual = segments[i]!;
    if (expected === PARAM) {
      const decoded = decodeSegment(actual);
      if (decoded === undefined || decoded === '') return undefined;
      params.push(decoded);
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

/** The decoded path segment; undefined for broken percent-encoding (no route matches). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The request body as a JSON object; 400 otherwise. */
export function jsonObject(request: RouteRequest): Record<string, unknown> {
  if (request.rawBody.length === 0) throw new HttpError(400, 'Request body is required: a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(request.rawBody.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `Request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'Request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** The first path parameter. */
export function param(request: RouteRequest): string {
  return request.params[0]!;
}
