/**
 * A row's final status from the error that stopped it (PRODUCT.md "Statuses"): `failed` when
 * nothing was paid, `unknown` when the transaction may have taken effect, `skipped` when it was
 * never sent. Pure: the decision lives here so that it is table-tested on its own (issue 9).
 */
import { NetworkError, PayoutsError, RateLimitError, ServiceError } from '../errors.js';

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
  'not sent: the run was interrupted before this row was paid; run again to send it';

/** How a failed transaction request ends the row: unknown when it may have taken effect. */
export function transactionFailure(error: unknown): StepFailure {
  if (error instanceof ServiceError && error.status < 300) {
    return new StepFailure('unknown', [
      `the service accepted the transaction request${requestIdText(error)} but its answer could not be read, so the transaction id is unknown; run again with --retry-unknown to fetch it with the same Idempotency-Key`,
    ]);
  }
  if (error instanceof ServiceError && error.status >= 500) {
    return new StepFailure('unknown', [
      `the service answered ${error.status} to the transaction request${requestIdText(error)} and it may have taken effect; run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  }
  if (error instanceof NetworkError && error.mayHaveTakenEffect) {
    return new StepFailure('unknown', [
      `the connection was lost while the transaction was being sent (${error.errorCode}), so it may have been paid; run again with --retry-unknown to re-send it with the same Idempotency-Key`,
    ]);
  }
  return asStepFailure(error);
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
            `the service answered ${error.status}${requestIdText(error)}; nothing was paid, run again to retry`,
          ]
        : []),
    ]);
  }
  if (error instanceof RateLimitError) {
    return new StepFailure('failed', [
      `not sent: the service kept answering 429 Too Many Requests; nothing was paid, run again later (or lower --rate)`,
    ]);
  }
  if (error instanceof NetworkError) {
    // Before the transaction, a broken connection pays nothing, but it may have created a
    // beneficiary or recipient: a re-run gets it back by its Idempotency-Key.
    return new StepFailure('failed', [
      error.mayHaveTakenEffect
        ? `the connection to the service broke before its answer came, on every attempt (${error.errorCode}); nothing was paid for this row, run again to retry`
        : `not sent: the service could not be reached (${error.errorCode}); nothing was paid for this row, run again to retry`,
    ]);
  }
  if (error instanceof PayoutsError && error.code === 'INTERRUPTED')
    return new StepFailure('skipped', [notSentInterrupted]);
  throw error;
}

function requestIdText(error: ServiceError): string {
  return error.requestId ? ` (request id ${error.requestId})` : '';
}
