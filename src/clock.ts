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
