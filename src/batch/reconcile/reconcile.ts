/**
 * `payouts reconcile` (docs/register.md "Month-end: `payouts reconcile`"): asks the service what
 * became of every payout the register holds as `submitted` (its transaction's final state) or
 * `unknown` (the transaction its reference created, or proof that none exists), and records it;
 * `unknown` too is one whose run stopped while its transaction request was being sent.
 * Rate-controlled by the client, at most `concurrency` look-ups in flight, each recorded as it is
 * learnt: a stopped reconcile is resumed by running it again.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { createClient, type PayoutsClient } from '../../api/client.js';
import { ServiceError } from '../../errors.js';
import type { PayoutDetails } from '../../register/details.js';
import { serviceOf } from '../../register/identity.js';
import { holderAlive, newSelf, type Self } from '../../register/lease.js';
import { type RegisterSource, shownLocation } from '../../register/location.js';
import { openRegister } from '../../register/open.js';
import type { PayoutRecord, Register, ScopeStore, UnknownResolved } from '../../register/types.js';
import { parseAmount } from '../../rows/money.js';
import { type Connection, scopeOf, whoAmI } from '../service-scope.js';
import { STOP_GRACE_MS, StopGrace } from '../stop-grace.js';
import { BatchSummary } from '../summary.js';
import { askTransaction } from '../wait.js';

export interface ReconcileOptions {
  connection: Connection;
  /** Where the register lives (a file or a PostgreSQL URL). */
  register: string;
  /** Which of --register, PAYOUTS_REGISTER and the default named it. */
  registerFrom?: RegisterSource;
  /** Only these references (default: every `submitted` and `unknown` payout). */
  references?: readonly string[];
  /** Only payouts sent or changed since this moment (ISO 8601). */
  since?: string;
  concurrency: number;
  rate?: number;
  maxOutageSeconds?: number;
  logger: Logger;
  signal?: AbortSignal;
  /** Replaces the client (tests). */
  client?: PayoutsClient;
}

/** What reconcile learnt of a payout, as the summary lists it. */
export type Outcome = 'completed' | 'failed' | 'pending' | 'unknown' | 'absent' | 'skipped';

export interface ReconciledPayout {
  reference: string;
  outcome: Outcome;
  /** Absent for a reference the register does not hold. */
  amount?: string;
  currency?: string;
  transactionId?: string;
  /** Why it failed, stays unknown, or was skipped. */
  message?: string;
}

export interface ReconcileReport {
  register: string;
  service: string;
  integratorId: string;
  /** Count per outcome. */
  counts: Record<Outcome, number>;
  /** Amount per outcome and currency, in minor units. */
  totals: Record<Outcome, Map<string, bigint>>;
  /** Every payout that failed, stays unknown or was skipped, with why. */
  attention: ReconciledPayout[];
  interrupted: boolean;
  /** The service stayed unavailable past --max-outage: what was not asked stays as it was. */
  unavailable: boolean;
  /**
   * When nothing awaited an outcome (none in doubt, none named): how many payouts of the scope
   * (since `--since`) are final already, so that "nothing to reconcile" is not read as "nothing paid".
   */
  alreadyFinal?: number;
}

/** Payouts read from the register per page. */
const PAGE = 500;

/** Reconciles the register's payouts with the service. Throws for refused credentials (exit 3). */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const signal = options.signal ?? new AbortController().signal;
  const client = options.client ?? clientOf(options, signal);
  let register: Register | undefined;
  // A register that fails is waited through for --max-outage, as the service is; a stop past
  // its grace abandons its operations (docs/register.md "When the register fails").
  const grace = new StopGrace(signal, undefined, STOP_GRACE_MS);
  try {
    register = await openRegister(options.register, {
      ...(options.registerFrom ? { from: options.registerFrom } : {}),
      warn: (message) => options.logger.warn(message),
      ...(options.maxOutageSeconds === undefined ? {} : { maxOutageMs: options.maxOutageSeconds * 1000 }),
      abandon: grace.abandoned,
      // A stop while another process holds the register locked ends the wait at once (exit 5).
      stop: signal,
      onOutage: (words) =>
        options.logger.warn(
          `the register does not answer (${words}): waiting for it, for up to --max-outage`,
        ),
    });
    const integratorId = await whoAmI(client, signal, options.connection);
    const service = serviceOf(options.connection.baseUrl);
    const report = emptyReport(options, service, integratorId ?? '');
    const stopped = () => signal.aborted || client.breaker.gaveUp;
    let store: ScopeStore | undefined;
    if (integratorId !== undefined) {
      store = await register.openScope(await scopeOf(register, { service, integratorId }, {}));
      await settleScope(options, client, store, report, { signal, stopped });
    }
    report.interrupted = signal.aborted;
    report.unavailable = client.breaker.gaveUp;
    const asked = Object.values(report.counts).some((n) => n > 0);
    if (store !== undefined && !asked && !stopped() && !options.references?.length)
      report.alreadyFinal = await countFinal(store, options.since);
    return report;
  } finally {
    await register?.close().catch(() => {});
    if (!options.client) await client.close();
    grace.dispose();
  }
}

