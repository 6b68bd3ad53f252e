/** The exit code of a run as a table (README "Exit codes"; cli/exit-code.ts). */
import { describe, expect, it } from 'vitest';
import { serviceFailureOf } from '../../src/api/failure.js';
import {
  EXIT_INTERNAL,
  exitCodeOfError,
  outcomeCode,
  type RunHappening,
  runExitCode,
} from '../../src/cli/exit-code.js';
import {
  AuthError,
  afterSending,
  ClaimLostError,
  ConfigError,
  GuardError,
  InterruptedError,
  NetworkError,
  RateLimitError,
  RegisterError,
  ServiceError,
  ServiceUnavailableError,
  SheetError,
  StorageError,
  UsageError,
} from '../../src/errors.js';

const where = { method: 'GET', path: '/v1/integrators/me' };
const network = (errorCode: string) =>
  new NetworkError(`no answer (${errorCode})`, { ...where, errorCode, mayHaveTakenEffect: false });
const answered = (status: number, serviceMessage: string) =>
  new ServiceError({ ...where, status, serviceMessage });

const disk = () =>
  new StorageError('the results file /out/r.csv cannot be written', { path: '/out/r.csv', errno: 'ENOSPC' });

describe('runExitCode', () => {
  const table: Array<[string, RunHappening, number]> = [
    ['every row ok', { sent: true, rowsOk: true }, 0],
    ['nothing to send, every row ok', { sent: false, rowsOk: true }, 0],
    ['a row invalid, failed or unknown', { sent: true, rowsOk: false }, 1],
    ['usage, before sending', { sent: false, error: new UsageError('--rate must be a positive number') }, 2],
    ['configuration, before sending', { sent: false, error: new ConfigError('no service URL') }, 2],
    ['an unreadable sheet', { sent: false, error: new SheetError('a.csv', 'file not found') }, 2],
    ['storage, before sending', { sent: false, error: disk() }, 2],
    [
      'the register, before sending',
      { sent: false, error: new RegisterError('the register r.db cannot be opened', { path: 'r.db' }) },
      2,
    ],
    [
      'credentials refused, before sending',
      { sent: false, error: new AuthError('the service refused the credentials') },
      3,
    ],
    ['a guard, before sending', { sent: false, error: new GuardError('control totals differ') }, 4],
    ['a signal', { sent: true, interrupted: true, rowsOk: false }, 5],
    ['a signal, as an error', { sent: true, error: new InterruptedError('stopped') }, 5],
    ['a signal before sending', { sent: false, interrupted: true, rowsOk: true }, 5],
    ['an outage', { sent: true, unavailable: true, rowsOk: false }, 6],
    ['an outage before sending', { sent: false, error: new ServiceUnavailableError('unreachable') }, 6],
    ['a signal during an outage', { sent: true, interrupted: true, unavailable: true }, 5],
    ['storage, after sending', { sent: true, error: disk() }, 6],
    ['a log file failing, after sending', { sent: true, storageFailed: true, rowsOk: true }, 6],
    [
      'credentials refused, after sending',
      { sent: true, error: new AuthError('the service refused the credentials') },
      6,
    ],
    [
      'a lost claim',
      {
        sent: true,
        error: new ClaimLostError('R-1', 'the register no longer lets this run send payout "R-1"'),
      },
      6,
    ],
    // Whatever keeps payouts from reaching or understanding the service is an outage: 6.
    ['DNS failure before sending', { sent: false, error: network('ENOTFOUND') }, 6],
    ['connection refused before sending', { sent: false, error: network('ECONNREFUSED') }, 6],
    ['a reset before sending', { sent: false, error: network('ECONNRESET') }, 6],
    ['a TLS handshake cut short', { sent: false, error: network('ERR_SSL_WRONG_VERSION_NUMBER') }, 6],
    ['a stalled answer past its deadline', { sent: false, error: network('PAYOUTS_DEADLINE') }, 6],
    ['an unreadable answer', { sent: false, error: answered(200, 'the answer is not JSON') }, 6],
    [
      'an oversized answer',
      { sent: false, error: answered(200, 'the answer was larger than 16 MB and was not read') },
      6,
    ],
    ['a 5xx past its retries', { sent: false, error: answered(503, 'down') }, 6],
    ['429 past the throttle budget', { sent: false, error: new RateLimitError('429', { ...where }) }, 6],
    ['a reset after sending', { sent: true, error: network('ECONNRESET') }, 6],
    // A certificate the client refuses is configuration: 2, nothing sent.
    ['a certificate refused', { sent: false, error: network('DEPTH_ZERO_SELF_SIGNED_CERT') }, 2],
    ['an expired certificate', { sent: false, error: network('CERT_HAS_EXPIRED') }, 2],
    ['a certificate of another host', { sent: false, error: network('ERR_TLS_CERT_ALTNAME_INVALID') }, 2],
    ['a bug', { sent: false, error: new TypeError('x is undefined') }, EXIT_INTERNAL],
    ['a bug after sending', { sent: true, error: new TypeError('x is undefined') }, EXIT_INTERNAL],
  ];
  it.each(table)('%s: exit %i', (_name, happened, code) => {
    expect(runExitCode(happened)).toBe(code);
  });
});

describe('exitCodeOfError', () => {
  it('gives the code of the error, before sending', () => {
    expect(exitCodeOfError(new AuthError('the service refused the credentials'))).toBe(3);
    expect(exitCodeOfError(disk())).toBe(2);
    expect(exitCodeOfError(new TypeError('x is undefined'))).toBe(EXIT_INTERNAL);
  });

  it('gives 0, 1, 5 or 6 once the error is marked as thrown after sending', () => {
    // Refused credentials mid-run: rows remain to run again, so 6 (a cron retries), never 3.
    expect(exitCodeOfError(afterSending(new AuthError('the service refused the credentials')))).toBe(6);
    expect(exitCodeOfError(afterSending(new GuardError('totals')))).toBe(6);
    expect(exitCodeOfError(afterSending(new InterruptedError('stopped')))).toBe(5);
    expect(exitCodeOfError(afterSending(disk()))).toBe(6);
    expect(exitCodeOfError(afterSending(new TypeError('x is undefined')))).toBe(EXIT_INTERNAL);
  });
});

describe('outcomeCode', () => {
  it('is 0 or 1 for a command that moves no money, as the table says', () => {
    expect(outcomeCode(true)).toBe(0);
    expect(outcomeCode(false)).toBe(1);
  });
});

describe('serviceFailureOf', () => {
  it.each([
    ['ENOTFOUND', 'outage'],
    ['EAI_AGAIN', 'outage'],
    ['EPROTO', 'outage'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'certificate'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'certificate'],
  ] as const)('%s is %s', (code, kind) => {
    expect(serviceFailureOf(network(code))).toBe(kind);
  });

  it('an answer that refuses a request in words is not an outage', () => {
    expect(serviceFailureOf(answered(400, 'invalid url'))).toBeUndefined();
    expect(serviceFailureOf(answered(422, 'key already used'))).toBeUndefined();
    expect(serviceFailureOf(answered(404, 'Not Found'))).toBe('outage');
  });

  it('refused credentials, a guard and a bug are not the service being out of reach', () => {
    expect(serviceFailureOf(new AuthError('refused'))).toBeUndefined();
    expect(serviceFailureOf(new GuardError('totals'))).toBeUndefined();
    expect(serviceFailureOf(new TypeError('bug'))).toBeUndefined();
  });
});
