import { type Cancel, systemTimers, type Timers } from '../clock.js';

/**
 * A stop (SIGINT, SIGTERM, SIGHUP) lets requests under way finish for this long, then cuts
 * them, so that the run writes its results and ends within 10 s whatever is in flight
 * (README "Exit codes", 5); the rest of the 10 s is for the results file and the register.
 */
export const STOP_GRACE_MS = 7_000;

/** The grace after a stop: `abandoned` aborts when it is over, or at once on a second signal. */
export class StopGrace {
  private readonly controller = new AbortController();
  private cancel: Cancel | undefined;
  private readonly start = () => {
    this.cancel ??= this.timers.once(this.graceMs, () => this.controller.abort());
  };
  private readonly now = () => this.controller.abort();

  constructor(
    private readonly stop: AbortSignal,
    private readonly abandon: AbortSignal | undefined,
    private readonly graceMs: number,
    private readonly timers: Timers = systemTimers,
  ) {
    if (stop.aborted) this.start();
    else stop.addEventListener('abort', this.start, { once: true });
    if (abandon?.aborted) this.now();
    else abandon?.addEventListener('abort', this.now, { once: true });
  }

  get abandoned(): AbortSignal {
    return this.controller.signal;
  }

  dispose(): void {
    this.cancel?.();
    this.stop.removeEventListener('abort', this.start);
    this.abandon?.removeEventListener('abort', this.now);
  }
}
