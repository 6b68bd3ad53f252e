import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/api/contract.js';
import { payeeGone } from '../../src/api/transactions.js';
import {
  asStepFailure,
  notSentInterrupted,
  StepFailure,
  transactionFailure,
} from '../../src/batch/run/outcome.js';
import {
  AuthError,
  InterruptedError,
  NetworkError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
} from '../../src/errors.js';

const where = { method: 'POST', path: '/v1/transactions' };
const service = (status: number, requestId?: string, serviceErrors?: string[]) =>
  new ServiceError({ ...where, status, serviceMessage: `message ${status}`, requestId, serviceErrors });
const network = (errorCode: string, mayHaveTakenEffect: boolean) =>
  new NetworkError(`connection ${errorCode}`, { ...where, errorCode, mayHaveTakenEffect });

describe('transactionFailure', () => {
  const cases: [string, unknown, StepFailure['status'], string][] = [
    [
      '2xx with an unreadable body',
      service(201, 'req_1'),
      'unknown',
      'the service accepted the transaction request (request id req_1) but its answer could not be read, so the transaction id is unknown - run again with --retry-unknown to fetch it with the same Idempotency-Key',
    ],
    [
      '500 after retries',
      service(500, 'req_2'),
      'unknown',
      'the service answered 500 to the transaction request (request id req_2) and it may have taken effect - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'reset after sending',
      network('ECONNRESET', true),
      'unknown',
      'the connection was lost while the transaction was being sent (ECONNRESET), so it may have been paid - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'connection refused (never sent)',
      network('ECONNREFUSED', false),
      'failed',
      'not sent: the service could not be reached (ECONNREFUSED) - nothing was paid for this row, run again to retry',
    ],
    [
      '400 refusal, word for word',
      service(400, undefined, ['Insufficient balance']),
      'failed',
      'Insufficient balance',
    ],
    [
      'kept answering 429',
      new RateLimitError('429', { ...where, attempts: 12 }),
      'failed',
      'not sent: the service kept answering 429 Too Many Requests - nothing was paid, run again later (or lower --rate)',
    ],
    [
      'one 429 asking for a day',
      new RateLimitError('429', { ...where, retryAfterMs: 86_400_000 }),
      'failed',
      'not sent: the service answered 429 Too Many Requests asking to wait 86400 s - nothing was paid, run again later (or lower --rate)',
    ],
    [
      'a stalled answer past the request deadline',
      network('PAYOUTS_DEADLINE', true),
      'unknown',
      'no complete answer to the transaction request came within the request deadline (PAYOUTS_DEADLINE), so it may have been paid - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'abandoned when a stop outlived its grace',
      network('PAYOUTS_ABANDONED', true),
      'unknown',
      'the run was stopped while the transaction was being sent and its answer was not awaited (PAYOUTS_ABANDONED), so it may have been paid - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    ['interrupted before sending', new InterruptedError('stopped'), 'skipped', notSentInterrupted],
    [
      'the service gave out before the first attempt: its reason on the row',
      new ServiceUnavailableError('POST /v1/transactions was not sent: down', {
        reason:
          'the service stayed unreachable or unavailable for more than 30 s (--max-outage) - run again later to resume',
      }),
      'skipped',
      'not sent: the service stayed unreachable or unavailable for more than 30 s (--max-outage) - run again later to resume',
    ],
    // The most severe attempt decides.
    [
      'interrupted in the backoff after a cut attempt',
      new InterruptedError('stopped', { inDoubt: 'ECONNRESET' }),
      'unknown',
      'an earlier attempt of the transaction request got no answer (ECONNRESET) and may have taken effect, then the run was stopped - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'kept answering 429 after a 502',
      new RateLimitError('429', { ...where, inDoubt: '502', attempts: 6, throttled: 5 }),
      'unknown',
      'an earlier attempt of the transaction request got the answer 502 and may have taken effect, then the service kept answering 429 Too Many Requests - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'the outage outlasted --max-outage after a cut attempt',
      new ServiceUnavailableError('down', { inDoubt: 'UND_ERR_SOCKET' }),
      'unknown',
      'an earlier attempt of the transaction request got no answer (UND_ERR_SOCKET) and may have taken effect, then the service stayed unavailable - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'still in progress (409) after a cut attempt',
      new ServiceError({ ...where, status: 409, serviceMessage: 'in progress', inDoubt: 'ECONNRESET' }),
      'unknown',
      'an earlier attempt of the transaction request got no answer (ECONNRESET) and may have taken effect, then the service answered 409 - run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'key bound to another request (422) after a cut attempt',
      new ServiceError({
        ...where,
        status: 422,
        serviceMessage: `${MESSAGES.idempotencyConflictPrefix}: send a new key`,
        inDoubt: 'ECONNRESET',
      }),
      'unknown',
      "this payout's Idempotency-Key was already used by the service for another request, so it may have been paid already: check the payments dashboard before paying it again under a new reference",
    ],
    [
      // Two runs at once: another run's request under this key was still being processed.
      'still in progress (409) on the first attempt',
      new ServiceError({
        ...where,
        status: 409,
        serviceMessage: `${MESSAGES.idempotencyInProgressPrefix}, retry the same request once it has finished`,
      }),
      'unknown',
      "the service was still processing an earlier request with this payout's Idempotency-Key, so it may have been paid: run again with --retry-unknown to settle it with the same key",
    ],
    [
      'key bound to another request (422) on the first attempt: an earlier quote may have paid it',
      new ServiceError({
        ...where,
        status: 422,
        serviceMessage: `${MESSAGES.idempotencyConflictPrefix}: send a new key`,
      }),
      'unknown',
      "this payout's Idempotency-Key was already used by the service for another request, so it may have been paid already: check the payments dashboard before paying it again under a new reference",
    ],
    [
      'a refusal (400) after a cut attempt: the key was not used, nothing was created',
      new ServiceError({
        ...where,
        status: 400,
        serviceMessage: 'Insufficient balance',
        inDoubt: 'ECONNRESET',
      }),
      'failed',
      'Insufficient balance',
    ],
  ];
  it.each(cases)('%s', (_name, error, status, message) => {
    const failure = transactionFailure(error);
    expect(failure.status).toBe(status);
    expect(failure.messages).toEqual([message]);
  });
});

describe('asStepFailure', () => {
  const cases: [string, unknown, StepFailure['status'], string[]][] = [
    [
      '503 before the transaction',
      service(503, 'req_3'),
      'failed',
      ['message 503', 'the service answered 503 (request id req_3) - nothing was paid, run again to retry'],
    ],
    [
      '422 with several messages',
      service(422, undefined, ['a is wrong', 'b is wrong']),
      'failed',
      ['a is wrong', 'b is wrong'],
    ],
    [
      'reset on every attempt',
      network('ECONNRESET', true),
      'failed',
      [
        'the connection to the service broke before its answer came, on every attempt (ECONNRESET) - nothing was paid for this row, run again to retry',
      ],
    ],
    ['a StepFailure passes through', new StepFailure('skipped', ['x']), 'skipped', ['x']],
  ];
  it.each(cases)('%s', (_name, error, status, messages) => {
    const failure = asStepFailure(error);
    expect(failure.status).toBe(status);
    expect(failure.messages).toEqual(messages);
  });

  it('throws errors that end the whole run', () => {
    const auth = new AuthError('refused');
    expect(() => asStepFailure(auth)).toThrow(auth);
    expect(() => asStepFailure(new TypeError('bug'))).toThrow(TypeError);
  });
});

describe('payeeGone', () => {
  const at = (path: string, status: number, message: string) =>
    new ServiceError({ method: 'POST', path, status, serviceMessage: message });
  it.each([
    [
      'a recipient for an unknown beneficiary',
      at('/v1/recipients', 404, 'Beneficiary b-1 not found'),
      'recipient',
      'beneficiary',
    ],
    [
      'a quote for an unknown recipient',
      at('/v1/simulations', 404, 'Recipient r-1 not found'),
      'simulation',
      'recipient',
    ],
    [
      'a quote for a deleted beneficiary',
      at(
        '/v1/simulations',
        422,
        'Beneficiary b-1 of recipient r-1 has been deleted - nothing can be paid to it',
      ),
      'simulation',
      'beneficiary',
    ],
    ['an expired quote', at('/v1/simulations', 422, 'Simulation has expired'), 'simulation', undefined],
    ['a validation refusal', at('/v1/recipients', 400, 'iban is invalid'), 'recipient', undefined],
  ] as const)('%s', (_name, error, step, gone) => {
    expect(payeeGone(error, step)).toBe(gone);
  });
});
