/**
 * One signal that aborts when any of several does, or when its time is up, and that lets go of
 * them when its work ends. `AbortSignal.any` keeps every signal it makes in weak sets and a
 * finalization registry until the garbage collector sees it go: made for every attempt of
 * thousands of requests, that was a visible share of a run's CPU. Here the listeners are
 * removed as soon as the attempt ends.
 */
import { setMaxListeners } from 'node:events';
import { type Cancel, systemTimers, type Timers } from '../clock.js';

export class LinkedAbort {
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[] = [];
  private readonly cancel: Cancel | undefined;
  /** Whether the time ran out (before any of the signals aborted). */
  timedOut = false;

  constructor(signals: readonly (AbortSignal | undefined)[], ms?: number, timers: Timers = systemTimers) {
    for (const source of signals) {
      if (source === undefined) continue;
      if (source.aborted) {
        this.controller.abort(source.reason);
        return;
      }
      // Every request under way links to the run's signals at once (one listener each, removed
      // when it ends): that many listeners are the design, not the leak Node warns of.
      setMaxListeners(0, source);
      source.addEventListener('abort', this.follow);
      this.sources.push(source);
    }
    if (ms !== undefined) this.cancel = timers.once(ms, () => this.expire());
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the timer and unhooks the signals; the linked signal stays as it is. */
  dispose(): void {
    this.cancel?.();
    for (const source of this.sources) source.removeEventListener('abort', this.follow);
    this.sources.length = 0;
  }

  private expire(): void {
    this.timedOut = true;
    this.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
  }

  private readonly follow = (event: Event): void => {
    this.controller.abort((event.target as AbortSignal).reason);
  };
}
