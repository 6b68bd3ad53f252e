/** Waiting through an outage of the register, once for any driver, and for what another process holds (outage.ts). */
import { describe, expect, it } from 'vitest';
import { InterruptedError, RegisterError } from '../../src/errors.js';
import { deadlineWithin } from '../../src/outage-budget.js';
import { Held, OutageDriver, untilFree } from '../../src/register/outage.js';
import type { Driver, Sql } from '../../src/register/sql.js';
import { fakeOutageClock } from '../helpers/outage-clock.js';

class Outage extends Error {
  code = 'ECONNREFUSED';
}
class Refusal extends Error {
  code = '28P01';
}

/** A driver whose connections fail with `failures` (in turn) before they work. */
function flaky(failures: Error[]): Driver & { attempts: number } {
  const driver = {
    attempts: 0,
    begin: 'BEGIN',
    async connection<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
      driver.attempts += 1;
      const failure = failures.shift();
      if (failure) throw failure;
      return work({} as Sql);
    },
    isDriverError: (error: unknown) => error instanceof Outage || error instanceof Refusal,
    outage: (error: unknown) => (error instanceof Outage ? 'the connection was refused' : undefined),
    failure: (_what: string, error: unknown) => error as Error,
    close: async () => {},
  };
  return driver;
}

describe('OutageDriver', () => {
  it('runs an operation again through an outage until the register answers', async () => {
    const inner = flaky([new Outage(), new Outage(), new Outage()]);
    const told: string[] = [];
    const clock = fakeOutageClock(() => 0.5);
    const driver = new OutageDriver(inner, 'reg', {
      maxOutageMs: 5_000,
      onOutage: (w) => told.push(w),
      clock,
    });
    expect(await driver.connection(async () => 'answered')).toBe('answered');
    expect(inner.attempts).toBe(4);
    expect(told).toEqual(['the connection was refused']);
    // Doubling from 20 ms, of which a random half: here always the middle of it.
    expect(clock.waits).toEqual([15, 30, 60]);
    expect(clock.timers.elapsed()).toBe(105);
  });

  it('says at once what waiting does not mend', async () => {
    const inner = flaky([new Refusal()]);
    const driver = new OutageDriver(inner, 'reg', { maxOutageMs: 5_000 });
    await expect(driver.connection(async () => 1)).rejects.toBeInstanceOf(Refusal);
    expect(inner.attempts).toBe(1);
  });

  it('gives up past the budget, in words, and at once for every later operation', async () => {
    const inner = flaky(Array.from({ length: 1_000 }, () => new Outage()));
    const clock = fakeOutageClock(() => 0.5);
    const driver = new OutageDriver(inner, 'reg', { maxOutageMs: 8_000, clock });
    const error = await driver.connection(async () => 1).catch((e: unknown) => e);
    // Waits of 15, 30, ... 480 ms, then 750 ms (a second at most, of which a random half),
    // until the first failure 8 s or more after the first.
    expect(clock.waits.slice(0, 7)).toEqual([15, 30, 60, 120, 240, 480, 750]);
    expect(clock.timers.elapsed()).toBe(8_445);
    expect(inner.attempts).toBe(clock.waits.length + 1);
    expect(error).toBeInstanceOf(RegisterError);
    expect((error as Error).message).toBe(
      'the register reg stayed unreachable for 8 s (the connection was refused), past --max-outage 8 s',
    );
    expect(driver.unavailable).toBe(true);
    const attempts = inner.attempts;
    await expect(driver.connection(async () => 1)).rejects.toBe(error);
    expect(inner.attempts).toBe(attempts);
  });

  it('keeps trying for a server: the operation after the give-up reaches the register again', async () => {
    const failures = Array.from({ length: 1_000 }, () => new Outage());
    const inner = flaky(failures);
    const driver = new OutageDriver(inner, 'reg', {
      maxOutageMs: 30_000,
      keepTrying: true,
      clock: fakeOutageClock(),
    });
    await expect(driver.connection(async () => 1)).rejects.toBeInstanceOf(RegisterError);
    failures.length = 0;
    expect(await driver.connection(async () => 'back')).toBe('back');
  });

  it('ends every operation at once when abandoned, and cuts the connections under way', async () => {
    let cut = 0;
    const inner = {
      ...flaky([]),
      connection: () => new Promise<never>(() => {}),
      cut: () => {
        cut += 1;
      },
    };
    const abandon = new AbortController();
    const clock = fakeOutageClock();
    const driver = new OutageDriver(inner, 'reg', { maxOutageMs: 30_000, abandon: abandon.signal, clock });
    const stalled = driver.connection(async () => 1);
    abandon.abort();
    await expect(stalled).rejects.toBeInstanceOf(InterruptedError);
    expect(cut).toBe(1);
    // What is asked after it gets one attempt, within half a second of the abandon in all: the
    // stalled one is cut then.
    await expect(driver.connection(async () => 1)).rejects.toBeInstanceOf(InterruptedError);
    expect(clock.timers.elapsed()).toBe(500);
    expect(cut).toBe(2);
    await expect(driver.connection(async () => 1)).rejects.toBeInstanceOf(InterruptedError);
  });

  it('after an abandon, a register that answers still hears the last words, once each', async () => {
    const inner = flaky([new Outage(), new Refusal()]);
    const abandon = new AbortController();
    abandon.abort();
    const driver = new OutageDriver(inner, 'reg', { maxOutageMs: 30_000, abandon: abandon.signal });
    // One that does not answer is the stop, not a failure of the register (a run ends with exit
    // 5, not 6); what waiting would not mend is said as it is.
    const unanswered = await driver.connection(async () => 1).catch((e: unknown) => e);
    expect(unanswered).toBeInstanceOf(InterruptedError);
    expect((unanswered as InterruptedError).message).toBe(
      'stopped: the register reg was not waited for any longer',
    );
    expect((unanswered as InterruptedError).cause).toBeInstanceOf(Outage);
    await expect(driver.connection(async () => 1)).rejects.toBeInstanceOf(Refusal);
    expect(await driver.connection(async () => 'released')).toBe('released');
    expect(inner.attempts).toBe(3);
  });

  it('has the request deadline: half of --max-outage, at most 20 s, at least 1 s', () => {
    expect(deadlineWithin(4_000)).toBe(2_000);
    expect(deadlineWithin(30_000)).toBe(15_000);
    expect(deadlineWithin(600_000)).toBe(20_000);
    expect(deadlineWithin(500)).toBe(1_000);
  });
});

