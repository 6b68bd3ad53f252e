import { describe, expect, it } from 'vitest';
import type { PayoutDetails } from '../../src/register/details.js';
import type { PayoutRecord, PayoutState } from '../../src/register/types.js';
import { registerVerdict } from '../../src/register/verdict.js';

const details: PayoutDetails = {
  amount: '100.00',
  currency: 'USD',
  rail: 'ACH',
  payee: 'p1',
  payeeHint: 'account ****6789',
};
const other: PayoutDetails = { ...details, amount: '120.00' };

function record(state: PayoutState): PayoutRecord {
  return {
    reference: 'INV-1',
    details,
    state,
    idempotencyKey: 'k',
    runId: 'r1',
    sheet: 'october.csv',
    updatedAt: '2026-11-01T10:00:00.000Z',
  };
}

type Case = [
  state: PayoutState | 'none',
  same: boolean,
  holderAlive: boolean,
  retryUnknown: boolean,
  kind: string,
];

describe('registerVerdict (PRODUCT.md "Never pay twice: the register")', () => {
  it.each<Case>([
    ['none', true, false, false, 'send'],
    // Paid: the same details are skipped, other details are a conflict; --retry-unknown changes nothing.
    ['submitted', true, false, false, 'paid'],
    ['completed', true, false, true, 'paid'],
    ['submitted', false, false, false, 'conflict'],
    ['completed', false, false, false, 'conflict'],
    // Refused before any transaction existed: sent again, with any details.
    ['refused', true, false, false, 'send'],
    ['refused', false, false, false, 'send'],
    // Claimed, nothing sent: another live run holds it, or a dead run left it free.
    ['claimed', true, true, false, 'busy'],
    ['claimed', false, false, false, 'send'],
    // Being sent: by a live run it is busy; a dead run's send is in doubt.
    ['sending', true, true, false, 'busy'],
    ['sending', true, false, false, 'unknown'],
    ['sending', true, false, true, 'resend'],
    ['sending', false, false, true, 'conflict'],
    // Unknown: left alone unless --retry-unknown, and never re-sent with other details.
    ['unknown', true, false, false, 'unknown'],
    ['unknown', true, false, true, 'resend'],
    ['unknown', false, false, true, 'conflict'],
    // A transaction that exists and failed is not sent again under its reference.
    ['failed', true, false, true, 'failed'],
    ['failed', false, false, false, 'failed'],
  ])('%s, same details %s, holder alive %s, --retry-unknown %s: %s', (state, same, alive, retry, kind) => {
    const verdict = registerVerdict(state === 'none' ? undefined : record(state), same ? details : other, {
      holderAlive: alive,
      retryUnknown: retry,
    });
    expect(verdict.kind).toBe(kind);
  });
});
