import type { Logger } from 'pino';
import type { PayoutsClient } from '../api/client.js';
import { type Clock, realSleep, type Sleep, systemClock } from '../clock.js';
import { PayoutsError } from '../errors.js';
import type { TransactionOutcome } from '../webhooks/reconcile.js';
import type { RowResult } from './summary.js';

type SentRow = RowResult & { rowNumber: number };

/** Records a settled outcome (the register): the row's transaction completed or failed. */
export type Settle = (reference: string, result: SentRow) => Promise<void>;

export interface WaitOptions {
  seconds: number;
  /**
   * When the wait ends (ms since the epoch), if not `seconds` from now: a run that checks its
   * transactions a chunk at a time gives every chunk the one deadline.
   */
  deadline?: number;
  logger: Logger;
  signal: AbortSignal;
  /** Pause between rounds of status checks (ms). */
  pollMs?: number;
  /** Time (tests drive it); the wall clock by default. */
  clock?: Clock;
  sleep?: Sleep;
}

/** What the service says of a transaction now: still pending, or its final state. */
export type TransactionState =
  | { state: 'pending' }
  | { state: 'completed' }
  | { state: 'failed'; reason: string };

/**
 * Asks the service for one transaction's state: the one status check `run --wait` and
 * `payouts reconcile` share.
 */
export async function askTransaction(
  client: PayoutsClient,
  transactionId: string,
  signal?: AbortSignal,
): Promise<TransactionState> {
  const transaction = await client.transactions.get(transactionId, signal ? { signal } : {});
  if (transaction.status === 'PENDING') return { state: 'pending' };
  if (transaction.status === 'COMPLETED') return { state: 'completed' };
  return { state: 'failed', reason: transaction.failureReason ?? 'the transaction failed' };
}

/**
 * The status check of `run --wait` (docs/sheets.md, `completed`: "a webhook or a status check
 * confirmed"):
 * asks the service for each transaction this run submitted until it is COMPLETED or FAILED,
 * or the time is up. Rows still pending stay `submitted`. Outcomes go to `settle` (the register).
 * Returns how many are still pending.
 */
export async function awaitOutcomes(
  client: PayoutsClient,
  settle: Settle,
  results: Map<string, SentRow>,
  options: WaitOptions,
): Promise<number> {
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? realSleep;
  const deadline = options.deadline ?? clock.now() + options.seconds * 1000;
  const pollMs = options.pollMs ?? 500;
  let pending = [...results.entries()].filter(([, r]) => r.status === 'submitted' && r.transactionId);
  while (pending.length > 0 && clock.now() < deadline && !options.signal.aborted) {
    const still: typeof pending = [];
    for (const [reference, result] of pending) {
      try {
        const now = await askTransaction(client, result.transactionId!, options.signal);
        if (now.state === 'pending') {
          still.push([reference, result]);
          continue;
        }
        result.status = now.state;
        if (now.state === 'failed') result.errors = [now.reason];
        await settle(reference, result);
      } catch (error) {
        // A status check that fails leaves the row `submitted`: the transaction exists.
        if (!(error instanceof PayoutsError)) throw error;
        options.logger.warn({ reference, error: error.message }, 'status check failed');
        still.push([reference, result]);
      }
    }
    pending = still;
    if (pending.length > 0) {
      // A stop ends the pause at once; the rows still pending stay submitted.
      await sleep(Math.min(pollMs, Math.max(0, deadline - clock.now())), options.signal).catch(() => {});
    }
  }
  return pending.length;
}

/**
 * Webhook confirmations (docs/sheets.md, `completed`: "a webhook ... confirmed"): outcomes that
 * `payouts webhooks listen --events FILE` recorded (readTransactionOutcomes) turn this run's
 * submitted rows, and rows an earlier run submitted, into completed or failed. Returns how many
 * rows changed.
 */
export async function applyWebhookOutcomes(
  outcomes: ReadonlyMap<string, TransactionOutcome>,
  settle: Settle,
  results: Map<string, SentRow>,
): Promise<number> {
  let changed = 0;
  for (const [reference, result] of results) {
    const outcome = result.transactionId ? outcomes.get(result.transactionId) : undefined;
    if (!outcome || !(result.status === 'submitted' || result.status === 'skipped')) continue;
    result.status = outcome.status;
    result.errors = outcome.status === 'failed' ? [outcome.message ?? 'the transaction failed'] : [];
    changed += 1;
    await settle(reference, result);
  }
  return changed;
}