/** The client of the payments service, with reconcile's rate, concurrency, stop and outage budget. */
function clientOf(options: ReconcileOptions, signal: AbortSignal): PayoutsClient {
  return createClient({
    ...options.connection,
    rate: options.rate,
    concurrency: options.concurrency,
    logger: options.logger,
    stopSignal: signal,
    ...(options.maxOutageSeconds === undefined
      ? {}
      : { breaker: { maxOutageMs: options.maxOutageSeconds * 1000 } }),
  });
}

/** A report with nothing counted yet. */
function emptyReport(options: ReconcileOptions, service: string, integratorId: string): ReconcileReport {
  return {
    register: shownLocation(options.register),
    service,
    integratorId,
    counts: { completed: 0, failed: 0, pending: 0, unknown: 0, absent: 0, skipped: 0 },
    totals: {
      completed: new Map(),
      failed: new Map(),
      pending: new Map(),
      unknown: new Map(),
      absent: new Map(),
      skipped: new Map(),
    },
    attention: [],
    interrupted: false,
    unavailable: false,
  };
}

/** Every payout awaiting an outcome (or named) asked of the service, a page at a time. */
async function settleScope(
  options: ReconcileOptions,
  client: PayoutsClient,
  store: ScopeStore,
  report: ReconcileReport,
  { signal, stopped }: { signal: AbortSignal; stopped: () => boolean },
): Promise<void> {
  const note: Note = (payout, outcome, extra = {}) => {
    const entry: ReconciledPayout = {
      reference: payout.reference,
      outcome,
      ...(payout.details ? { amount: payout.details.amount, currency: payout.details.currency } : {}),
      ...(payout.transactionId ? { transactionId: payout.transactionId } : {}),
      ...extra,
    };
    report.counts[outcome] += 1;
    const minor = entry.amount === undefined ? undefined : parseAmount(entry.amount);
    if (minor?.ok && entry.currency) BatchSummary.add(report.totals[outcome], entry.currency, minor.minor);
    if (outcome === 'failed' || outcome === 'unknown' || outcome === 'skipped') report.attention.push(entry);
  };
  const limit = pLimit(options.concurrency);
  const self = newSelf();
  for await (const page of targets(store, options, note, self)) {
    if (stopped()) break;
    await Promise.all(
      page.map((payout) =>
        limit(async () => {
          if (stopped()) return;
          await settleOne(client, store, payout, note, signal, self);
        }),
      ),
    );
  }
}

/** Records what became of a payout; one not in the register has a reference alone. */
type Note = (
  payout: Pick<PayoutRecord, 'reference' | 'transactionId'> & {
    details?: Pick<PayoutDetails, 'amount' | 'currency'>;
  },
  outcome: Outcome,
  extra?: Partial<ReconciledPayout>,
) => void;

/**
 * The payouts to ask about, a page at a time: those named, or every one in doubt or under way.
 * In doubt too is one whose run stopped while its transaction request was being sent (still
 * `sending`, its run dead): `unknown` as the next run would make it, asked about as such.
 */
