/**
 * Rate control for every request payouts sends (`--rate N`, all endpoints together). A layer
 * of its own, separate from retries (as in octokit plugin-throttling): a 429 pauses the
 * whole queue until Retry-After instead of each request backing off alone, and the sending rate
 * adapts while the service throttles: multiplicative decrease on a 429, additive increase
 * back towards the target while no 429 comes (AIMD, as TCP does).
 */

import { type Clock, realSleep, type Sleep, systemClock } from '../clock.js';
import { InterruptedError } from '../errors.js';

export interface RateLimiterOptions {
  /** Target requests per second; omitted or Infinity means unlimited until the service throttles. */
  rate?: number;
  /**
   * Requests that may go back to back after an idle spell. Default: 100 ms worth of the rate
   * (at least 1): a full second's burst would trip a service limiter set to the same rate.
   */
  burst?: number;
  /** Factor applied to the rate on a 429. */
  decreaseFactor?: number;
  /** The rate never drops below this. */
  minRate?: number;
  /** Requests/second added back per `increaseIntervalMs` without a 429. Default 5% of the target. */
  increaseStep?: number;
  increaseIntervalMs?: number;
  /** 429s within this window of the last decrease count as the same congestion event. */
  decreaseCooldownMs?: number;
  clock?: Clock;
  sleep?: Sleep;
}

export const RATE_DEFAULTS = {
  decreaseFactor: 0.7,
  minRate: 1,
  increaseIntervalMs: 1000,
  decreaseCooldownMs: 1000,
  /** Fraction of the target (or of the rate at the first 429) added back per interval. */
  increaseFraction: 0.05,
};

interface Tuning {
  decreaseFactor: number;
  increaseIntervalMs: number;
  decreaseCooldownMs: number;
  minRate: number;
  increaseStep: number | undefined;
  burst: number | undefined;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Token bucket shared by all requests, with a global pause and an adaptive rate. */
export class RateLimiter {
  /** The configured rate (`--rate`); Infinity when unlimited. */
  readonly configuredRate: number;
  /** How many live runs share the configured rate (this one included). */
  private shares = 1;
  private effectiveRate: number;
  private burst: number;
  private tokens: number;
  /** Time the bucket was last refilled; ahead of now while paused, so no tokens pile up. */
  private refilledAt: number;
  private pausedUntilMs = 0;
  private lastRateChange: number;
  private lastDecrease = Number.NEGATIVE_INFINITY;
  private step: number;
  private readonly queue: Waiter[] = [];
  private pumping = false;
  /** Ends the pump's sleep early: when the last waiter gives up, or on close. */
  private wake = new AbortController();
  private readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly options: Tuning;
  /** Grants in the current and previous second, to estimate the rate when unlimited. */
  private window = { start: 0, count: 0, previous: 0 };
  private readonly createdAt: number;

  constructor(options: RateLimiterOptions = {}) {
    const rate = options.rate ?? Number.POSITIVE_INFINITY;
    if (!(rate > 0))
      throw new RangeError(`rate must be a positive number of requests per second, got ${rate}`);
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? realSleep;
    this.options = {
      decreaseFactor: options.decreaseFactor ?? RATE_DEFAULTS.decreaseFactor,
      increaseIntervalMs: options.increaseIntervalMs ?? RATE_DEFAULTS.increaseIntervalMs,
      decreaseCooldownMs: options.decreaseCooldownMs ?? RATE_DEFAULTS.decreaseCooldownMs,
      minRate: Math.min(options.minRate ?? RATE_DEFAULTS.minRate, rate),
      increaseStep: options.increaseStep,
      burst: options.burst,
    };
    this.configuredRate = rate;
    this.effectiveRate = rate;
    this.burst = this.burstFor(rate);
    this.tokens = this.burst;
    const now = this.clock.now();
    this.refilledAt = now;
    this.lastRateChange = now;
    this.window.start = now;
    this.createdAt = now;
    this.step = options.increaseStep ?? Math.max(0.5, rate * RATE_DEFAULTS.increaseFraction);
  }

  /** This run's share of the configured rate: the target it sends at while no 429 comes. */
  get targetRate(): number {
    return this.configuredRate / this.shares;
  }

  /**
   * Shares the configured rate with the other live runs of the same integrator (docs/register.md
   * "Runs, claims and leases": `--rate` is the integrator's total), as counted at each heartbeat.
   */
  share(runs: number): void {
    const shares = Math.max(1, Math.floor(runs));
    if (shares === this.shares || !Number.isFinite(this.configuredRate)) return;
    this.shares = shares;
    const now = this.clock.now();
    this.refill(now);
    // Down at once to the new share; back up by the additive increase, as after a 429.
    if (this.effectiveRate > this.targetRate) this.setRate(this.targetRate, now);
  }

  /** The rate in force now (requests per second). */
  get currentRate(): number {
    this.recover(this.clock.now());
    return this.effectiveRate;
  }

  /** Until when all sending is paused (ms since epoch; in the past when not paused). */
  get pausedUntil(): number {
    return this.pausedUntilMs;
  }

