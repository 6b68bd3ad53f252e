/**
 * The settle stage of `payouts run`: outcomes that became known after sending (webhook events
 * the register or a file recorded, `--wait`'s status checks) written into the spooled results.
 */
import type { PayoutsClient } from '../../api/client.js';
import { systemClock } from '../../clock.js';
import type { ScopeStore } from '../../register/types.js';
import { readTransactionOutcomes, transactionOutcomeOf } from '../../webhooks/reconcile.js';
import { applyWebhookOutcomes, awaitOutcomes, type Settle } from '../wait.js';
import type { RunOptions } from './options.js';
import type { ResultSpool } from './result-spool.js';
import type { SentRow } from './results.js';

/** A row's outcome, once known after sending, recorded in the register. */
export function settlerOf(store: ScopeStore): Settle {
  return (reference, result) =>
    store.settle(
      reference,
      result.transactionId!,
      result.status === 'completed' ? 'completed' : 'failed',
      result.status === 'failed' ? result.errors.join(' | ') : undefined,
    );
}

/**
 * Outcomes that became known after sending, read into the results a chunk at a time: what
 * `payouts webhooks listen` recorded in the register while this run sent, the events of
 * `--events FILE`, and with `--wait` the service's answers to status checks, every chunk within
 * the one deadline. The results stand without them: a register or a file that fails here is
 * logged, and the results file says what the sending knew.
 */
export async function settleAfterSending(
  options: RunOptions,
  client: PayoutsClient,
  store: ScopeStore,
  spool: ResultSpool,
  settle: Settle,
  signal: AbortSignal,
): Promise<void> {
  const { logger } = options;
  try {
    const outcomes = options.eventsFile ? await readTransactionOutcomes(options.eventsFile) : undefined;
    const deadline = options.waitSeconds ? systemClock.now() + options.waitSeconds * 1000 : undefined;
    let confirmed = 0;
    let pending = 0;
    await spool.rewrite(SETTLE_CHUNK, async (chunk) => {
      const results = new Map(chunk.map(({ reference, row }) => [reference, row]));
      await applyRecordedEvents(store, results, settle);
      if (outcomes) confirmed += await applyWebhookOutcomes(outcomes, settle, results);
      if (deadline !== undefined && !signal.aborted) {
        pending += await awaitOutcomes(client, settle, results, {
          seconds: options.waitSeconds!,
          deadline,
          logger,
          signal,
        });
      }
    });
    if (options.eventsFile)
      logger.info({ events: options.eventsFile, confirmed }, 'webhook outcomes applied');
    if (pending > 0) {
      logger.info({ pending }, 'transactions still pending when --wait ran out - they stay submitted');
    }
  } catch (error) {
    logger.warn(
      { err: error },
      'outcomes known after sending could not all be read: the results file says what the sending knew (payouts reconcile settles the rest)',
    );
  }
}

/** Results read, updated and written again at once after sending (settleAfterSending). */
const SETTLE_CHUNK = 1000;

/**
 * Outcomes that `payouts webhooks listen` recorded in the register while this run sent: the
 * run's submitted rows whose transactions a webhook settled become completed or failed.
 */
async function applyRecordedEvents(store: ScopeStore, results: Map<string, SentRow>, settle: Settle) {
  const submitted = [...results.entries()].filter(([, r]) => r.status === 'submitted' && r.transactionId);
  if (submitted.length === 0) return;
  const events = await store.settledEvents(submitted.map(([, r]) => r.transactionId!));
  for (const [reference, result] of submitted) {
    const event = events.get(result.transactionId!);
    if (!event) continue;
    const settled = transactionOutcomeOf(JSON.parse(event.payload));
    if (!settled) continue;
    result.status = settled.outcome.status;
    result.errors =
      settled.outcome.status === 'failed' ? [settled.outcome.message ?? 'the transaction failed'] : [];
    await settle(reference, result);
  }
}
