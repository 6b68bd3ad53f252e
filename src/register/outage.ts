/**
 * A register that fails is an outage, as the service's is (docs/register.md "When the register
 * fails"): a driver wrapped here runs every operation again, on a fresh connection, while its
 * failures are outages (a restart, a failover, a cut, a stall past the deadline, a lock held by
 * another process), until the register answers or `maxOutageMs` of unbroken failure have passed.
 * Then it gives up once, for every operation after it too, so a run ends (exit 6) without
 * waiting on the register again. A stop past its grace (`abandon`) ends every operation under
 * way at once, its connections cut; what is asked after it (a run's end, its claims given back)
 * gets one attempt each, all within half a second.
 *
 * Running an operation again is safe because every write of the register can be applied twice:
 * a claim finds its own claims and takes them again, a fenced update finds its own run, a
 * payment joins its payee's history once per reference, and the rest are upserts. So an intent
 * whose commit got no answer is, in effect, read back: present, the write changes nothing new;
 * absent, it is written again.
 */
import { type OutageClock, systemOutageClock } from '../clock.js';
import { InterruptedError, RegisterError } from '../errors.js';
import { OUTAGE_BUDGET } from '../outage-budget.js';
import type { Driver, Sql } from './sql.js';

/** Defaults in one object. */
export const OUTAGE_DEFAULTS = {
  /** `--max-outage`'s default, the service's and the register's alike (outage-budget.ts). */
  maxOutageMs: OUTAGE_BUDGET.maxOutageMs,
  /** The first wait before an operation runs again, doubled up to `maxWaitMs`, with jitter. */
  firstWaitMs: 20,
  maxWaitMs: 1_000,
  /** After an abandon, how long the operations still asked (one attempt each) may take together. */
  abandonedMs: 500,
} as const;

export interface OutagePolicy {
  maxOutageMs: number;
  /** Aborted when a stopped command's grace is over: every operation ends at once. */
  abandon?: AbortSignal | undefined;
  /** Told once per outage, when the first operation meets it. */
  onOutage?: ((words: string) => void) | undefined;
  /**
   * A server that outlives outages (`webhooks listen`): an operation past the budget fails, but
   * the next one tries the register again. Otherwise (a run) the first to give up does so for all.
   */
  keepTrying?: boolean | undefined;
  /** Time read and waited on (tests move it); by default the machine's. */
  clock?: OutageClock | undefined;
}

/** The register stayed unreachable past --max-outage: a run ends as for an outage of the service (exit 6). */
export class RegisterOutageError extends RegisterError {}

/** A driver whose operations wait through outages (see the file's comment). */
export class OutageDriver implements Driver {
  /** When the unbroken series of failures began (a monotonic time), if one is going on. */
  private since: number | undefined;
  private gaveUp: Error | undefined;
  /** When the abandon came (a monotonic time). */
  private abandonedAt: number | undefined;
  private readonly clock: OutageClock;

  constructor(
    private readonly inner: Driver,
    private readonly location: string,
    private readonly policy: OutagePolicy,
  ) {
    this.clock = policy.clock ?? systemOutageClock;
    policy.abandon?.addEventListener(
      'abort',
      () => {
        this.abandonedAt = this.clock.timers.elapsed();
        inner.cut?.();
      },
      { once: true },
    );
  }

  get begin(): string {
    return this.inner.begin;
  }

  /** Whether the register stayed unreachable past the outage budget. */
  get unavailable(): boolean {
    return this.gaveUp !== undefined;
  }

