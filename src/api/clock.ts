/**
 * Time as the API layer sees it. Injected everywhere (STYLE.md "Time is injected") so that
 * retries, rate limiting and token expiry are tested in milliseconds with a fake clock.
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
