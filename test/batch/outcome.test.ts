import { describe, expect, it } from 'vitest';
import {
  asStepFailure,
  notSentInterrupted,
  StepFailure,
  transactionFailure,
} from '../../src/batch/outcome.js';
import { AuthError, InterruptedError, NetworkError, RateLimitError, ServiceError } from '../../src/errors.js';

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
      'the service accepted the transaction request (request id req_1) but its answer could not be read, so the transaction id is unknown; run again with --retry-unknown to fetch it with the same Idempotency-Key',
    ],
    [
      '500 after retries',
      service(500, 'req_2'),
      'unknown',
      'the service answered 500 to the transaction request (request id req_2) and it may have taken effect; run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'reset after sending',
      network('ECONNRESET', true),
      'unknown',
      'the connection was lost while the transaction was being sent (ECONNRESET), so it may have been paid; run again with --retry-unknown to re-send it with the same Idempotency-Key',
    ],
    [
      'connection refused (never sent)',
      network('ECONNREFUSED', false),
      'failed',
      'not sent: the service could not be reached (ECONNREFUSED); nothing was paid for this row, run again to retry',
    ],
    [
      '400 refusal, word for word',
      service(400, undefined, ['Insufficient balance']),
      'failed',
      'Insufficient balance',
    ],
    [
      'kept answering 429',
      new RateLimitError('429', { ...where }),
      'failed',
      'not sent: the service kept answering 429 Too Many Requests; nothing was paid, run again later (or lower --rate)',
    ],
    ['interrupted before sending', new InterruptedError('stopped'), 'skipped', notSentInterrupted],
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
      ['message 503', 'the service answered 503 (request id req_3); nothing was paid, run again to retry'],
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
        'the connection to the service broke before its answer came, on every attempt (ECONNRESET); nothing was paid for this row, run again to retry',
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
