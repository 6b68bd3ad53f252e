import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.js';

/**
 * Progress of `payouts run`: a bar with rows/s and time left on a terminal; otherwise one JSON
 * progress log line every few seconds.
 */
export class RunProgress {
  private bar: cliProgress.SingleBar | undefined;
  private readonly startedAt: number;
  private lastLogAt: number;
  private done = 0;
  private total = 0;

  constructor(
    private readonly stderr: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
    private readonly logEveryMs = 5000,
    /** A bar on a terminal, unless stderr holds JSON lines only (--log-format json). */
    private readonly drawBar = Boolean(stderr.isTTY),
  ) {
    this.startedAt = clock.now();
    this.lastLogAt = this.startedAt;
  }

  /** Records that `done` of `total` valid rows are finished. */
  update(done: number, total: number): void {
    this.done = done;
    this.total = total;
    if (this.drawBar) {
      if (!this.bar) {
        this.bar = new cliProgress.SingleBar(
          {
            stream: this.stderr as NodeJS.WritableStream,
            format: 'Paying |{bar}| {value}/{total} rows | {rate} rows/s | {eta_formatted} left',
            hideCursor: true,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        );
        this.bar.start(total, 0, { rate: '0' });
      }
      this.bar.update(done, { rate: this.rate().toFixed(1) });
      return;
    }
    const now = this.clock.now();
    if (now - this.lastLogAt >= this.logEveryMs) {
      this.lastLogAt = now;
      this.log();
    }
  }

  /** Stops the bar (or logs the last line). */
  finish(): void {
    if (this.bar) this.bar.stop();
    else if (this.done > 0) this.log();
  }

  private rate(): number {
    return this.done / Math.max((this.clock.now() - this.startedAt) / 1000, 0.001);
  }

  private log(): void {
    const rate = this.rate();
    const left = rate > 0 ? Math.round((this.total - this.done) / rate) : null;
    this.logger.info(
      {
        progress: {
          done: this.done,
          total: this.total,
          rowsPerSecond: Number(rate.toFixed(2)),
          secondsLeft: left,
        },
      },
      'progress',
    );
  }
}
