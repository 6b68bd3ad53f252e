import { describe, expect, it } from 'vitest';
import { mask } from '../../src/redact.js';
import { describeDetails, type PayoutDetails, sameDetails } from '../../src/register/details.js';

const paid: PayoutDetails = {
  amount: '100.00',
  currency: 'USD',
  rail: 'ACH',
  payee: 'hash-of-account-A',
  payeeHint: 'account ****6789',
};

describe('sameDetails ("same details", defined once)', () => {
  it.each<[string, Partial<PayoutDetails>, boolean]>([
    ['the very same payout', {}, true],
    ['another hint for the same account (a renamed payee)', { payeeHint: 'account ****6789 (Bo)' }, true],
    ['another amount', { amount: '100.01' }, false],
    ['another currency', { currency: 'MXN' }, false],
    ['another rail', { rail: 'WIRE' }, false],
    ['another payee account', { payee: 'hash-of-account-B' }, false],
  ])('%s: %s', (_what, change, same) => {
    expect(sameDetails(paid, { ...paid, ...change })).toBe(same);
  });
});

describe('describeDetails', () => {
  it('shows amount, currency, rail and the masked payee', () => {
    expect(describeDetails(paid)).toBe('USD 100.00 by ACH to account ****6789');
  });
});

describe('mask', () => {
  it.each([
    ['123456789', '****6789'],
    ['GB82WEST12345698765432', '****5432'],
    ['1234', '****'],
    ['', '****'],
  ])('%s shows as %s', (value, shown) => {
    expect(mask(value)).toBe(shown);
  });
});
