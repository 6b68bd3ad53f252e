/**
 * Reconciliation: what the webhook events say about transactions. The batch runner uses it to
 * turn `submitted` rows into `completed` or `failed` (docs/sheets.md "The results file", statuses).
 */
import type { WebhookPayload } from '../api/contract.js';
import { type ReadEventsOptions, readEvents } from './events-file.js';

/**
 * The operations that settle a transaction (the service names the first; the second is assumed:
 * docs/api-assumptions.md "Events").
 */
export const SETTLING_OPERATIONS = {
  completed: 'TRANSACTION_COMPLETED',
  failed: 'TRANSACTION_FAILED',
} as const;

/** What became of a transaction, by its webhook. */
export interface TransactionOutcome {
  status: 'completed' | 'failed';
  /** Why it failed (the event's `message`, else `data.failureReason`); the service's context otherwise. */
  message: string | null;
  operation: string;
  /** When the event occurred (`createdAt` of the webhook payload). */
  occurredAt: string;
  /** When payouts received it ('' for an event file put together by hand). */
  receivedAt: string;
}

/**
 * The outcome one event gives its transaction, or undefined when it does not settle one.
 * `success: false` is a failure whatever the operation (docs/service.md "Webhook payload": false
 * when it failed).
 */
export function transactionOutcomeOf(
  event: WebhookPayload,
  receivedAt = '',
): { transactionId: string; outcome: TransactionOutcome } | undefined {
  const { operation } = event;
  if (operation !== SETTLING_OPERATIONS.completed && operation !== SETTLING_OPERATIONS.failed)
    return undefined;
  const failed = operation === SETTLING_OPERATIONS.failed || !event.success;
  const reason = event.data['failureReason'];
  const message = nonEmpty(event.message) ?? (failed ? nonEmpty(reason) : null);
  return {
    // docs/service.md "Webhook payload": resourceId identifies the resource of the event, here
    // the transaction.
    transactionId: event.resourceId,
    outcome: {
      status: failed ? 'failed' : 'completed',
      message,
      operation,
      occurredAt: event.createdAt,
      receivedAt,
    },
  };
}

/**
 * Reads an events file (receiver.ts) into transactionId → outcome. A missing file gives an
 * empty map. When a transaction has more than one settling event, the one that occurred last
 * (`createdAt`) wins; the file's order breaks ties, since deliveries may arrive out of order.
 */
export async function readTransactionOutcomes(
  eventsFile: string,
  options: ReadEventsOptions = {},
): Promise<Map<string, TransactionOutcome>> {
  const outcomes = new Map<string, TransactionOutcome>();
  for await (const stored of readEvents(eventsFile, options)) {
    const settled = transactionOutcomeOf(stored.event, stored.receivedAt);
    if (settled === undefined) continue;
    const earlier = outcomes.get(settled.transactionId);
    if (earlier === undefined || occurredAtMs(settled.outcome) >= occurredAtMs(earlier)) {
      outcomes.set(settled.transactionId, settled.outcome);
    }
  }
  return outcomes;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/**
 * Webhook timestamps carry no zone (docs/service.md "Webhook payload"): all are read as UTC, so
 * they compare with each other.
 */
function occurredAtMs(outcome: TransactionOutcome): number {
  const text = outcome.occurredAt;
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}
