/**
 * Time, for every part of payouts that reads it or waits on it: the API layer (retries, rate
 * limiting, deadlines, token expiry), the register (leases), the batch (waits, timestamps),
 * the sandbox (tokens, quotes, timestamps) and the webhook receiver (deadlines, summaries,
 * retries). Injected everywhere so that tests move time in milliseconds instead of sleeping.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
  /** Timers that run in this clock's time; Node's when absent (`timersOf`). */
  readonly timers?: Timers;
}

/** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A real timer. */
export const realSleep: Sleep = async (ms, signal) => {
  if (ms <= 0) {
    signal?.throwIfAborted();
    return;
  }
  await delay(ms, undefined, signal ? { signal } : undefined);
};

/**
 * What waiting through an outage reads and waits on (the register's, outage.ts): the wall clock,
 * its timers and their time elapsed (which no change of the wall clock moves), and randomness
 * for jitter. One object, so that a test moves all of them together, in milliseconds.
 */
export interface OutageClock extends Clock {
  readonly timers: Timers;
  /** A number in [0, 1), like `Math.random()`. */
  random(): number;
}

/** Milliseconds since the epoch as ISO 8601 text, as the register keeps times. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}

/** A stored time (ISO 8601 text, or the Date a driver gave) in milliseconds since the epoch. */
export function timeOf(value: string | Date): number {
  return new Date(value).getTime();
}

/** The clock's time in ISO 8601 UTC (`2026-01-02T03:04:05.678Z`), as records keep it. */
export function isoNow(clock: Clock): string {
  return isoAt(clock.now());
}

/**
 * Timers, for code that schedules work instead of awaiting a sleep (a server's deadlines, its
 * periodic summaries, a retry in the background), and the time they run in: a test that moves
 * them moves the durations measured with `elapsed` too.
 */
export interface Timers {
  /** Milliseconds that never go back, like `performance.now()`: for durations, never dates. */
  elapsed(): number;
  /** Calls `fire` once after `ms`; the function returned cancels it. */
  once(ms: number, fire: () => void, options?: TimerOptions): Cancel;
  /** Calls `fire` every `ms` until cancelled. */
  every(ms: number, fire: () => void, options?: TimerOptions): Cancel;
}

export interface TimerOptions {
  /** The timer alone does not keep the process running (Node's `unref`). */
  unref?: boolean;
}

/** Cancels a timer; harmless once it has fired or been cancelled. */
export type Cancel = () => void;

/** Node's timers, looked up at each call so that fake timers a test installs apply. */
export const systemTimers: Timers = {
  elapsed: () => performance.now(),
  once: (ms, fire, options) => {
    const timer = setTimeout(fire, ms);
    if (options?.unref) timer.unref();
    return () => clearTimeout(timer);
  },
  every: (ms, fire, options) => {
    const timer = setInterval(fire, ms);
    if (options?.unref) timer.unref();
    return () => clearInterval(timer);
  },
};

/** The clock's timers, or Node's when it brings none. */
export function timersOf(clock: Clock): Timers {
  return clock.timers ?? systemTimers;
}

/** The machine's clock, timers and randomness. */
export const systemOutageClock: OutageClock = {
  now: () => Date.now(),
  timers: systemTimers,
  random: () => Math.random(),
};
