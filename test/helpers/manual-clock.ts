/**
 * A clock whose time, and the timers that run in it, move only when the test moves them: a
 * deadline of seconds is passed in a millisecond, and a test can say "not yet" a millisecond
 * before it. Real I/O (sockets, files) still runs in real time beside it.
 */
import type { Cancel, Clock, Timers } from '../../src/clock.js';

export interface ManualClock extends Clock {
  readonly timers: Timers;
  /** Moves time by `ms`, firing on the way every timer that falls due, in order. */
  advance(ms: number): void;
  /** Resolves once a timer of `ms` is waiting (one set already counts): the code has begun to wait. */
  whenWaiting(ms: number): Promise<void>;
}

interface Pending {
  at: number;
  ms: number;
  fire: () => void;
  repeat: boolean;
}

/** A manual clock starting at `start` (wall time) with nothing elapsed. */
export function manualClock(start = Date.UTC(2026, 0, 2, 3, 4, 5)): ManualClock {
  let elapsed = 0;
  const pending = new Set<Pending>();
  const waiters: { ms: number; resolve: () => void }[] = [];
  const set = (ms: number, fire: () => void, repeat: boolean): Cancel => {
    const timer = { at: elapsed + Math.max(0, ms), ms, fire, repeat };
    pending.add(timer);
    for (const w of waiters.filter((w) => w.ms === ms)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    return () => pending.delete(timer);
  };
  const due = (until: number): Pending | undefined =>
    [...pending].filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
  return {
    now: () => start + elapsed,
    timers: {
      elapsed: () => elapsed,
      once: (ms, fire) => set(ms, fire, false),
      every: (ms, fire) => set(Math.max(1, ms), fire, true),
    },
    advance(ms) {
      const until = elapsed + ms;
      for (let timer = due(until); timer !== undefined; timer = due(until)) {
        elapsed = timer.at;
        if (timer.repeat) timer.at += timer.ms;
        else pending.delete(timer);
        timer.fire();
      }
      elapsed = until;
    },
    whenWaiting(ms) {
      if ([...pending].some((t) => t.ms === ms)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ ms, resolve }));
    },
  };
}
