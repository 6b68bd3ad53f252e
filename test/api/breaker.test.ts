import { describe, expect, it } from 'vitest';
import { type BreakerState, CircuitBreaker, sharesOutage, type Ticket } from '../../src/api/breaker.js';
import { InterruptedError, ServiceUnavailableError } from '../../src/errors.js';
import { fakeTime } from './helpers/fake-time.js';

const plain: Ticket = { probe: false };

function breaker(overrides = {}) {
  const time = fakeTime();
  const changes: BreakerState[] = [];
  const b = new CircuitBreaker({
    failureThreshold: 3,
    openMs: 1_000,
    maxOpenMs: 4_000,
    maxOutageMs: 10_000,
    clock: time.clock,
    sleep: time.sleep,
    onChange: (state) => changes.push(state),
    ...overrides,
  });
  return { b, time, changes };
}

describe('CircuitBreaker', () => {
  it('stays closed while failures are interrupted by answers', async () => {
    const { b, changes } = breaker();
    for (const verdict of ['failure', 'failure', 'success', 'failure', 'failure'] as const) {
      b.record(await b.admit(), verdict);
    }
    expect(b.state).toBe('closed');
    expect(b.consecutiveFailures).toBe(2);
    expect(changes).toEqual([]);
  });

  it('opens after the threshold, lets one probe through after the pause, and closes on its answer', async () => {
    const { b, time, changes } = breaker();
    for (let i = 0; i < 3; i++) b.record(plain, 'failure');
    expect(b.state).toBe('open');
    const opened = time.now();
    const probe = await b.admit();
    expect(probe).toEqual({ probe: true });
    expect(time.now() - opened).toBe(1_000);
    expect(b.state).toBe('half-open');
    // Others wait while the probe is out.
    let second: Ticket | undefined;
    const waiting = b.admit().then((t) => {
      second = t;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBeUndefined();
    b.record(probe, 'success');
    await waiting;
    expect(second).toEqual({ probe: false });
    expect(changes).toEqual(['open', 'closed']);
    expect(b.consecutiveFailures).toBe(0);
  });

  it('doubles the pause after each failed probe, then gives up once the outage passes maxOutageMs', async () => {
    const { b, time, changes } = breaker();
    const start = time.now();
    for (let i = 0; i < 3; i++) b.record(plain, 'failure');
    const probesAt: number[] = [];
    for (;;) {
      let ticket: Ticket;
      try {
        ticket = await b.admit();
      } catch (error) {
        expect(error).toBeInstanceOf(ServiceUnavailableError);
        expect((error as Error).message).toBe(
          'the service stayed unreachable or unavailable for more than 10 s (--max-outage) - run again later to resume',
        );
        break;
      }
      probesAt.push(time.now() - start);
      b.record(ticket, 'failure');
    }
    // Pauses of 1, 2, 4 s: the wait for the probe due at 11 s ends at 10 s, when the outage
    // reaches --max-outage: time, not the count of failures, decides.
    expect(probesAt).toEqual([1_000, 3_000, 7_000]);
    expect(time.now() - start).toBe(10_000);
    expect(changes.at(-1)).toBe('gave-up');
    expect(b.gaveUp).toBe(true);
    await expect(b.admit()).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('gives up on elapsed time when failures are too sparse to open the circuit', () => {
    // A failure every 6 s (stalled requests, each failing at its deadline) stays below the
    // threshold of 3 in a row for 12 s: the series, not the count, is what gives up.
    const { b, time } = breaker({ failureThreshold: 8 });
    b.record(plain, 'failure');
    time.advance(6_000);
    b.record(plain, 'failure');
    expect(b.gaveUp).toBe(false);
    b.record(plain, 'success');
    time.advance(6_000);
    b.record(plain, 'failure');
    time.advance(6_000);
    b.record(plain, 'failure');
    expect(b.gaveUp).toBe(false);
    time.advance(4_000);
    b.record(plain, 'failure');
    expect(b.state).toBe('gave-up');
  });

  it('gives up at once with its own words for a failure no wait mends', async () => {
    const { b, changes } = breaker();
    const error = b.giveUp('the identity endpoint gave a token that expires at once');
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(changes).toEqual(['gave-up']);
    expect(b.gaveUpBecause).toBe('the identity endpoint gave a token that expires at once');
    await expect(b.admit()).rejects.toThrow('the identity endpoint gave a token that expires at once');
    // The first reason stands.
    b.giveUp('something else');
    expect(b.gaveUpBecause).toBe('the identity endpoint gave a token that expires at once');
  });

  it('a probe that tells nothing lets the next caller probe at once', async () => {
    const { b } = breaker();
    for (let i = 0; i < 3; i++) b.record(plain, 'failure');
    const probe = await b.admit();
    b.record(probe, 'neutral');
    expect(b.state).toBe('open');
    expect(await b.admit()).toEqual({ probe: true });
  });

  it('a wait ends at once when the signal aborts', async () => {
    const { b } = breaker({ openMs: 60_000 });
    for (let i = 0; i < 3; i++) b.record(plain, 'failure');
    const controller = new AbortController();
    const waiting = b.admit(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError);
  });

  it('sharesOutage: a request failing alone does not, one failing with everything else does', () => {
    const { b } = breaker({ failureThreshold: 100 });
    b.record(plain, 'failure');
    b.record(plain, 'success');
    let standing = b.record(plain, 'failure');
    expect(sharesOutage(standing, 5)).toBe(false);
    for (let i = 0; i < 4; i++) standing = b.record(plain, 'failure');
    expect(sharesOutage(standing, 5)).toBe(true);
  });

  it('record hands back where the outage stands; one handed out earlier stays as it was', () => {
    const { b } = breaker();
    const healthy = b.record(plain, 'success');
    // Nothing changed: the same standing, so a healthy service's attempts make none.
    expect(b.record(plain, 'success')).toBe(healthy);
    expect(healthy).toMatchObject({ open: false, inARow: 0, backoffCapMs: 1_000 });
    b.record(plain, 'failure');
    b.record(plain, 'failure');
    const opened = b.record(plain, 'failure');
    expect(opened).toMatchObject({ open: true, inARow: 3 });
    // The circuit opened: a backoff waiting on the standing's signal ends.
    expect(opened.ends.aborted).toBe(true);
    expect(healthy).toMatchObject({ open: false, inARow: 0 });
  });
});
