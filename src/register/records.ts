/**
 * A payout record as the register's queries read it: an array of its fields, which is what
 * libsql's raw mode and the packed look-up (sqlite.ts) give. Named rows cost libsql an object
 * with a key per column for each row, most of the time of a look-up of a whole sheet.
 */
import type { PayoutRecord, PayoutState, RunRecord } from './types.js';

/**
 * The fields of one record, in this order (nullable ones may be null): reference, amount,
 * currency, rail, payee, payeeHint, state, idempotencyKey, beneficiaryId?, recipientId?,
 * simulationId?, transactionId?, error?, runId, sheet, paidAt?, updatedAt.
 */
export const PAYOUT_FIELD_COUNT = 17;

/** Whether each field of a record may be null, in the order above. */
export const NULLABLE_FIELDS: readonly boolean[] = [
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  true,
  true,
  true,
  true,
  true,
  false,
  false,
  true,
  false,
];

/** The record of these fields. */
export function payoutOf(
  cells: readonly (string | null)[],
  runOf: (id: string) => RunRecord | undefined,
): PayoutRecord {
  const runId = cells[13] as string;
  const record: PayoutRecord = {
    reference: cells[0] as string,
    details: {
      amount: cells[1] as string,
      currency: cells[2] as string,
      rail: cells[3] as string,
      payee: cells[4] as string,
      payeeHint: cells[5] as string,
    },
    state: cells[6] as PayoutState,
    idempotencyKey: cells[7] as string,
    runId,
    sheet: cells[14] as string,
    updatedAt: cells[16] as string,
  };
  const [beneficiaryId, recipientId, simulationId, transactionId, error] = [
    cells[8],
    cells[9],
    cells[10],
    cells[11],
    cells[12],
  ];
  if (beneficiaryId != null) record.beneficiaryId = beneficiaryId;
  if (recipientId != null) record.recipientId = recipientId;
  if (simulationId != null) record.simulationId = simulationId;
  if (transactionId != null) record.transactionId = transactionId;
  if (error != null) record.error = error;
  const paidAt = cells[15];
  if (paidAt != null) record.paidAt = paidAt;
  const run = runOf(runId);
  if (run !== undefined) record.run = run;
  return record;
}
