import { describe, expect, it } from 'vitest';
import {
  historyFor,
  PAYEE_ACCOUNTS_KEPT,
  PAYEE_PAYMENTS_KEPT,
  withPayment,
} from '../../src/register/rules.js';
import { payeePayment as paid } from '../helpers/claims.js';

/** A payment as a payee's paydays keep it: reference, date, amount, currency. */
const day = ({ reference, paidAt, amount, currency }: ReturnType<typeof paid>) => ({
  reference,
  paidAt,
  amount,
  currency,
});

describe("a payee's history (rules.ts withPayment, historyFor)", () => {
  it('starts with the first payout: the account paid and the largest amount', () => {
    expect(withPayment(undefined, paid('A', '100.00'), 'october')).toEqual({
      accounts: [paid('A', '100.00')],
      payments: [day(paid('A', '100.00'))],
      largest: { USD: '100.00' },
      batch: 'october',
    });
  });

  it('keeps the largest per currency by value (not by text) and the last payout to each account, newest first', () => {
    let h = withPayment(undefined, paid('A', '99.99'), 'sep');
    h = withPayment(h, paid('B', '100.00', 'acct-2'), 'oct');
    h = withPayment(h, paid('C', '5.00', 'acct-3', 'MXN'), 'oct');
    h = withPayment(h, paid('D', '20.00'), 'nov');
    expect(h.largest).toEqual({ USD: '100.00', MXN: '5.00' });
    expect(h.accounts).toEqual([
      paid('D', '20.00'),
      paid('C', '5.00', 'acct-3', 'MXN'),
      paid('B', '100.00', 'acct-2'),
    ]);
  });

  it(`remembers at most ${PAYEE_ACCOUNTS_KEPT} accounts, the most recent`, () => {
    let h = withPayment(undefined, paid('R0', '1.00', 'acct-0'), 'b');
    for (let i = 1; i <= PAYEE_ACCOUNTS_KEPT; i++)
      h = withPayment(h, paid(`R${i}`, '1.00', `acct-${i}`), 'b');
    expect(h.accounts).toHaveLength(PAYEE_ACCOUNTS_KEPT);
    expect(h.accounts.map((a) => a.account)).not.toContain('acct-0');
  });

  it('keeps what stood before a batch while the batch pays more of the payee', () => {
    let h = withPayment(undefined, paid('A', '10.00'), 'oct');
    h = withPayment(h, paid('B', '900.00', 'acct-2'), 'nov');
    h = withPayment(h, paid('C', '30.00', 'acct-2'), 'nov');
    const october = {
      accounts: [paid('A', '10.00')],
      payments: [day(paid('A', '10.00'))],
      largest: { USD: '10.00' },
    };
    expect(h.before).toEqual(october);
    // A resumed November run (the same sheet's tag) compares its rows with October's history.
    expect(historyFor(h, 'nov')).toEqual(october);
    // Any other sheet sees everything paid so far.
    expect(historyFor(h, 'dec')).toEqual({
      accounts: [paid('C', '30.00', 'acct-2'), paid('A', '10.00')],
      payments: [paid('C', '30.00', 'acct-2'), paid('B', '900.00', 'acct-2'), paid('A', '10.00')].map(day),
      largest: { USD: '900.00' },
    });
  });

  it(`keeps the latest ${PAYEE_PAYMENTS_KEPT} payouts to any account, newest first, each reference once`, () => {
    let h = withPayment(undefined, paid('R0', '1.00', 'acct-0'), 'b');
    for (let i = 1; i <= PAYEE_PAYMENTS_KEPT; i++)
      h = withPayment(h, paid(`R${i}`, '1.00', `acct-${i % 2}`), 'b');
    // The same payout recorded again (a settlement learnt later) is not a second payday.
    h = withPayment(h, paid(`R${PAYEE_PAYMENTS_KEPT}`, '1.00', 'acct-0'), 'b');
    expect(h.payments).toHaveLength(PAYEE_PAYMENTS_KEPT);
    expect(h.payments!.map((p) => p.reference).slice(0, 2)).toEqual([
      `R${PAYEE_PAYMENTS_KEPT}`,
      `R${PAYEE_PAYMENTS_KEPT - 1}`,
    ]);
    expect(h.payments!.map((p) => p.reference)).not.toContain('R0');
  });

  it('has nothing before a payee first paid by this batch, and nothing for an unknown payee', () => {
    const h = withPayment(undefined, paid('A', '10.00'), 'nov');
    expect(historyFor(h, 'nov')).toBeUndefined();
    expect(historyFor(h, undefined)?.accounts).toEqual([paid('A', '10.00')]);
    expect(historyFor(undefined, 'nov')).toBeUndefined();
  });
});
