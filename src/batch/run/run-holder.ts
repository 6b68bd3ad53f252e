/**
 * This run in the register: its record and lease, its heartbeat, its claims, and whether
 * anything that may move money has left yet.
 */
import path from 'node:path';
import type { RateLimiter } from '../../api/rate.js';
import { type Cancel, type Clock, timersOf } from '../../clock.js';
import { detailsOf, type PayoutDetails } from '../../register/details.js';
import { transactionKey } from '../../register/identity.js';
import { LEASE, markLive, newSelf, type Self } from '../../register/lease.js';
import { LiveLock } from '../../register/live-lock.js';
import type { ClaimRequest, ScopeStore } from '../../register/types.js';
import { claimJudge, type RegisterVerdict } from '../../register/verdict.js';
import type { PreparedRow } from '../prepare.js';
import type { BatchSummary } from '../summary.js';

/**
 * This run in the register: its record, its heartbeat (so other runs know its claims are
 * held), and whether anything that may move money has left yet.
 */
export class RunHolder {
  readonly self: Self = newSelf();
  sentAnything = false;
  private stopBeating: Cancel | undefined;
  private finished = false;
  private lock: LiveLock | undefined;

  private constructor(
    readonly store: ScopeStore,
    private readonly retryUnknown: boolean,
  ) {}

  static async start(
    store: ScopeStore,
    options: { sheetPath: string; retryUnknown?: boolean },
    digest: string,
    clock: Clock,
    limiter: Pick<RateLimiter, 'share'>,
  ): Promise<RunHolder> {
    const holder = new RunHolder(store, options.retryUnknown ?? false);
    const { self } = holder;
    // Held before the run is known to anyone: on this host, whoever meets its claims asks this
    // lock whether it lives (register/live-lock.ts), and the kernel frees it when the run dies.
    holder.lock = LiveLock.acquire(self.runId);
    await store.beginRun({
      id: self.runId,
      sheet: path.basename(options.sheetPath),
      digest,
      host: self.host,
      pid: self.pid,
      ...(self.machine ? { machine: self.machine } : {}),
      ...(self.processStart ? { processStart: self.processStart } : {}),
      startedAt: new Date(clock.now()).toISOString(),
    });
    markLive(self.runId, true);
    // Each heartbeat renews the lease and re-reads how many runs share the integrator's --rate.
    const beat = () =>
      store.heartbeat(self.runId).then(
        ({ liveRuns }) => limiter.share(liveRuns),
        () => {},
      );
    await beat();
    holder.stopBeating = timersOf(clock).every(LEASE.heartbeatMs, beat, { unref: true });
    return holder;
  }

  /**
   * Claims the rows in one transaction and returns the register's verdict on each: two runs
   * never both hold one reference, and an abandoned send becomes `unknown`.
   */
  async claim(rows: readonly PreparedRow[]): Promise<Map<string, Claimed>> {
    const requests: ClaimRequest[] = [];
    const byReference = new Map<string, Claimed>();
    const scope = this.store.scope;
    for (const row of rows) {
      const details = detailsOf(row.payout, (canonical) => this.store.fingerprint(canonical));
      const reference = row.payout.reference;
      requests.push({ reference, details, idempotencyKey: transactionKey(scope, reference) });
      byReference.set(reference, { verdict: { kind: 'send' }, row, details });
    }
    const judge = claimJudge(this.self, this.retryUnknown);
    await this.store.claim(this.self.runId, requests, (request, record) => {
      const { verdict, decision } = judge(request, record);
      byReference.get(request.reference)!.verdict = verdict;
      return decision;
    });
    return byReference;
  }

  async finish(summary: BatchSummary, exitCode: number | undefined): Promise<void> {
    await this.store.finishRun(this.self.runId, {
      rows: summary.rows,
      statuses: summary.statusCounts(),
      ...(exitCode === undefined ? {} : { exitCode }),
    });
    this.finished = true;
  }

  /** Stops the heartbeat and gives back claims that sent nothing. */
  async close(): Promise<void> {
    this.stopBeating?.();
    markLive(this.self.runId, false);
    try {
      await this.store.release(this.self.runId);
      if (!this.finished) await this.store.finishRun(this.self.runId, {});
    } finally {
      this.lock?.release();
    }
  }
}

/** A row the register has given its verdict on. */
export interface Claimed {
  verdict: RegisterVerdict;
  row: PreparedRow;
  details: PayoutDetails;
}
