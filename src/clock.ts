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
