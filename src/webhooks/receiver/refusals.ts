/**
 * Requests the receiver refused, counted per status and reason and said once per interval:
 * never a log line per request, so a client that sends thousands of bad requests makes a
 * handful of lines, not thousands.
 */
import { type Cancel, type Clock, timersOf } from '../../clock.js';
import type { ReceiverNotice } from './options.js';

/** Refusals counted per status and reason, said once per interval (never a line per request). */
export class RefusalSummary {
  private counts: Record<string, number> = {};
  private since: number;
  private readonly stopTimer: Cancel;

  constructor(
    private readonly notify: (notice: ReceiverNotice) => void,
    private readonly clock: Clock,
    intervalMs: number,
  ) {
    this.since = clock.now();
    this.stopTimer = timersOf(clock).every(intervalMs, () => this.flush(), { unref: true });
  }

  add(status: number, reason: string): void {
    // Reasons that name a path are counted by their status alone: a client cannot make keys grow.
    const key = `${status} ${status === 404 ? 'no webhook endpoint there' : reason}`;
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }

  /** Says the refusals counted since the last summary, if any. */
  flush(): void {
    if (Object.keys(this.counts).length === 0) return;
    const now = this.clock.now();
    this.notify({ kind: 'refused', seconds: Math.round((now - this.since) / 1000), counts: this.counts });
    this.counts = {};
    this.since = now;
  }

  stop(): void {
    this.stopTimer();
  }
}
