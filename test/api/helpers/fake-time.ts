import type { Clock, Sleep } from '../../../src/clock.js';

/** A clock that only moves when someone sleeps (or the test advances it): tests run in ms. */
export interface FakeTime {
  clock: Clock;
  sleep: Sleep;
  /** Every sleep asked for, in order. */
  sleeps: number[];
  advance(ms: number): void;
  now(): number;
}

export function fakeTime(start = Date.UTC(2025, 0, 1)): FakeTime {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      // Yield a real tick first, so work due "now" (resolved waiters) runs before time moves.
      await new Promise((resolve) => setImmediate(resolve));
      now += Math.max(0, ms);
    },
    sleeps,
    advance(ms) {
      now += ms;
    },
    now: () => now,
  };
}
