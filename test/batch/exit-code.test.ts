/** The exit code of a run as a table (PRODUCT.md "Exit codes"; batch/exit-code.ts). */
import { describe, expect, it } from 'vitest';
import { EXIT_INTERNAL, type RunHappening, runExitCode } from '../../src/batch/exit-code.js';
import {
  AuthError,
  ClaimLostError,
  ConfigError,
  GuardError,
  InterruptedError,
  RegisterError,
  ServiceUnavailableError,
  SheetError,
  StorageError,
  UsageError,
} from '../../src/errors.js';

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
    ['a bug', { sent: false, error: new TypeError('x is undefined') }, EXIT_INTERNAL],
    ['a bug after sending', { sent: true, error: new TypeError('x is undefined') }, EXIT_INTERNAL],
  ];
  it.each(table)('%s: exit %i', (_name, happened, code) => {
    expect(runExitCode(happened)).toBe(code);
  });
});
