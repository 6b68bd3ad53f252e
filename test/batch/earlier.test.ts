/**
 * The words a row gets when the register decides it (batch/earlier.ts): times to the second,
 * the run and sheet named.
 */
import { describe, expect, it } from 'vitest';
import { earlierResult } from '../../src/batch/earlier.js';
import type { PayoutDetails } from '../../src/register/details.js';
import type { PayoutRecord } from '../../src/register/types.js';

const details: PayoutDetails = {
  amount: '1250.00',
  currency: 'USD',
  rail: 'ACH',
  payee: 'p-1',
  payeeHint: 'account ****6789',
};

const record: PayoutRecord = {
  reference: 'NOV-0001',
  details,
  state: 'sending',
  idempotencyKey: 'key-1',
  runId: 'run-1',
  sheet: 'november.csv',
  updatedAt: '2026-11-27T09:15:02.481Z',
  run: {
    id: 'run-1',
    sheet: 'november.csv',
    digest: 'd'.repeat(64),
    host: 'payroll-1',
    pid: 4242,
    startedAt: '2026-11-27T09:14:58.907Z',
    heartbeatAt: '2026-11-27T09:15:02.481Z',
    leaseExpiresAt: '2026-11-27T09:15:32.481Z',
    leaseExpired: false,
  },
};

describe('a row the register decides', () => {
  it('names the run paying its reference right now, started to the second', () => {
    expect(earlierResult({ kind: 'busy', record }, details)).toEqual({
      status: 'skipped',
      errors: [
        'not sent: another payouts run is paying this reference right now (pid 4242 on payroll-1, sheet november.csv, started 2026-11-27T09:14:58Z): run again after it ends to see its outcome',
      ],
    });
  });

  it('says when a paid reference was paid, to the second', () => {
    const paid = {
      ...record,
      state: 'submitted' as const,
      transactionId: 'tx-9',
      paidAt: '2026-11-27T09:15:01.002Z',
    };
    const result = earlierResult({ kind: 'paid', record: paid }, details);
    expect(result?.status).toBe('skipped');
    expect(result?.errors[0]).toMatch(
      /^already paid: submitted on 2026-11-27T09:15:01Z from sheet november\.csv as transaction tx-9/,
    );
  });
});
