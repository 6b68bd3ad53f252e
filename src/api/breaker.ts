/**
 * A circuit breaker over every request to the service. A run with nobody
 * watching must not grind through every row while the service is down: after a run of failed
 * attempts (no answer, 5xx, 429) the circuit opens and requests wait; one probe at a time is let
 * through (half-open) after a growing pause; the first answer that is not a failure closes it.
 * An outage is measured in time, not in failures: once `maxOutageMs` have passed since the first
 * failure of an unbroken series, every waiting and later request fails with
 * ServiceUnavailableError, and the run stops taking rows (exit 6, "retry later"). With each
 * attempt bounded by its deadline (layers/deadline.ts), that is at most `maxOutageMs` plus one
 * deadline. A failure that no wait can mend (a 429 asking for longer than that, an identity
 * endpoint that cannot issue tokens) gives up at once, with its own words (`giveUp`).
 *
 * The request path asks it one question, `admit`: wait (until the probe is due or the circuit
 * closes), or give up. Otherwise it is told: how each attempt went (`record`, which hands back
 * where the outage stands, for the retry layer) and when to give up at once (`giveUp`).
 *
 * Time is injected so tests need not sleep; waits end on the caller's AbortSignal.
 */

import { type Clock, realSleep, type Sleep, systemClock } from '../clock.js';
import { InterruptedError, ServiceUnavailableError } from '../errors.js';
import { OUTAGE_BUDGET } from '../outage-budget.js';

/** Defaults in one object (`--max-outage` sets `maxOutageMs`). */
export const BREAKER_DEFAULTS = {
  /** Failed attempts in a row, across all requests, that open the circuit. */
  failureThreshold: 8,
  /** Pause before the first probe; doubles after each failed probe, up to `maxOpenMs`. */
  openMs: 1_000,
  maxOpenMs: 8_000,
  /** How long an outage (from its first failed attempt) is waited through before giving up. */
  maxOutageMs: OUTAGE_BUDGET.maxOutageMs as number,
  /** How often a waiting request looks again while a probe is under way. */
  pollMs: 100,
};

export type BreakerSettings = typeof BREAKER_DEFAULTS;

/** What an attempt says about the service: down (no answer, 5xx, 429), up, or nothing. */
export type AttemptVerdict = 'failure' | 'success' | 'neutral';

export type BreakerState = 'closed' | 'open' | 'half-open' | 'gave-up';

/** Admission to send one attempt; a probe's answer decides whether the circuit closes. */
export interface Ticket {
  probe: boolean;
}

/**
 * Where an outage stood when an attempt was recorded, as the outage layer hands it up to the
 * retry layer. A request past its own retry budget keeps going while the failure is everyone's
 * (`sharesOutage`), backing off at most `backoffCapMs`; a backoff ends on `ends`, which aborts
 * when the circuit opens: from then on the breaker paces the attempts (a 503's long Retry-After
 * included).
 */
export interface OutageStanding {
  /** The circuit was open, half-open or gave up. */
  readonly open: boolean;
  /** Failed attempts in a row, across all requests. */
  readonly inARow: number;
  readonly ends: AbortSignal;
  readonly backoffCapMs: number;
}

/**
 * Whether the failures of a request that failed `attempts` times are not its own: every
 * attempt anywhere failed since (or the circuit is open). Such a request waits for the
 * breaker to decide instead of giving up on its own attempt budget.
 */
export function sharesOutage(standing: OutageStanding, attempts: number): boolean {
  return standing.open || standing.inARow >= attempts;
}

export interface CircuitBreakerOptions extends Partial<BreakerSettings> {
  clock?: Clock;
  sleep?: Sleep;
  /** Told when the circuit opens, closes and gives up (for the logs). */
  onChange?: (state: BreakerState, facts: { failures: number; outageMs: number }) => void;
}

export class CircuitBreaker {
  private readonly settings: BreakerSettings;
  private readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly onChange: CircuitBreakerOptions['onChange'];
  private current: BreakerState = 'closed';
  private failures = 0;
  private outageSince: number | undefined;
  private openUntil = 0;
  private pauseMs: number;
  private outage = new AbortController();
  private reason: string | undefined;
  /** The last standing handed out: the same object while nothing changes (see `standingNow`). */
  private standing: OutageStanding | undefined;

  constructor(options: CircuitBreakerOptions = {}) {
    const { clock, sleep, onChange, ...settings } = options;
    this.settings = { ...BREAKER_DEFAULTS, ...settings };
    this.clock = clock ?? systemClock;
    this.sleep = sleep ?? realSleep;
    this.onChange = onChange;
    this.pauseMs = this.settings.openMs;
  }

  get state(): BreakerState {
    return this.current;
  }

  /** True once an outage outlasted `maxOutageMs`: nothing more is sent. */
  get gaveUp(): boolean {
    return this.current === 'gave-up';
  }

