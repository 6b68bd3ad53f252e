/**
 * The sandbox's timers (latency sleeps, settlements, webhook retries) in one place, so that
 * close() stops them all at once.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<() => void>();
  private isClosed = false;

  get closed(): boolean {
    return this.isClosed;
  }

  /** Runs `task` after `ms` milliseconds, unless the sandbox closes first. */
  after(ms: number, task: () => void): void {
    if (this.isClosed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task();
    }, ms);
    this.timers.add(timer);
  }

  /** Resolves after `ms` milliseconds, or at once when the sandbox closes; check `closed` after. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.isClosed) return resolve();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.sleepers.delete(resolve);
        resolve();
      }, ms);
      this.timers.add(timer);
      this.sleepers.add(resolve);
    });
  }

  close(): void {
    this.isClosed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }
}

/** Counts unfinished background work (settlements, webhook deliveries) for `whenIdle()`. */
export class WorkTracker {
  private pending = 0;
  private waiters: Array<() => void> = [];

  start(): void {
    this.pending += 1;
  }

  done(): void {
    this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) this.flush();
  }

  /** Resolves when no work is pending (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops all pending work: the sandbox closed. */
  clear(): void {
    this.pending = 0;
    this.flush();
  }

  private flush(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
