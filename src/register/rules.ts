/**
 * The state rules of the register, as pure functions both stores apply (SQLite and
 * PostgreSQL): what a claim writes over an earlier record, what an abandoned send becomes, and
 * which writes need the run's lease. The stores only read and write what these decide.
 */
import { isoAt } from '../clock.js';
import { ClaimLostError } from '../errors.js';
import { parseAmount } from '../rows/money.js';
import type {
  PayeeHistory,
  PayeeLayer,
  PayeePayday,
  PayeePayment,
  PayoutChange,
  PayoutRecord,
  PayoutState,
} from './types.js';

/** What a claim writes for a reference, given what the register held for it. */
export interface ClaimedState {
  state: 'claimed' | 'sending';
  /** The simulation and transaction ids kept from the earlier record (undefined: cleared). */
  simulationId?: string;
  transactionId?: string;
}

/**
 * A payout in doubt (`sending`, `unknown`) stays in doubt while its new holder sends it again:
 * were that run to die before its request, the next must not take it for one that never left.
 * Anything else starts afresh.
 */
export function claimedState(previous: PayoutRecord | undefined): ClaimedState {
  if (previous !== undefined && inDoubt(previous.state)) {
    return {
      state: 'sending',
      ...(previous.simulationId !== undefined ? { simulationId: previous.simulationId } : {}),
      ...(previous.transactionId !== undefined ? { transactionId: previous.transactionId } : {}),
    };
  }
  return { state: 'claimed' };
}

/** A state whose transaction request may have left without an answer that settles it. */
export function inDoubt(state: PayoutState): boolean {
  return IN_DOUBT.includes(state);
}

/** The reason stored on a send whose run stopped while its request may have been under way. */
export function abandonedSendReason(sheet: string): string {
  return `the run of ${sheet} stopped while this transaction request was being sent`;
}

/**
 * Whether a write needs the run's lease, not only its claim. A write that comes before a request
 * (the intent to send) is refused once the lease expired: another run may be deciding this very
 * moment that the claim is abandoned. A write that records an answer is never refused for a late
 * lease: the answer is the truth about money that moved.
 */
export function needsLease(change: PayoutChange): boolean {
  return change.state === 'sending' || change.state === 'claimed';
}

/** A write that records the service's answer to a transaction request: its transaction id. */
export function isAnswer(change: PayoutChange): boolean {
  return !needsLease(change) && change.transactionId !== undefined;
}

/**
 * What a fenced write of a payout requires, decided once for both stores: that the run still
 * holds it, and for the intent to send that its lease is live too. An answer to a request that
 * left may also land on a payout another run took over since, while it is still in doubt: the
 * same Idempotency-Key gets the same transaction whichever run sent it.
 */
export interface Fence {
  runId: string;
  /** The run must hold a live lease (and not have finished). */
  lease: boolean;
  /** Or the payout is in one of these states, whichever run holds it. */
  orIn: readonly PayoutState[];
}

/** The fence of a change that `runId` writes. */
export function fenceOf(runId: string, change: PayoutChange): Fence {
  return { runId, lease: needsLease(change), orIn: isAnswer(change) ? IN_DOUBT : [] };
}

/** What a store read before a fenced write: the payout's holder and state, the writer's lease. */
export interface FenceFacts {
  holder: string;
  state: PayoutState;
  /** Whether the writing run is unfinished and its lease live (lease.ts leaseExpired). */
  leaseHeld: boolean;
}

/** Whether a fenced write may land on a payout as the store found it (undefined: none). */
export function fenceAdmits(fence: Fence, facts: FenceFacts | undefined): boolean {
  if (facts === undefined) return false;
  if (facts.holder === fence.runId && (!fence.lease || facts.leaseHeld)) return true;
  return fence.orIn.includes(facts.state);
}

/** The states `inDoubt` names, for a store's query. */
export const IN_DOUBT: readonly PayoutState[] = ['sending', 'unknown'];

/** States a webhook or status check may settle: the transaction exists. */
export const SETTLEABLE: readonly PayoutState[] = ['submitted', 'completed', 'failed'];

/** The register's column of each field of a PayoutChange (both stores name them alike). */
export const CHANGE_FIELDS: Record<keyof PayoutChange, string> = {
  state: 'state',
  beneficiaryId: 'beneficiary_id',
  recipientId: 'recipient_id',
  simulationId: 'simulation_id',
  transactionId: 'transaction_id',
  error: 'error',
  payeeKey: 'payee_key',
  payeeName: 'payee_name',
  warnings: 'warnings',
};

