/**
 * What the register's verdict on a row (register/verdict.ts) makes of it in the results file:
 * the status and a message that says when, from which sheet and with which transaction, in
 * words a finance person can act on. Used by `run` and `validate` alike.
 */
import { describeDetails, type PayoutDetails } from '../register/details.js';
import type { PayoutRecord } from '../register/types.js';
import type { RegisterVerdict } from '../register/verdict.js';
import type { RowResult } from './summary.js';

/** A row's result columns when the register decides it (the same columns as a sent row's). */
export type EarlierResult = RowResult;

/** The result a verdict gives a row with these details; undefined for `send` and `resend`. */
export function earlierResult(verdict: RegisterVerdict, details: PayoutDetails): EarlierResult | undefined {
  if (verdict.kind === 'send' || verdict.kind === 'resend') return undefined;
  const { record } = verdict;
  const ids = idsOf(record);
  switch (verdict.kind) {
    case 'paid':
      return {
        status: 'skipped',
        errors: [
          `already paid: ${record.state} on ${when(record)} from sheet ${record.sheet} as transaction ${record.transactionId ?? '?'}${byRun(record)}, so it was not sent again`,
        ],
        ...ids,
      };
    case 'conflict':
      return {
        status: 'invalid',
        errors: [
          `reference ${record.reference} was already used for other details: ${stateWords(record)} on ${when(record)} from sheet ${record.sheet}${txText(record)} with ${describeDetails(record.details)}, and this row has ${describeDetails(details)}. Nothing was sent: a new payout needs a new reference`,
        ],
        ...ids,
      };
    case 'failed':
      return {
        status: 'failed',
        errors: [
          `transaction ${record.transactionId ?? '?'} of this reference failed on ${when(record)} (sheet ${record.sheet})${record.error ? `: ${record.error}` : ''}. It is not sent again: to pay it, fix the recipient and add the payout under a new reference`,
        ],
        ...ids,
      };
    case 'unknown':
      return { status: 'unknown', errors: [unknownText(record)], ...ids };
    case 'busy': {
      const run = record.run;
      const who = run
        ? `pid ${run.pid} on ${run.host}, sheet ${run.sheet}, started ${toSecond(run.startedAt)}`
        : record.sheet;
      return {
        status: 'skipped',
        errors: [
          `not sent: another payouts run is paying this reference right now (${who}): run again after it ends to see its outcome`,
        ],
        ...ids,
      };
    }
  }
}

/**
 * Why the outcome is unknown. A run that recorded its answer (a cut connection, a 5xx, a key the
 * service had bound to another request) said why, and its advice fits that cause: "the run
 * stopped" is only true of a request left in flight (`sending`) by a run that died.
 */
function unknownText(record: PayoutRecord): string {
  if (record.state === 'unknown' && record.error) {
    return `an earlier run of sheet ${record.sheet} sent the transaction request on ${when(record)} and its outcome is unknown: ${record.error}`;
  }
  return `the transaction request was being sent when an earlier run of sheet ${record.sheet} stopped (${when(record)}), so its outcome is unknown: check the payments dashboard, or run again with --retry-unknown to re-send it with the same Idempotency-Key (the service then answers with the existing transaction instead of paying twice)`;
}

/** Which run paid it, where the register still has that run: its host and start. */
function byRun(record: PayoutRecord): string {
  const run = record.run;
  return run ? ` by the run on ${run.host} started ${run.startedAt.replace(/\.\d+Z$/, 'Z')}` : '';
}

function idsOf(record: PayoutRecord): Omit<EarlierResult, 'status' | 'errors'> {
  const ids: Omit<EarlierResult, 'status' | 'errors'> = {};
  if (record.beneficiaryId) ids.beneficiaryId = record.beneficiaryId;
  if (record.recipientId) ids.recipientId = record.recipientId;
  if (record.simulationId) ids.simulationId = record.simulationId;
  if (record.transactionId) ids.transactionId = record.transactionId;
  return ids;
}

/** When the payout was paid (or last changed), to the second, in UTC. */
function when(record: PayoutRecord): string {
  return toSecond(record.paidAt ?? record.updatedAt);
}

/** An ISO 8601 time to the second: milliseconds tell a person nothing. */
function toSecond(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

function stateWords(record: PayoutRecord): string {
  switch (record.state) {
    case 'submitted':
    case 'completed':
      return `paid (${record.state})`;
    case 'unknown':
    case 'sending':
      return 'sent with an unknown outcome';
    default:
      return record.state;
  }
}

function txText(record: PayoutRecord): string {
  return record.transactionId ? ` as transaction ${record.transactionId}` : '';
}