  /** Failed attempts in a row, across all requests, since the last answer that was not one. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Why the breaker gave up, in words for a finance person; undefined while it has not. */
  get gaveUpBecause(): string | undefined {
    return this.current === 'gave-up' ? this.reasonText() : undefined;
  }

  /**
   * Ends the wait for the service at once: a failure no waiting can mend. `reason` says what
   * failed (it becomes the run's message and, after "not sent: ", the unsent rows').
   */
  giveUp(reason: string): ServiceUnavailableError {
    if (this.current !== 'gave-up') {
      this.reason = reason;
      this.outageSince ??= this.clock.now();
      this.change('gave-up', this.clock.now());
    }
    return this.unavailable();
  }

  /**
   * Resolves when an attempt may be sent: at once while closed, else when this caller is the
   * next probe. Rejects with ServiceUnavailableError once the breaker gave up, and with
   * InterruptedError when `signal` aborts.
   */
  async admit(signal?: AbortSignal): Promise<Ticket> {
    for (;;) {
      if (signal?.aborted) throw new InterruptedError('stopped before sending', { cause: signal.reason });
      if (this.current === 'closed') return { probe: false };
      if (this.current === 'gave-up') throw this.unavailable();
      const now = this.clock.now();
      if (this.outlasted(now)) {
        this.change('gave-up', now);
        throw this.unavailable();
      }
      if (this.current === 'open' && now >= this.openUntil) {
        this.current = 'half-open';
        return { probe: true };
      }
      const waitMs = this.current === 'open' ? this.openUntil - now : this.settings.pollMs;
      try {
        await this.sleep(Math.max(1, Math.min(waitMs, this.settings.pollMs * 10)), signal);
      } catch (error) {
        if (signal?.aborted) throw new InterruptedError('stopped before sending', { cause: signal.reason });
        throw error;
      }
    }
  }

  /** Records how an admitted attempt went; answers where the outage stands after it. */
  record(ticket: Ticket, verdict: AttemptVerdict): OutageStanding {
    this.note(ticket, verdict, this.clock.now());
    return this.standingNow();
  }

  private note(ticket: Ticket, verdict: AttemptVerdict, now: number): void {
    if (verdict === 'success') {
      const wasOutage = this.current !== 'closed' && this.current !== 'gave-up';
      this.failures = 0;
      this.outageSince = undefined;
      this.pauseMs = this.settings.openMs;
      if (wasOutage) this.change('closed', now);
      return;
    }
    if (ticket.probe && this.current === 'half-open' && verdict === 'neutral') {
      // The probe told nothing (stopped, or a permanent error): let the next caller probe.
      this.current = 'open';
      return;
    }
    if (verdict !== 'failure' || this.current === 'gave-up') return;
    this.failures += 1;
    this.outageSince ??= now;
    if (this.outlasted(now)) {
      this.change('gave-up', now);
      return;
    }
    if (ticket.probe && this.current === 'half-open') {
      this.pauseMs = Math.min(this.pauseMs * 2, this.settings.maxOpenMs);
      this.open(now);
      return;
    }
    if (this.current === 'closed' && this.failures >= this.settings.failureThreshold) this.open(now);
  }

  /**
   * Where the outage stands now. The same object while nothing changed, so that the attempts of
   * a healthy service make none; a new one after a change, so that one handed out earlier stays
   * what it was.
   */
  private standingNow(): OutageStanding {
    const open = this.current !== 'closed';
    const last = this.standing;
    if (last && last.open === open && last.inARow === this.failures && last.ends === this.outage.signal)
      return last;
    this.standing = {
      open,
      inARow: this.failures,
      ends: this.outage.signal,
      backoffCapMs: this.settings.openMs,
    };
    return this.standing;
  }

  /** Whether the unbroken series of failures began `maxOutageMs` or more ago. */
  private outlasted(now: number): boolean {
    return this.outageSince !== undefined && now - this.outageSince >= this.settings.maxOutageMs;
  }

  private open(now: number): void {
    this.openUntil = now + this.pauseMs;
    this.change('open', now);
  }

  private change(state: BreakerState, now: number): void {
    this.current = state;
    if (state === 'closed') this.outage = new AbortController();
    else if (state === 'gave-up') this.outage.abort(this.unavailable());
    else this.outage.abort();
    this.onChange?.(state, { failures: this.failures, outageMs: now - (this.outageSince ?? now) });
  }

  private unavailable(): ServiceUnavailableError {
    const reason = this.reasonText();
    return new ServiceUnavailableError(reason, { reason });
  }

  /** The words for giving up: `giveUp`'s own, or the outage that outlasted --max-outage. */
  private reasonText(): string {
    const seconds = Math.round(this.settings.maxOutageMs / 1000);
    return (
      this.reason ??
      `the service stayed unreachable or unavailable for more than ${seconds} s (--max-outage) - run again later to resume`
    );
  }

  /** `--max-outage` in milliseconds (a longer Retry-After gives up at once). */
  get maxOutageMs(): number {
    return this.settings.maxOutageMs;
  }
}