  async connection<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.policy.abandon?.aborted) return this.lastWords(work);
    for (let attempt = 0; ; attempt += 1) {
      if (this.gaveUp) throw this.gaveUp;
      this.stopIfAbandoned();
      try {
        const value = await untilAbandoned(this.inner.connection(work), this.policy.abandon);
        this.since = undefined;
        return value;
      } catch (error) {
        this.stopIfAbandoned();
        const words = this.inner.isDriverError(error) ? this.inner.outage(error) : undefined;
        if (words === undefined) throw error;
        const now = this.clock.timers.elapsed();
        if (this.since === undefined) {
          this.since = now;
          this.policy.onOutage?.(words);
        }
        if (now - this.since >= this.policy.maxOutageMs) {
          const failure = new RegisterOutageError(
            `the register ${this.location} stayed unreachable for ${Math.round((now - this.since) / 1000)} s (${words}), past --max-outage ${Math.round(this.policy.maxOutageMs / 1000)} s`,
            // No errno: the words above already say what failed (never a bare SQLSTATE).
            { path: this.location, cause: error, errno: '' },
          );
          if (!this.policy.keepTrying) this.gaveUp ??= failure;
          throw this.gaveUp ?? failure;
        }
        await pause(outageWait(attempt, this.clock), this.policy.abandon, this.clock);
      }
    }
  }

  isDriverError(error: unknown): boolean {
    return this.inner.isDriverError(error);
  }

  outage(error: unknown): string | undefined {
    return this.inner.outage(error);
  }

  failure(what: string, error: unknown): Error {
    return this.inner.failure(what, error);
  }

  cut(): void {
    this.inner.cut?.();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * After the abandon, what is left to say (a run's end, its claims given back) gets one attempt
   * each, all within `abandonedMs` of the abandon: a register that answers still hears it, one
   * that stalls costs half a second at most.
   */
  private async lastWords<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    this.abandonedAt ??= this.clock.timers.elapsed();
    const left = this.abandonedAt + OUTAGE_DEFAULTS.abandonedMs - this.clock.timers.elapsed();
    if (this.gaveUp) throw this.gaveUp;
    if (left <= 0) this.stopIfAbandoned();
    let cancel = () => {};
    const late = new Promise<never>((_, reject) => {
      cancel = this.clock.timers.once(left, () => {
        this.inner.cut?.();
        reject(new InterruptedError(`stopped: the register ${this.location} was not waited for any longer`));
      });
    });
    try {
      return await Promise.race([this.inner.connection(work), late]);
    } catch (error) {
      // A register that does not answer (locked, unreachable) is not waited for after the
      // abandon: that is the stop it is, not a failure of the register, whichever came first.
      if (this.inner.isDriverError(error) && this.inner.outage(error) !== undefined)
        throw new InterruptedError(`stopped: the register ${this.location} was not waited for any longer`, {
          cause: error,
        });
      throw error;
    } finally {
      cancel();
    }
  }

  private stopIfAbandoned(): void {
    if (this.policy.abandon?.aborted)
      throw new InterruptedError(`stopped: the register ${this.location} was not waited for any longer`);
  }
}

/** `work`, or a rejection as soon as `abandon` aborts (the work itself is cut by the driver). */
function untilAbandoned<T>(work: Promise<T>, abandon: AbortSignal | undefined): Promise<T> {
  if (abandon === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new InterruptedError('stopped while the register was answering'));
    if (abandon.aborted) stop();
    abandon.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => abandon.removeEventListener('abort', stop));
  });
}

/**
 * The wait before attempt `attempt + 1` of an operation that met an outage: doubling from
 * `firstWaitMs` up to `maxWaitMs`, of which a random half, so that the runs an outage stopped
 * together do not all come back at once.
 */
export function outageWait(attempt: number, clock: Pick<OutageClock, 'random'>): number {
  const wait = Math.min(OUTAGE_DEFAULTS.maxWaitMs, OUTAGE_DEFAULTS.firstWaitMs * 2 ** Math.min(attempt, 10));
  return wait / 2 + clock.random() * (wait / 2);
}

/** What an attempt gives while another process holds what it needs: the error if it holds on. */
export class Held {
  constructor(readonly error: Error) {}
}

/** How untilFree waits. */
export interface HeldWait {
  /** How long in all from the first attempt, after which the last attempt's error is thrown. */
  budgetMs: number;
  /** The pause after attempt `n` (from 0). */
  wait(n: number): number;
  stop?: AbortSignal | undefined;
  clock: Pick<OutageClock, 'timers'>;
  /** What an InterruptedError says when a stop ends the wait. */
  stopped: string;
}

/**
 * `attempt` again while another process holds what it needs (a file's lock, a migration), with
 * asynchronous pauses between, so that a signal is handled meanwhile; a stop ends the wait at once.
 */
export async function untilFree<T>(attempt: () => T | Held | Promise<T | Held>, how: HeldWait): Promise<T> {
  const started = how.clock.timers.elapsed();
  for (let n = 0; ; n += 1) {
    if (how.stop?.aborted) throw new InterruptedError(how.stopped);
    const result = await attempt();
    if (!(result instanceof Held)) return result;
    if (how.clock.timers.elapsed() - started >= how.budgetMs) throw result.error;
    await pause(how.wait(n), how.stop, how.clock);
  }
}

/** Resolves after `ms` on `clock`, or at once when `stop` aborts. */
export function pause(
  ms: number,
  stop: AbortSignal | undefined,
  clock: Pick<OutageClock, 'timers'> = systemOutageClock,
): Promise<void> {
  return new Promise((resolve) => {
    let cancel = () => {};
    const done = () => {
      cancel();
      stop?.removeEventListener('abort', done);
      resolve();
    };
    cancel = clock.timers.once(ms, done);
    stop?.addEventListener('abort', done, { once: true });
  });
}