describe('untilFree', () => {
  it('tries again after each pause while held, and gives what the first free attempt gives', async () => {
    const clock = fakeOutageClock();
    let attempts = 0;
    const opened = await untilFree(() => (++attempts < 4 ? new Held(new Error('locked')) : 'open'), {
      budgetMs: 15_000,
      wait: (n) => 100 * (n + 1),
      clock,
      stopped: 'stopped',
    });
    expect(opened).toBe('open');
    expect(attempts).toBe(4);
    expect(clock.waits).toEqual([100, 200, 300]);
  });

  it('throws the last attempt’s error once the budget is spent, and no sooner', async () => {
    const clock = fakeOutageClock();
    let attempts = 0;
    const error = await untilFree(
      () => new Held(new RegisterError(`locked ${++attempts}`, { path: 'reg' })),
      {
        budgetMs: 1_000,
        wait: () => 250,
        clock,
        stopped: 'stopped',
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegisterError);
    // Attempts at 0, 250, 500, 750 and 1,000 ms: the fifth finds the budget spent.
    expect((error as Error).message).toBe('locked 5');
    expect(clock.timers.elapsed()).toBe(1_000);
  });

  it('ends the wait at once on a stop, in the words given, before another attempt', async () => {
    const clock = fakeOutageClock();
    const stop = new AbortController();
    let attempts = 0;
    const waiting = untilFree(
      () => {
        attempts += 1;
        return new Held(new Error('locked'));
      },
      { budgetMs: 60_000, wait: () => 10_000, stop: stop.signal, clock, stopped: 'stopped while locked' },
    );
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as Error).message).toBe('stopped while locked');
    expect(attempts).toBe(1);
    expect(clock.timers.elapsed()).toBe(0);
  });
});
