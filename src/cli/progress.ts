import type { Writable } from 'node:stream';
import { type Clock, systemClock } from '../clock.js';

/**
 * A one-line rows-and-rate indicator for a person watching a terminal. On anything that is
 * not a TTY (cron, CI, a pipe) it writes nothing: logs stay quiet and parseable.
 */
export class RowCounter {
  private readonly startedAt: number;
  private lastDrawAt = 0;
  private drawn = false;

  constructor(
    private readonly stream: Writable & { isTTY?: boolean; columns?: number },
    private readonly label: string,
    private readonly clock: Clock = systemClock,
  ) {
    this.startedAt = clock.now();
  }

  /** Records progress; redraws at most ten times a second. */
  update(rows: number): void {
    if (!this.stream.isTTY) return;
    const now = this.clock.now();
    if (now - this.lastDrawAt < 100) return;
    this.lastDrawAt = now;
    const seconds = Math.max((now - this.startedAt) / 1000, 0.001);
    const rate = Math.round(rows / seconds);
    this.stream.write(
      `\r${this.label}: ${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'} (${rate.toLocaleString('en-US')} rows/s)\x1b[K`,
    );
    this.drawn = true;
  }

  /** Clears the line so the summary starts clean. */
  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
  }
}
