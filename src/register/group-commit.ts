/**
 * The register's writes, for both stores: the writes of one tick share one transaction (group
 * commit), each in a savepoint so that one failing on its own (a bug, a constraint) does not undo
 * the others; groups commit one after another, in the order they were made. A write resolves with
 * its result once its transaction committed; a group whose transaction fails rejects every write
 * of it. A write atomic on its own may instead go out alone, at once (`alone`), where a round
 * trip is what a write costs and the server groups concurrent commits itself.
 */
import { type Driver, type Sql, savepoint, transaction } from './sql.js';

interface QueuedWrite {
  apply: (sql: Sql) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  private closed = false;
  /** The groups committed so far, in order: the next one waits for the last. */
  private committing: Promise<void> = Promise.resolve();
  /** Writes under way outside the queue, which close() waits for. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly driver: Driver,
    private readonly location: string,
    private readonly readonly: boolean,
  ) {}

  /** Queues a write (or, `alone`, runs it at once); resolves with its result once durable. */
  write<T>(apply: (sql: Sql) => Promise<T>, { alone = false } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`register ${this.location} is closed`));
    if (this.readonly) return Promise.reject(new Error(`register ${this.location} was opened read-only`));
    if (alone) return this.track(this.driver.connection(apply));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.committing = this.committing.then(() => this.commit());
        });
      }
    });
  }

  /**
   * Runs `work` in a transaction of its own, outside the queue, on a connection of its own (a
   * PostgreSQL claim under the scope's lock; a store of one connection claims in the queue).
   */
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.readonly) return Promise.reject(new Error(`register ${this.location} was opened read-only`));
    return this.track(transaction(this.driver, work));
  }

  /** Waits for the writes queued and under way, then refuses more. */
  async close(): Promise<void> {
    if (this.queue.length > 0 && !this.scheduled) this.committing = this.committing.then(() => this.commit());
    await new Promise((resolve) => setImmediate(resolve));
    await this.committing;
    await Promise.allSettled([...this.running]);
    this.closed = true;
  }

  private track<T>(write: Promise<T>): Promise<T> {
    const run = write.catch((error: unknown) => {
      throw this.driver.failure('cannot be written', error);
    });
    this.running.add(run);
    const forget = () => this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  private async commit(): Promise<void> {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await transaction(this.driver, async (sql) => {
        // Afresh on each attempt: a transaction the register failed in runs again (outage.ts).
        results.length = 0;
        for (const write of group) {
          try {
            results.push({ ok: true, value: await savepoint(sql, () => write.apply(sql)) });
          } catch (error) {
            results.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      const failure = this.driver.failure('cannot be written', error);
      for (const write of group) write.reject(failure);
      return;
    }
    group.forEach((write, i) => {
      const result = results[i]!;
      if (result.ok) write.resolve(result.value);
      else write.reject(this.driver.failure('cannot be written', result.error));
    });
  }
}
