/**
 * A row's final status from the error that stopped it (docs/sheets.md "The results file",
 * statuses): `failed` when nothing was paid, `unknown` when the transaction may have taken
 * effect, `skipped` when it was never sent. Pure: the decision lives here so that it is
 * table-tested on its own.
 */
import { MESSAGES } from '../../api/contract.js';
import { ABANDONED_CODE, DEADLINE_CODE } from '../../api/http.js';
import { isIdempotencyConflict, isIdempotencyInProgress } from '../../api/transactions.js';
import {
  InterruptedError,
  NetworkError,
  PayoutsError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
} from '../../errors.js';

/** A step that failed: the row's status and the messages for the results file. */
export class StepFailure extends Error {
  constructor(
    readonly status: 'failed' | 'unknown' | 'skipped',
    readonly messages: string[],
  ) {
    super(messages.join('; '));
  }
}

export const notSentInterrupted =
  'not sent: the run was interrupted before this row was paid - run again to send it';

/** A row the run did not send because the service's outage outlasted --max-outage. */
export const notSentUnavailable = 'not sent: the service was unavailable - run again to resume';

/** A row the run did not send because of `reason` (the breaker's words for the outage). */
export function notSentBecause(reason: string | undefined): string {
  return reason === undefined ? notSentUnavailable : `not sent: ${reason}`;
}

/**
 * How a failed transaction request ends the row: unknown when any of its attempts may have
 * taken effect, unless the last answer proves nothing was created.
 */
export function transactionFailure(error: unknown): StepFailure {
  // The key is the payout's (service, integrator, reference): a request under it that is still
  // being processed, or that was answered for another quote, may have paid it. Never "refused".
  if (isIdempotencyInProgress(error)) {
    return new StepFailure('unknown', [
      `the service was still processing an earlier request with this payout's Idempotency-Key${requestIdText(error)}, so it may have been paid: run again with --retry-unknown to settle it with the same key`,
    ]);
  }
  if (isIdempotencyConflict(error)) {
    return new StepFailure('unknown', [
      `this payout's Idempotency-Key was already used by the service for another request${requestIdText(error)}, so it may have been paid already: check the payments dashboard before paying it again under a new reference`,
    ]);
  }
  if (error instanceof ServiceError && error.status < 300) {
    return new StepFailure('unknown', [
      `the service accepted the transaction request${requestIdText(error)} but its answer could not be read, so the transaction id is unknown - run again with --retry-unknown to fetch it with the same Idempotency-Key`,
    ]);
  }
  if (error instanceof ServiceError && error.status >= 500) {
    return new StepFailure('unknown', [
      `the service answered ${error.status} to the transaction request${requestIdText(error)} and it may have taken effect - run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  }
  if (error instanceof NetworkError && error.mayHaveTakenEffect) {
    return new StepFailure('unknown', [
      `${lostInWords(error.errorCode)}, so it may have been paid - run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  }
  if (error instanceof PayoutsError && error.inDoubt !== undefined && !provesNothingCreated(error)) {
    return new StepFailure('unknown', [
      `an earlier attempt of the transaction request got ${doubtText(error.inDoubt)} and may have taken effect, then ${lastAttemptText(error)} - run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  }
  return asStepFailure(error);
}

/**
 * A 4xx to a keyed request proves that no earlier attempt created anything: the service replays
 * a created transaction's 2xx for its key and releases the key on a 4xx
 * (docs/api-assumptions.md "Idempotency"). Not so for 409 (the first attempt is still in
 * progress) or the 422 of a key bound to another request.
 */
function provesNothingCreated(error: PayoutsError): boolean {
  if (!(error instanceof ServiceError) || error.status < 400 || error.status >= 500) return false;
  if (error.status === 409) return false;
  return !error.serviceErrors.some((m) => m.startsWith(MESSAGES.idempotencyConflictPrefix));
}

/** How a transaction request that may have left lost its answer. */
function lostInWords(errorCode: string): string {
  if (errorCode === DEADLINE_CODE)
    return `no complete answer to the transaction request came within the request deadline (${errorCode})`;
  if (errorCode === ABANDONED_CODE)
    return `the run was stopped while the transaction was being sent and its answer was not awaited (${errorCode})`;
  return `the connection was lost while the transaction was being sent (${errorCode})`;
}

function doubtText(inDoubt: string): string {
  return /^\d+$/.test(inDoubt) ? `the answer ${inDoubt}` : `no answer (${inDoubt})`;
}

function lastAttemptText(error: PayoutsError): string {
  if (error instanceof ServiceUnavailableError) return 'the service stayed unavailable';
  if (error instanceof InterruptedError) return 'the run was stopped';
  if (error instanceof RateLimitError) return error.inWords;
  if (error instanceof NetworkError) return `the service could not be reached (${error.errorCode})`;
  if (error instanceof ServiceError) return `the service answered ${error.status}`;
  return 'the request failed';
}

/**
 * Any step's error as the row's status and messages; service messages stay word for word.
 * Errors that end the whole run (refused credentials, a bug) are thrown again.
 */
export function asStepFailure(error: unknown): StepFailure {
  if (error instanceof StepFailure) return error;
  if (error instanceof ServiceError) {
    return new StepFailure('failed', [
      ...error.serviceErrors,
      ...(error.status >= 500
        ? [
            `the service answered ${error.status}${requestIdText(error)} - nothing was paid, run again to retry`,
          ]
        : []),
    ]);
  }
  if (error instanceof RateLimitError) {
    return new StepFailure('failed', [
      `not sent: ${error.inWords} - nothing was paid, run again later (or lower --rate)`,
    ]);
  }
  // Cut when a stop's grace ran out, before this row's transaction left: nothing was paid.
  if (error instanceof NetworkError && error.errorCode === ABANDONED_CODE)
    return new StepFailure('skipped', [notSentInterrupted]);
  if (error instanceof NetworkError) {
    // Before the transaction, a broken connection pays nothing, but it may have created a
    // beneficiary or recipient: a re-run gets it back by its Idempotency-Key.
    return new StepFailure('failed', [
      error.mayHaveTakenEffect
        ? `the connection to the service broke before its answer came, on every attempt (${error.errorCode}) - nothing was paid for this row, run again to retry`
        : `not sent: the service could not be reached (${error.errorCode}) - nothing was paid for this row, run again to retry`,
    ]);
  }
  if (error instanceof ServiceUnavailableError)
    return new StepFailure('skipped', [notSentBecause(error.reason)]);
  if (error instanceof PayoutsError && error.code === 'INTERRUPTED')
    return new StepFailure('skipped', [notSentInterrupted]);
  throw error;
}

function requestIdText(error: ServiceError): string {
  return error.requestId ? ` (request id ${error.requestId})` : '';
}