/** A fenced write found the payout held by another run (or this run's lease ran out). */
export function claimLost(
  reference: string,
  runId: string,
  current: PayoutRecord | undefined,
): ClaimLostError {
  return new ClaimLostError(
    reference,
    `the register no longer lets this run send payout ${JSON.stringify(reference.slice(0, 80))}: ${holderText(runId, current)}, so this run stops sending (run again to resume)`,
  );
}

/** Who holds a payout now, as a person reads it: the run's sheet, host and start. */
export function holderText(runId: string, current: PayoutRecord | undefined): string {
  if (current === undefined || current.runId === runId)
    return "this run's lease ran out (it was silent for too long)";
  const holder = current.run;
  return holder === undefined
    ? `another run holds it now (${current.runId})`
    : `the run of ${holder.sheet} on ${holder.host} started ${holder.startedAt} holds it now`;
}

/**
 * When a payout in doubt that reconcile found on the service was paid: when the service created
 * its transaction (`createdAt`), as the register writes times. Not when reconcile found it, days
 * later maybe: its payee's history would date it then, and a payout of the same amount soon after
 * that date would be taken for a possible duplicate. Undefined when the answer gave no readable
 * time, or one later than `now` (a clock ahead of the register's): the store then keeps the last
 * time the register heard of the send, which is at or after its request left and before now.
 * A time without a zone designator is UTC, as the service writes its webhooks' times, never the
 * time zone of the machine that happens to run reconcile.
 */
export function sentAt(createdAt: string | undefined, now: string): string | undefined {
  const parts = createdAt === undefined ? null : ISO_DATE_TIME.exec(createdAt);
  if (parts === null) return undefined;
  const time = Date.parse(parts[2] === undefined ? `${createdAt}Z` : createdAt!);
  if (Number.isNaN(time) || time > Date.parse(now)) return undefined;
  return isoAt(time);
}

/** An ISO 8601 date and time, its zone (Z or an offset) the second group when it has one. */
const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:\d{2})?$/;

/** Accounts remembered per payee: enough for the few a person or supplier is paid to. */
export const PAYEE_ACCOUNTS_KEPT = 8;

/**
 * Paydays remembered per payee, to any account: a year of a monthly payee, three months of a
 * weekly one; enough for a usual interval, and a bound on what a history costs.
 */
export const PAYEE_PAYMENTS_KEPT = 12;

/**
 * A payee's history with one more payout of `batch`. The first payout of a batch keeps what
 * stood before it; later ones of the same batch stack on it and keep the same `before`.
 * Accounts and paydays stay newest first by when they were paid, not by when the register
 * learnt of them: an outcome `reconcile` learns weeks later files its payout under its own date,
 * behind the payouts made since (and an account paid since keeps that later payout as its last).
 */
export function withPayment(
  history: PayeeHistory | undefined,
  payment: PayeePayment,
  batch: string,
  name?: string,
): PayeeHistory {
  const current = history === undefined ? undefined : layerOf(history);
  const before = history === undefined ? undefined : history.batch === batch ? history.before : current;
  const largest = { ...current?.largest };
  const top = largest[payment.currency];
  if (top === undefined || minorOf(payment.amount) > minorOf(top)) largest[payment.currency] = payment.amount;
  const accounts = current?.accounts ?? [];
  const held = accounts.find((paid) => paid.account === payment.account);
  const last =
    held !== undefined && held.reference !== payment.reference && paidTime(held) > paidTime(payment)
      ? held
      : payment;
  const others = accounts.filter((paid) => paid.account !== payment.account);
  const earlier =
    current === undefined ? [] : paymentsOf(current).filter((paid) => paid.reference !== payment.reference);
  return {
    accounts: inTimeOrder(others, last).slice(0, PAYEE_ACCOUNTS_KEPT),
    payments: inTimeOrder(earlier, paydayOf(payment)).slice(0, PAYEE_PAYMENTS_KEPT),
    largest,
    batch,
    ...(before ? { before } : {}),
    ...(name !== undefined ? { name } : history?.name !== undefined ? { name: history.name } : {}),
  };
}

/**
 * A payee's history without a payout that turned out to have failed (or been returned): a failed
 * payout does not make its account a known one, nor count as a payday or a largest amount. Taken
 * out of what stood before the batch too. Only the failed payout's own part goes: an account it
 * was the last payout to stays known through the latest other payday to it the history keeps.
 */
export function withoutPayment(history: PayeeHistory, reference: string): PayeeHistory {
  const { before, ...rest } = history;
  const current = layerWithout(layerOf(history), reference);
  return {
    ...rest,
    ...current,
    ...(before !== undefined ? { before: layerWithout(before, reference) } : {}),
  };
}

