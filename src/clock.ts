/**
 * Time, for every part of payouts that reads it or waits on it: the API layer (retries, rate
 * limiting, deadlines, token expiry), the register (leases), the batch (waits, timestamps)
 * and the sandbox (tokens, quotes, timestamps). Injected everywhere so that tests move time in
 * milliseconds instead of sleeping.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** Milliseconds since the epoch, like `Date.now()`. */
export interface Clock {
  now(): number;
}

/** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A real timer. */
export const realSleep: Sleep = async (ms, signal) => {
  if (ms <= 0) {
    signal?.throwIfAborted();
    return;
  }
  await delay(ms, undefined, signal ? { signal } : undefined);
};

/**
 * A timer that fires once, for a deadline on real input and output (a socket): the fake time of
 * tests moves only when someone sleeps, so a deadline on an actual request needs a real timer
 * even there. Injected so that tests with fake timers can still move it.
 */
export interface Timer {
  start(ms: number, fire: () => void): unknown;
  stop(handle: unknown): void;
}

/** Node's timers, looked up at each call so that fake timers installed by a test apply. */
export const realTimer: Timer = {
  start: (ms, fire) => setTimeout(fire, ms),
  stop: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

/**
 * What waiting through an outage reads and waits on (the register's, outage.ts): the wall clock,
 * a monotonic clock for time elapsed (which no change of the wall clock moves), randomness for
 * jitter, and timers. One object, so that a test moves all of them together, in milliseconds.
 */
export interface OutageClock extends Clock {
  /** Milliseconds on a monotonic clock, like `performance.now()`: only differences mean anything. */
  monotonic(): number;
  /** A number in [0, 1), like `Math.random()`. */
  random(): number;
  /**
   * Calls `fire` once after `ms`; the function returned cancels it. An `unref` timer does not
   * keep the process alive by itself.
   */
  setTimer(ms: number, fire: () => void, options?: { unref?: boolean }): () => void;
}

/** The machine's clocks, randomness and timers. */
export const systemOutageClock: OutageClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  random: () => Math.random(),
  setTimer: (ms, fire, options) => {
    const timer = setTimeout(fire, ms);
    if (options?.unref) timer.unref();
    return () => clearTimeout(timer);
  },
};

/** Milliseconds since the epoch as ISO 8601 text, as the register keeps times. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}

/** A stored time (ISO 8601 text, or the Date a driver gave) in milliseconds since the epoch. */
export function timeOf(value: string | Date): number {
  return new Date(value).getTime();
}
