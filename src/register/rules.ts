/**
 * The state rules of the register, as pure functions both stores apply (SQLite and
 * PostgreSQL): what a claim writes over an earlier record, what an abandoned send becomes, and
 * which writes need the run's lease. The stores only read and write what these decide.
 */
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
  const others = (current?.accounts ?? []).filter((paid) => paid.account !== payment.account);
  const earlier =
    current === undefined ? [] : paymentsOf(current).filter((paid) => paid.reference !== payment.reference);
  return {
    accounts: [payment, ...others].slice(0, PAYEE_ACCOUNTS_KEPT),
    payments: [paydayOf(payment), ...earlier].slice(0, PAYEE_PAYMENTS_KEPT),
    largest,
    batch,
    ...(before ? { before } : {}),
    ...(name !== undefined ? { name } : history?.name !== undefined ? { name: history.name } : {}),
  };
}

/**
 * A payee's history without a payout that turned out to have failed (or been returned): a failed
 * payout does not make its account a known one, nor count as a payday or a largest amount. Taken
 * out of what stood before the batch too. The account it paid is known again only through another
 * payout to it that the history still holds.
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
  const payments = paymentsOf(layer).filter((paid) => paid.reference !== reference);
  // An account whose last payout failed is not a known one any more (its earlier payouts are not
  // kept per account): the next payout to it is said to be a change, which errs on the safe side.
  const accounts = layer.accounts.filter((paid) => paid.reference !== reference);
  const largest = { ...layer.largest };
  const removed = paymentsOf(layer).find((paid) => paid.reference === reference);
  if (removed !== undefined && largest[removed.currency] === removed.amount) {
    // The largest is recomputed from what is remembered: older payouts past the bound are gone.
    const left = payments.filter((paid) => paid.currency === removed.currency);
    if (left.length === 0) delete largest[removed.currency];
    else
      largest[removed.currency] = left.reduce((top, paid) =>
        minorOf(paid.amount) > minorOf(top.amount) ? paid : top,
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
  return layer.payments ?? layer.accounts.map(paydayOf);
}

function paydayOf(payment: PayeePayday): PayeePayday {
  return {
    reference: payment.reference,
    paidAt: payment.paidAt,
    amount: payment.amount,
    currency: payment.currency,
  };
}

/** Minor units of a decimal text the register wrote; an unreadable one counts as nothing. */
export function minorOf(amount: string): bigint {
  const parsed = parseAmount(amount);
  return parsed.ok ? parsed.minor : 0n;
}