  /** Resolves when the caller may send one request; FIFO. Rejects with InterruptedError on abort. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(interrupted(signal));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          // Nobody left to grant: a pump asleep on a long pause must not keep the process alive.
          if (this.queue.length === 0) this.interruptPump();
          reject(interrupted(signal));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      if (!this.pumping) void this.pump();
    });
  }

  /** Stops granting: the pump's timer ends, so nothing of the limiter keeps the process alive. */
  close(): void {
    this.interruptPump();
  }

  private interruptPump(): void {
    this.wake.abort();
    this.wake = new AbortController();
  }

  /** Pauses all sending until `untilMs` (a 429's Retry-After). Never shortens a pause. */
  pause(untilMs: number): void {
    if (untilMs <= this.pausedUntilMs) return;
    this.pausedUntilMs = untilMs;
    // Start the bucket empty at the end of the pause: resuming must not release a burst.
    this.tokens = 0;
    this.refilledAt = Math.max(this.refilledAt, untilMs);
  }

  /**
   * Records a 429: the rate drops by `decreaseFactor` (at most once per cooldown, since the
   * answers to requests sent together arrive together), down to `minRate`.
   */
  throttled(): void {
    const now = this.clock.now();
    if (now - this.lastDecrease < this.options.decreaseCooldownMs) {
      // Same congestion event: no further cut, but recovery waits for a quiet interval.
      this.lastRateChange = Math.max(this.lastRateChange, now);
      return;
    }
    this.refill(now);
    this.recover(now);
    let base = this.effectiveRate;
    if (!Number.isFinite(base)) {
      // Unlimited so far: start from the rate actually achieved, and recover in steps of it.
      base = Math.max(this.options.minRate, this.observedRate(now));
      this.step = this.options.increaseStep ?? Math.max(0.5, base * RATE_DEFAULTS.increaseFraction);
    }
    this.setRate(Math.max(this.options.minRate, base * this.options.decreaseFactor), now);
    this.lastDecrease = now;
  }

  private burstFor(rate: number): number {
    if (this.options.burst !== undefined) return Math.max(1, this.options.burst);
    return Number.isFinite(rate) ? Math.max(1, Math.ceil(rate / 10)) : Number.POSITIVE_INFINITY;
  }

  private setRate(rate: number, now: number): void {
    this.effectiveRate = rate;
    this.lastRateChange = now;
    this.burst = this.burstFor(rate);
    this.tokens = Math.min(this.tokens, this.burst);
  }

  /** Additive increase: one step per interval since the last change, up to the target. */
  private recover(now: number): void {
    if (this.effectiveRate >= this.targetRate) return;
    const intervals = Math.floor((now - this.lastRateChange) / this.options.increaseIntervalMs);
    if (intervals <= 0) return;
    this.refill(now);
    const rate = Math.min(this.targetRate, this.effectiveRate + intervals * this.step);
    this.setRate(rate, this.lastRateChange + intervals * this.options.increaseIntervalMs);
  }

  private refill(now: number): void {
    if (now < this.refilledAt) return;
    this.tokens = Number.isFinite(this.effectiveRate)
      ? Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.effectiveRate)
      : Number.POSITIVE_INFINITY;
    this.refilledAt = now;
  }

  /** Grants per second over the last second (or since creation, when younger). */
  private observedRate(now: number): number {
    this.rollWindow(now);
    const age = now - this.createdAt;
    if (age < 1000) return this.window.count / (Math.max(age, 100) / 1000);
    const fraction = (now - this.window.start) / 1000;
    return this.window.previous * (1 - fraction) + this.window.count;
  }

  private rollWindow(now: number): void {
    const elapsed = now - this.window.start;
    if (elapsed < 1000) return;
    this.window.previous = elapsed < 2000 ? this.window.count : 0;
    this.window.count = 0;
    this.window.start = now - (elapsed % 1000);
  }

  /** Grants waiters in order; the only place that sleeps, so waiters never race each other. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const now = this.clock.now();
        if (now < this.pausedUntilMs) {
          await this.nap(this.pausedUntilMs - now);
          continue;
        }
        this.recover(now);
        this.refill(now);
        if (this.tokens >= 1) {
          this.tokens -= 1;
          this.rollWindow(now);
          this.window.count += 1;
          const waiter = this.queue.shift()!;
          if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
          waiter.resolve();
          continue;
        }
        // Time until one whole token; also until the end of the bucket's head start after a pause.
        const wait = Math.max(this.refilledAt - now, 0) + ((1 - this.tokens) / this.effectiveRate) * 1000;
        await this.nap(Math.max(1, Math.ceil(wait)));
      }
    } finally {
      this.pumping = false;
    }
  }

  /** The pump's sleep; cut short (not failed) by interruptPump. */
  private async nap(ms: number): Promise<void> {
    try {
      await this.sleep(ms, this.wake.signal);
    } catch (error) {
      if (!this.wake.signal.aborted && !isAbort(error)) throw error;
    }
  }
}

function interrupted(signal: AbortSignal): InterruptedError {
  return new InterruptedError('stopped while waiting to send', { cause: signal.reason });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
