/**
 * The register's records as both stores' rows hold them: the payout columns in one order, and
 * an event's row. The stores differ in how they query, never in what a record is.
 */
import type { EventRecord, StoredPayout } from './types.js';

/**
 * A payout as the register's queries read it: an array of these columns, in this order (raw
 * mode, or the packed look-up), and whether each may be NULL. Named rows cost libsql an object
 * with a key per column for each row, most of the time of a look-up of a whole sheet.
 */
export const PAYOUT_FIELDS = [
  ['reference', false],
  ['amount', false],
  ['currency', false],
  ['rail', false],
  ['payee', false],
  ['payee_hint', false],
  ['state', false],
  ['idempotency_key', false],
  ['beneficiary_id', true],
  ['recipient_id', true],
  ['simulation_id', true],
  ['transaction_id', true],
  ['error', true],
  ['run_id', false],
  ['sheet', false],
  ['paid_at', true],
  ['updated_at', false],
] as const;

/** A stored payout as the cells of PAYOUT_FIELDS, in their order. */
export function payoutCells(p: StoredPayout): (string | null)[] {
  return [
    p.reference,
    p.details.amount,
    p.details.currency,
    p.details.rail,
    p.details.payee,
    p.details.payeeHint,
    p.state,
    p.idempotencyKey,
    p.beneficiaryId ?? null,
    p.recipientId ?? null,
    p.simulationId ?? null,
    p.transactionId ?? null,
    p.error ?? null,
    p.runId,
    p.sheet,
    p.paidAt ?? null,
    p.updatedAt,
  ];
}

/** An event as both stores' rows hold it (SQLite keeps `success` as 0 or 1). */
export interface EventRow {
  integrator_id: string;
  resource_id: string;
  operation: string;
  success: number | boolean;
  message: string | null;
  occurred_at: string;
  received_at: string;
  payload: string;
}

export function eventOf(row: EventRow): EventRecord {
  return {
    integratorId: row.integrator_id,
    resourceId: row.resource_id,
    operation: row.operation,
    success: row.success === true || row.success === 1,
    message: row.message,
    occurredAt: row.occurred_at,
    receivedAt: row.received_at,
    payload: row.payload,
  };
}
