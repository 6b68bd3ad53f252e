import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { LinkedAbort } from '../../src/api/abort.js';
import type { Timers } from '../../src/clock.js';

describe('LinkedAbort', () => {
  it('aborts with the reason of the first signal that aborts', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const linked = new LinkedAbort([a.signal, undefined, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort('stop');
    a.abort('later');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('stop');
    expect(linked.timedOut).toBe(false);
    linked.dispose();
  });

  it('is aborted from the start when a signal already is', () => {
    const a = new AbortController();
    a.abort('before');
    const linked = new LinkedAbort([a.signal], 1);
    expect(linked.signal.reason).toBe('before');
    expect(linked.timedOut).toBe(false);
  });

  it('aborts when its time is up, and says so', () => {
    vi.useFakeTimers();
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const linked = new LinkedAbort([new AbortController().signal], 5);
    vi.advanceTimersByTime(4);
    expect(linked.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.timedOut).toBe(true);
    expect((linked.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('lets go of its signals and its timer once disposed', () => {
    vi.useFakeTimers();
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const a = new AbortController();
    const linked = new LinkedAbort([a.signal], 5);
    linked.dispose();
    expect(vi.getTimerCount()).toBe(0);
    a.abort('after');
    vi.advanceTimersByTime(30);
    expect(linked.signal.aborted).toBe(false);
    expect(linked.timedOut).toBe(false);
  });

  it('links many at once to one signal without a listener warning (each unhooks when done)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const run = new AbortController();
      const linked = Array.from({ length: 50 }, () => new LinkedAbort([run.signal]));
      // Node emits the listener warning on the next tick of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).toEqual([]);
      run.abort('stop');
      expect(linked.every((l) => l.signal.reason === 'stop')).toBe(true);
      for (const l of linked) l.dispose();
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('runs its deadline on the timers it is given', () => {
    let fire: (() => void) | undefined;
    const stopped: unknown[] = [];
    const timers: Timers = {
      elapsed: () => 0,
      once: (ms, callback) => {
        expect(ms).toBe(7);
        fire = callback;
        return () => stopped.push('handle');
      },
      every: () => {
        throw new Error('a deadline fires once');
      },
    };
    const linked = new LinkedAbort([], 7, timers);
    expect(linked.signal.aborted).toBe(false);
    fire!();
    expect(linked.timedOut).toBe(true);
    linked.dispose();
    expect(stopped).toEqual(['handle']);
  });
});
