import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate.js';
import { InterruptedError } from '../../src/errors.js';
import { fakeTime } from './helpers/fake-time.js';

/** Acquires `n` slots one after another's request and returns when each was granted (ms from start). */
async function grantTimes(
  limiter: RateLimiter,
  time: ReturnType<typeof fakeTime>,
  n: number,
): Promise<number[]> {
  const start = time.now();
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: n }, () => limiter.acquire().then(() => times.push(time.now() - start))),
  );
  return times;
}

describe('RateLimiter token bucket', () => {
  it('spaces requests at the rate once the burst is spent', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 10, burst: 1, ...time });
    expect(await grantTimes(limiter, time, 5)).toEqual([0, 100, 200, 300, 400]);
  });

  it('lets a burst of 100 ms worth go at once by default, then paces', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 100, ...time });
    const times = await grantTimes(limiter, time, 12);
    expect(times.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(times.slice(10)).toEqual([10, 20]);
  });

  it('holds the achieved rate at the target over a long run', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 200, ...time });
    const times = await grantTimes(limiter, time, 2000);
    const seconds = times.at(-1)! / 1000;
    // 20 go in the first burst, the remaining 1980 at 200/s.
    expect(seconds).toBeCloseTo(1980 / 200, 1);
  });

  it('is unlimited without a rate', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ ...time });
    expect(await grantTimes(limiter, time, 100)).toEqual(Array(100).fill(0));
    expect(time.sleeps).toEqual([]);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new RateLimiter({ rate: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ rate: Number.NaN })).toThrow(RangeError);
  });
});

describe('RateLimiter pause (429 Retry-After)', () => {
  it('holds every waiter until the pause ends, then resumes at the rate without a burst', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 10, burst: 5, ...time });
    limiter.pause(time.now() + 1000);
    const times = await grantTimes(limiter, time, 3);
    expect(times).toEqual([1100, 1200, 1300]);
  });

  it('never shortens a pause', () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 10, ...time });
    limiter.pause(time.now() + 2000);
    limiter.pause(time.now() + 500);
    expect(limiter.pausedUntil).toBe(time.now() + 2000);
  });

  it('pauses an unlimited limiter too', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ ...time });
    limiter.pause(time.now() + 750);
    expect(await grantTimes(limiter, time, 2)).toEqual([750, 750]);
  });

  it('extends a pause that arrives while waiters sleep', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 1000, burst: 1, ...time });
    const start = time.now();
    limiter.pause(start + 100);
    const first = limiter.acquire().then(() => time.now() - start);
    // Another 429 lands while the first waiter sleeps through the first pause.
    limiter.pause(start + 400);
    expect(await first).toBeGreaterThanOrEqual(400);
  });
});

describe('RateLimiter adaptive rate', () => {
  it('drops by 0.7 on a 429, once per cooldown, not below the floor', () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 100, minRate: 20, ...time });
    limiter.throttled();
    expect(limiter.currentRate).toBeCloseTo(70);
    limiter.throttled(); // same congestion event
    expect(limiter.currentRate).toBeCloseTo(70);
    time.advance(999);
    limiter.throttled();
    expect(limiter.currentRate).toBeCloseTo(70);
    time.advance(1);
    limiter.throttled();
    expect(limiter.currentRate).toBeCloseTo(49);
    for (let i = 0; i < 10; i++) {
      time.advance(1000);
      limiter.throttled();
    }
    expect(limiter.currentRate).toBe(20);
  });

  it('recovers additively while no 429 comes, up to the target', () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 100, ...time });
    limiter.throttled();
    expect(limiter.currentRate).toBeCloseTo(70);
    time.advance(999);
    expect(limiter.currentRate).toBeCloseTo(70);
    time.advance(1);
    expect(limiter.currentRate).toBeCloseTo(75);
    time.advance(3000);
    expect(limiter.currentRate).toBeCloseTo(90);
    time.advance(60_000);
    expect(limiter.currentRate).toBe(100);
  });

  it('paces at the lowered rate after a 429', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 10, burst: 1, minRate: 1, ...time });
    await limiter.acquire();
    limiter.throttled(); // 10 → 7 per second
    const times = await grantTimes(limiter, time, 3);
    // Spaced 1/7 s apart (ceil to whole ms per sleep), against 100 ms before the 429.
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(142);
    expect(times[2]! - times[1]!).toBeLessThanOrEqual(144);
  });

  it('without a target, starts from the rate actually achieved', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ ...time });
    for (let i = 0; i < 50; i++) {
      await limiter.acquire();
      time.advance(10); // 100 requests per second
    }
    limiter.throttled();
    expect(limiter.currentRate).toBeGreaterThan(60);
    expect(limiter.currentRate).toBeLessThan(75);
  });
});

describe('RateLimiter abort', () => {
  it('rejects an aborted waiter and still serves the others in order', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({ rate: 10, burst: 1, ...time });
    await limiter.acquire();
    const controller = new AbortController();
    const order: string[] = [];
    const a = limiter.acquire(controller.signal).then(
      () => order.push('a'),
      (err: unknown) => order.push(err instanceof InterruptedError ? 'a aborted' : 'a ?'),
    );
    const b = limiter.acquire().then(() => order.push('b'));
    controller.abort();
    await Promise.all([a, b]);
    expect(order).toEqual(['a aborted', 'b']);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const limiter = new RateLimiter({ rate: 1 });
    await expect(limiter.acquire(AbortSignal.abort())).rejects.toBeInstanceOf(InterruptedError);
  });
});

describe('RateLimiter and a stopped run', () => {
  /** A sleep that only ends when its signal aborts: a long pause seen from inside. */
  function endlessSleep() {
    const naps: { ms: number; signal: AbortSignal | undefined }[] = [];
    const sleep = (ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        naps.push({ ms, signal });
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    return { naps, sleep };
  }

  it('the pump stops sleeping through a 100 s pause once its last waiter gives up', async () => {
    const { naps, sleep } = endlessSleep();
    const clock = { now: () => 0 };
    const limiter = new RateLimiter({ rate: 10, clock, sleep });
    limiter.pause(100_000);
    const stop = new AbortController();
    const waiting = limiter.acquire(stop.signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(naps.map((n) => n.ms)).toEqual([100_000]);
    stop.abort();
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError);
    // The pump's own timer is cancelled: nothing of the limiter keeps the process alive.
    expect(naps[0]!.signal?.aborted).toBe(true);
  });

  it('close() ends the pump sleep too', async () => {
    const { naps, sleep } = endlessSleep();
    const limiter = new RateLimiter({ rate: 10, clock: { now: () => 0 }, sleep });
    limiter.pause(100_000);
    void limiter.acquire().catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    limiter.close();
    expect(naps[0]!.signal?.aborted).toBe(true);
  });
});
