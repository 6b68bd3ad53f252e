/**
 * An OutageClock whose time moves only to the next timer due, once the work in flight has
 * nothing left to do but wait (a real turn of the event loop later): a wait of seconds passes in
 * microseconds, in the order it would have. For code that waits on nothing else (no socket, no
 * real database): their timers would fire long before they answer.
 */
import type { Cancel, OutageClock } from '../../src/clock.js';

export interface FakeOutageClock extends OutageClock {
  /** Every timer set, its length in ms, in order. */
  readonly waits: number[];
}

/** A fake clock starting at `start` (wall) and 0 (monotonic); `random` gives every draw. */
export function fakeOutageClock(random = () => 0.5, start = Date.UTC(2025, 0, 1)): FakeOutageClock {
  let elapsed = 0;
  let sequence = 0;
  let stepping = false;
  const due: { at: number; sequence: number; fire: () => void }[] = [];
  const waits: number[] = [];
  const step = () => {
    stepping = false;
    due.sort((a, b) => a.at - b.at || a.sequence - b.sequence);
    const next = due.shift();
    if (next === undefined) return;
    elapsed = Math.max(elapsed, next.at);
    next.fire();
    schedule();
  };
  const schedule = () => {
    if (stepping || due.length === 0) return;
    stepping = true;
    setImmediate(step);
  };
  const once = (ms: number, fire: () => void): Cancel => {
    waits.push(ms);
    const timer = { at: elapsed + Math.max(0, ms), sequence: sequence++, fire };
    due.push(timer);
    schedule();
    return () => {
      const at = due.indexOf(timer);
      if (at >= 0) due.splice(at, 1);
    };
  };
  return {
    waits,
    now: () => start + elapsed,
    random,
    timers: {
      elapsed: () => elapsed,
      once,
      every: (ms, fire) => {
        // Re-armed after each firing, so the outage's waits stay in order with the others.
        let cancel: Cancel;
        const again = () => {
          cancel = once(ms, () => {
            again();
            fire();
          });
        };
        again();
        return () => cancel();
      },
    },
  };
}
