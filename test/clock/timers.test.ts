/**
 * Node's timers behind the clock's `timers`: a timer fires once or every interval until
 * cancelled, and one marked `unref` does not hold the process. Fake timers installed by the test
 * apply, since the timers are looked up at each call.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isoNow, systemClock, systemTimers, timersOf } from '../../src/clock.js';

describe('systemTimers', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires `once` after its time and not before; a cancel before then stops it', () => {
    const fired: string[] = [];
    systemTimers.once(100, () => fired.push('a'));
    const cancel = systemTimers.once(100, () => fired.push('b'));
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    cancel();
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['a']);
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual(['a']);
  });

  it('fires `every` each interval until cancelled', () => {
    let count = 0;
    const cancel = systemTimers.every(10, () => {
      count += 1;
    });
    vi.advanceTimersByTime(35);
    expect(count).toBe(3);
    cancel();
    vi.advanceTimersByTime(100);
    expect(count).toBe(3);
  });

  it('measures `elapsed` in the time the timers run in', () => {
    const start = systemTimers.elapsed();
    vi.advanceTimersByTime(1_500);
    expect(systemTimers.elapsed() - start).toBe(1_500);
  });
});

describe('systemTimers and the process', () => {
  it('lets an `unref` timer not hold the process, and holds it with the others', () => {
    const handles = vi.spyOn(globalThis, 'setTimeout');
    const cancelHeld = systemTimers.once(60_000, () => {});
    const cancelLoose = systemTimers.once(60_000, () => {}, { unref: true });
    const [held, loose] = handles.mock.results.map((r) => r.value as NodeJS.Timeout);
    expect(held?.hasRef()).toBe(true);
    expect(loose?.hasRef()).toBe(false);
    cancelHeld();
    cancelLoose();
    handles.mockRestore();
  });
});

describe('timersOf and isoNow', () => {
  it("takes the clock's own timers, and Node's when it brings none", () => {
    const own = { ...systemTimers, elapsed: () => 42 };
    expect(timersOf({ now: () => 0, timers: own })).toBe(own);
    expect(timersOf({ now: () => 0 })).toBe(systemTimers);
    expect(timersOf(systemClock)).toBe(systemTimers);
  });

  it("writes the clock's time as ISO 8601 UTC", () => {
    expect(isoNow({ now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 678) })).toBe('2026-01-02T03:04:05.678Z');
  });
});
