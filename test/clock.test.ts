/** Time read and waited on (clock.ts): the machine's outage clock, and times as the register keeps them. */
import { describe, expect, it } from 'vitest';
import { isoAt, systemOutageClock, timeOf } from '../src/clock.js';

describe('the machine’s outage clock', () => {
  it('fires a timer once after its time, and never once cancelled', async () => {
    const fired: string[] = [];
    const started = systemOutageClock.timers.elapsed();
    systemOutageClock.timers.once(20, () => fired.push('kept'));
    const cancel = systemOutageClock.timers.once(10, () => fired.push('cancelled'));
    cancel();
    await new Promise<void>((resolve) => systemOutageClock.timers.once(40, resolve, { unref: true }));
    expect(fired).toEqual(['kept']);
    expect(systemOutageClock.timers.elapsed() - started).toBeGreaterThanOrEqual(39);
  });

  it('draws jitter in [0, 1)', () => {
    for (let i = 0; i < 100; i++) {
      const draw = systemOutageClock.random();
      expect(draw).toBeGreaterThanOrEqual(0);
      expect(draw).toBeLessThan(1);
    }
  });
});

describe('times as the register keeps them', () => {
  it('writes milliseconds as ISO 8601 text and reads them back, from text or a Date', () => {
    expect(isoAt(Date.UTC(2026, 10, 29, 8, 30, 0, 5))).toBe('2026-11-29T08:30:00.005Z');
    expect(timeOf('2026-11-29T08:30:00.005Z')).toBe(Date.UTC(2026, 10, 29, 8, 30, 0, 5));
    expect(timeOf(new Date(Date.UTC(2026, 10, 29, 8, 30, 0, 5)))).toBe(Date.UTC(2026, 10, 29, 8, 30, 0, 5));
  });
});