function layerWithout(layer: PayeeLayer, reference: string): PayeeLayer {
  const kept = paymentsOf(layer);
  const payments = kept.filter((paid) => paid.reference !== reference);
  const accounts = layer.accounts
    .flatMap((paid): PayeePayment[] => {
      if (paid.reference !== reference) return [paid];
      // The account stays known through its latest other payday, now its last payout. Paydays
      // written before they kept their account's tag match none: the account is then taken for
      // a new one at its next payout, which errs on the safe side.
      const tag = accountTag(paid.account);
      const next = payments.find((payday) => paydayTag(payday) === tag);
      if (next === undefined) return [];
      const { reference: ref, paidAt, amount, currency } = next;
      return [{ ...paid, reference: ref, paidAt, amount, currency }];
    })
    .sort(newestFirst);
  const largest = { ...layer.largest };
  const removed =
    kept.find((paid) => paid.reference === reference) ??
    layer.accounts.find((paid) => paid.reference === reference);
  const top = removed === undefined ? undefined : largest[removed.currency];
  if (removed !== undefined && top !== undefined && minorOf(top) === minorOf(removed.amount)) {
    // The largest is recomputed from what is remembered: older payouts past the bound are gone.
    const left = [...payments, ...accounts].filter((paid) => paid.currency === removed.currency);
    if (left.length === 0) delete largest[removed.currency];
    else
      largest[removed.currency] = left.reduce((most, paid) =>
        minorOf(paid.amount) > minorOf(most.amount) ? paid : most,
      ).amount;
  }
  return { accounts, payments, largest };
}

/**
 * The history a row of `batch` (its sheet's tag) is compared with: as it stood before that
 * batch paid anything, so a run resumed after paying some rows warns exactly as the first did
 * (and the batch digest stays the same). Undefined: a payee never paid before.
 */
export function historyFor(
  history: PayeeHistory | undefined,
  batch: string | undefined,
): PayeeLayer | undefined {
  if (history === undefined) return undefined;
  return history.batch === batch ? history.before : layerOf(history);
}

function layerOf(history: PayeeHistory): PayeeLayer {
  return {
    accounts: history.accounts,
    ...(history.payments ? { payments: history.payments } : {}),
    largest: history.largest,
  };
}

/** A payee's latest paydays, newest first; a history from before they were kept has its accounts' last. */
export function paymentsOf(layer: PayeeLayer): readonly PayeePayday[] {
  return layer.payments ?? layer.accounts;
}

/** Characters of an account's keyed hash a payday keeps (PayeePayday.accountTag). */
export const ACCOUNT_TAG_LENGTH = 8;

/**
 * What a payday keeps of the account paid: 8 characters of its keyed hash (48 bits) tell apart
 * the few accounts of one payee, at a fraction of the cost of the full hash in each payday.
 */
export function accountTag(account: string): string {
  return account.slice(0, ACCOUNT_TAG_LENGTH);
}

/** The tag of the account a payday paid; undefined for a payday written before paydays kept it. */
export function paydayTag(payday: PayeePayday): string | undefined {
  return payday.accountTag ?? (payday.account === undefined ? undefined : accountTag(payday.account));
}

function paydayOf(payment: PayeePayment): PayeePayday {
  return {
    reference: payment.reference,
    paidAt: payment.paidAt,
    amount: payment.amount,
    currency: payment.currency,
    accountTag: accountTag(payment.account),
  };
}

/** `list` (newest first) with `item` in its place by when it was paid; before any of the same time. */
function inTimeOrder<T extends PayeePayday>(list: readonly T[], item: T): T[] {
  const at = paidTime(item);
  const index = list.findIndex((paid) => paidTime(paid) <= at);
  return index < 0 ? [...list, item] : [...list.slice(0, index), item, ...list.slice(index)];
}

/** Compares two payouts for a newest-first sort by when they were paid. */
function newestFirst(a: PayeePayday, b: PayeePayday): number {
  const [at, bt] = [paidTime(a), paidTime(b)];
  return at === bt ? 0 : at > bt ? -1 : 1;
}

/** When a payout was paid, in ms; an unreadable date counts as the oldest. */
function paidTime(paid: PayeePayday): number {
  const time = Date.parse(paid.paidAt);
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time;
}

/** Minor units of a decimal text the register wrote; an unreadable one counts as nothing. */
export function minorOf(amount: string): bigint {
  const parsed = parseAmount(amount);
  return parsed.ok ? parsed.minor : 0n;
}
