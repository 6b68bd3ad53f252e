import type { Random } from './prng.js';

/** Statuses an injected error answers with (docs/service.md "Status codes"), drawn uniformly. */
export const INJECTED_ERROR_STATUSES = [500, 502, 503] as const;
export type InjectedErrorStatus = (typeof INJECTED_ERROR_STATUSES)[number];

/**
 * What chance decided for one request. Every request outside /_sandbox draws the same seven
 * numbers at arrival, whatever is configured, so the stream (and with it every fault, quote
 * rate and duplicate) depends only on the seed and the order in which requests arrive.
 */
export interface RequestDraws {
  latencyMs: number;
  /** Injected error for a /v1 request, or undefined. */
  error: InjectedErrorStatus | undefined;
  /** Cut the connection after the request took effect (/v1 only). */
  reset: boolean;
  /** Draws for the routes: [quote rate variation, duplicate of the first event, duplicate of the second]. */
  aux: readonly [number, number, number];
}

export interface FaultSettings {
  latencyMs: number;
  jitterMs: number;
  errorRate: number;
  resetRate: number;
}

/** Draws the chance outcomes of a request from the one seeded stream. */
export function drawRequest(random: Random, settings: FaultSettings): RequestDraws {
  const jitter = random();
  const errorDraw = random();
  const errorKind = random();
  const resetDraw = random();
  const aux = [random(), random(), random()] as const;
  return {
    latencyMs: settings.latencyMs + (settings.jitterMs > 0 ? jitter * settings.jitterMs : 0),
    error:
      errorDraw < settings.errorRate
        ? INJECTED_ERROR_STATUSES[Math.floor(errorKind * INJECTED_ERROR_STATUSES.length)]
        : undefined,
    reset: resetDraw < settings.resetRate,
    aux,
  };
}

/** The message of an injected error; it says it was injected and what a client should do. */
export function injectedErrorMessage(status: InjectedErrorStatus, requestId: string): string {
  switch (status) {
    case 500:
      return `Internal server error (sandbox --error-rate) - retry later and quote request id ${requestId}`;
    case 502:
      return 'Bad response from an upstream banking partner (sandbox --error-rate) - retry after a short delay';
    case 503:
      return 'Service unavailable (sandbox --error-rate) - retry later';
  }
}

/**
 * Token bucket of `--rate-limit N`: holds up to N tokens, refills N per second, and one request
 * takes one. A refused request takes none. The bucket holds at least one token: a limit under 1
 * per second (0.5) means one request every 1/N seconds, and a smaller bucket could never hold
 * the one token a request needs, so it would refuse everything for ever.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;
  private readonly capacity: number;

  constructor(
    private readonly perSecond: number,
    now: number,
  ) {
    this.capacity = Math.max(1, perSecond);
    this.tokens = this.capacity;
    this.last = now;
  }

  /** 0 when the request may proceed; otherwise milliseconds until a token is free. */
  take(now: number): number {
    if (this.perSecond <= 0) return 0;
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed * this.perSecond) / 1000);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * 1000) / this.perSecond);
  }
}

/** Retry-After in whole seconds (RFC 9110), at least 1. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