async function* targets(
  store: ScopeStore,
  options: ReconcileOptions,
  note: Note,
  self: Self,
): AsyncGenerator<PayoutRecord[]> {
  if (options.references !== undefined && options.references.length > 0) {
    const found = await store.lookup(options.references);
    const page: PayoutRecord[] = [];
    for (const reference of options.references) {
      const payout = found.get(reference);
      if (payout === undefined) {
        note({ reference }, 'skipped', { message: 'not in the register of this service and integrator' });
      } else if (inDoubt(payout, self)) page.push(payout);
      else if (payout.state === 'completed' || payout.state === 'failed') note(payout, payout.state);
      else if ((payout.state === 'sending' || payout.state === 'claimed') && holderAlive(payout.run, self))
        note(payout, 'skipped', {
          message: `a run of ${payout.sheet} is sending it now: that run records its outcome`,
        });
      else if (payout.state === 'claimed')
        note(payout, 'skipped', {
          message: `nothing to ask the service: the run of ${payout.sheet} stopped before sending it, and the next run sends it`,
        });
      else
        note(payout, 'skipped', {
          message: `nothing to ask the service: the register holds it as ${payout.state}`,
        });
    }
    yield page;
    return;
  }
  for (let after: string | undefined; ; ) {
    const page = await store.payoutsIn({
      states: ['submitted', 'unknown', 'sending'],
      ...(options.since ? { since: options.since } : {}),
      ...(after !== undefined ? { after } : {}),
      limit: PAGE,
    });
    if (page.length === 0) return;
    yield page.filter((payout) => inDoubt(payout, self));
    after = page.at(-1)!.reference;
  }
}

/** How many payouts of the scope are completed or failed (since `since`), a page at a time. */
async function countFinal(store: ScopeStore, since: string | undefined): Promise<number> {
  let count = 0;
  for (let after: string | undefined; ; ) {
    const page = await store.payoutsIn({
      states: ['completed', 'failed'],
      ...(since ? { since } : {}),
      ...(after !== undefined ? { after } : {}),
      limit: PAGE,
    });
    count += page.length;
    if (page.length < PAGE) return count;
    after = page.at(-1)!.reference;
  }
}

/** Whether reconcile asks about a payout: submitted, unknown, or sent by a run that stopped. */
function inDoubt(payout: PayoutRecord, self: Self): boolean {
  if (payout.state === 'sending') return !holderAlive(payout.run, self);
  return payout.state === 'submitted' || payout.state === 'unknown';
}

/** Asks the service about one payout and records what it said. */
async function settleOne(
  client: PayoutsClient,
  store: ScopeStore,
  payout: PayoutRecord,
  note: Note,
  signal: AbortSignal,
  self: Self,
): Promise<void> {
  try {
    if (payout.state === 'submitted' && payout.transactionId) {
      const now = await askTransaction(client, payout.transactionId, signal);
      if (now.state === 'pending') return note(payout, 'pending');
      const reason = now.state === 'failed' ? now.reason : undefined;
      await store.settle(payout.reference, payout.transactionId, now.state, reason);
      return note(payout, now.state, reason ? { message: reason } : {});
    }
    // Its run stopped while sending it: in doubt, as the next run would record it first.
    if (payout.state === 'sending' && !(await store.abandonSend(payout.reference, self))) {
      return note(payout, 'skipped', {
        message: 'a run took it up while reconcile asked: that run settles it',
      });
    }
    // In doubt: did its request create a transaction? The reference is on every transaction.
    const found = (await client.transactions.findByReference(payout.reference, { signal }))[0];
    const resolved: UnknownResolved =
      found === undefined
        ? {
            absent: true,
            reason:
              'reconcile found no transaction for this reference on the service: it was never created, so the next run sends it again under the same Idempotency-Key',
          }
        : {
            transactionId: found.id,
            state:
              found.status === 'PENDING'
                ? 'submitted'
                : found.status === 'COMPLETED'
                  ? 'completed'
                  : 'failed',
            ...(found.status === 'FAILED' ? { error: found.failureReason ?? 'the transaction failed' } : {}),
            // When it was paid: the transaction's creation, not this reconcile (rules.ts sentAt).
            ...(typeof found.createdAt === 'string' ? { createdAt: found.createdAt } : {}),
          };
    if (!(await store.resolveUnknown(payout.reference, resolved))) {
      return note(payout, 'skipped', {
        message: 'a run took it up while reconcile asked: that run settles it',
      });
    }
    if ('absent' in resolved) return note(payout, 'absent', { message: resolved.reason });
    const outcome: Outcome = resolved.state === 'submitted' ? 'pending' : resolved.state;
    return note(payout, outcome, {
      transactionId: resolved.transactionId,
      ...(resolved.error ? { message: resolved.error } : {}),
    });
  } catch (error) {
    if (signal.aborted || client.breaker.gaveUp) return;
    const message =
      error instanceof ServiceError && error.status === 404
        ? `the service does not know transaction ${payout.transactionId ?? ''}: ${error.message}`
        : error instanceof Error
          ? error.message
          : String(error);
    note(payout, payout.state === 'unknown' ? 'unknown' : 'skipped', { message });
  }
}
