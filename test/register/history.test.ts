import { describe, expect, it } from 'vitest';
import {
  historyFor,
  PAYEE_ACCOUNTS_KEPT,
  PAYEE_PAYMENTS_KEPT,
  sentAt,
  withoutPayment,
  withPayment,
} from '../../src/register/rules.js';
import type { PayeeHistory, PayeePayment } from '../../src/register/types.js';
import { payeePayment as paid } from '../helpers/claims.js';

/** A payment as a payee's paydays keep it: reference, date, amount, currency, account's tag. */
const day = ({ reference, paidAt, amount, currency, account }: PayeePayment) => ({
  reference,
  paidAt,
  amount,
  currency,
  accountTag: account.slice(0, 8),
});

/** A payout of USD `amount` to `account` paid on `date` (2026, at 10:00 UTC). */
const on = (date: string, reference: string, amount: string, account = 'acct-1'): PayeePayment => ({
  ...paid(reference, amount, account),
  paidAt: `2026-${date}T10:00:00.000Z`,
});

/** The history of these payouts recorded one after the other, each as its own batch. */
const recorded = (...payouts: PayeePayment[]): PayeeHistory =>
  payouts.reduce<PayeeHistory | undefined>(
    (history, payout) => withPayment(history, payout, payout.reference),
    undefined,
  )!;

/** A history as one written before paydays named their account (no accountTag). */
const untagged = (history: PayeeHistory): PayeeHistory => ({
  ...history,
  payments: history.payments!.map(({ accountTag: _, ...payday }) => payday),
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

// Three payouts to account A (acct-1) and one to B (acct-2) of one payee, as the tables use them.
const g1 = on('11-02', 'G-1', '100.00');
const g2 = on('11-10', 'G-2', '100.00');
const g3 = on('11-20', 'G-3', '100.00');
const big = on('11-10', 'G-BIG', '900.00');
const b1 = on('11-05', 'B-1', '50.00', 'acct-2');

describe("a failed payout leaves its payee's history (rules.ts withoutPayment)", () => {
  it.each([
    {
      case: "the last payout to an account fails: the account's earlier payout keeps it known",
      history: recorded(g1, g2),
      failed: 'G-2',
      accounts: [g1],
      payments: [g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'two payouts in flight to a known account both fail: the one that counted stays',
      history: withoutPayment(recorded(g1, g2, g3), 'G-3'),
      failed: 'G-2',
      accounts: [g1],
      payments: [g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'an earlier payout to the account fails: the last one stays as it was',
      history: recorded(g1, g2, g3),
      failed: 'G-2',
      accounts: [g3],
      payments: [g3, g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'the only payout to an account fails: the account is not known, the other is',
      history: recorded(g1, b1, { ...g2, account: 'acct-3', accountHint: 'account ****ct-3' }),
      failed: 'G-2',
      accounts: [b1, g1],
      payments: [b1, g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'the largest payout fails: the largest is the next one, its account the earlier payout',
      history: recorded(g1, b1, big),
      failed: 'G-BIG',
      accounts: [b1, g1],
      payments: [b1, g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'the only payout in a currency fails: that currency has no largest',
      history: recorded(g1, { ...paid('M-1', '31.00', 'acct-4', 'MXN'), paidAt: '2026-11-12T10:00:00.000Z' }),
      failed: 'M-1',
      accounts: [g1],
      payments: [g1],
      largest: { USD: '100.00' },
    },
    {
      case: 'a history from before paydays named their account: the account is taken for a new one',
      history: untagged(recorded(g1, g2)),
      failed: 'G-2',
      accounts: [],
      payments: [{ reference: 'G-1', paidAt: g1.paidAt, amount: '100.00', currency: 'USD' }],
      largest: { USD: '100.00' },
    },
    {
      case: 'a history from before paydays were kept: its accounts stand in, the failed one goes',
      history: { accounts: [g1], largest: { USD: '100.00' }, batch: 'G-1' },
      failed: 'G-1',
      accounts: [],
      payments: [],
      largest: {},
    },
    {
      case: 'a reference the history does not hold: nothing changes',
      history: recorded(g1, b1),
      failed: 'NONE',
      accounts: [b1, g1],
      payments: [b1, g1],
      largest: { USD: '100.00' },
    },
  ])('$case', ({ history, failed, accounts, payments, largest }) => {
    const left = withoutPayment(history, failed);
    expect(left.accounts).toEqual(accounts);
    expect(left.payments).toEqual(payments.map((p) => ('account' in p ? day(p) : p)));
    expect(left.largest).toEqual(largest);
    expect(left.batch).toBe(history.batch);
  });

  it('takes the failed payout out of what stood before the batch too, by the same rule', () => {
    // G-2 recorded by the November batch, which G-3 continues; G-1 stood before it.
    let h = withPayment(recorded(g1), g2, 'november');
    h = withPayment(h, g3, 'november');
    const left = withoutPayment(withPayment(h, on('11-21', 'X', '1.00', 'acct-9'), 'november'), 'G-1');
    expect(left.before).toEqual({ accounts: [], payments: [], largest: {} });
    expect(left.accounts.map((a) => a.reference)).toEqual(['X', 'G-3']);
    expect(withoutPayment(h, 'G-3').accounts).toEqual([g2]);
    expect(withoutPayment(h, 'G-3').before).toEqual({
      accounts: [g1],
      payments: [day(g1)],
      largest: { USD: '100.00' },
    });
  });
});

describe("an outcome learnt later takes its payout's place by date (rules.ts withPayment)", () => {
  const h1 = on('11-02', 'H-1', '10.00', 'acct-A');
  const h2 = on('12-01', 'H-2', '10.00', 'acct-B');
  const h5 = on('12-05', 'H-5', '10.00', 'acct-A');
  it.each([
    {
      case: 'reconcile completes an older payout already recorded: the later account stays first',
      history: recorded(h1, h2),
      learnt: h1,
      accounts: [h2, h1],
      payments: [h2, h1],
    },
    {
      case: 'a payout first learnt late, to a new account, goes behind the later payouts',
      history: recorded(h2),
      learnt: h1,
      accounts: [h2, h1],
      payments: [h2, h1],
    },
    {
      case: 'a payout first learnt late to an account paid since: that later payout stays its last',
      history: recorded(h1, h2, h5),
      learnt: on('11-20', 'H-3', '10.00', 'acct-A'),
      accounts: [h5, h2],
      payments: [h5, h2, on('11-20', 'H-3', '10.00', 'acct-A'), h1],
    },
    {
      case: 'a payout learnt again with the time the register gave it: one payday, at that time',
      history: recorded(h1, h2),
      learnt: { ...h2, paidAt: '2026-12-01T10:00:05.000Z' },
      accounts: [{ ...h2, paidAt: '2026-12-01T10:00:05.000Z' }, h1],
      payments: [{ ...h2, paidAt: '2026-12-01T10:00:05.000Z' }, h1],
    },
  ])('$case', ({ history, learnt, accounts, payments }) => {
    const after = withPayment(history, learnt, history.batch);
    expect(after.accounts).toEqual(accounts);
    expect(after.payments).toEqual(payments.map(day));
  });

  it(`keeps the latest ${PAYEE_PAYMENTS_KEPT} paydays by date: one learnt older than all of them is not kept`, () => {
    const months = Array.from({ length: PAYEE_PAYMENTS_KEPT }, (_, i) =>
      on(`${String(i + 1).padStart(2, '0')}-15`, `M-${i + 1}`, '10.00'),
    );
    const after = withPayment(recorded(...months), on('01-01', 'OLD', '10.00'), 'learnt');
    expect(after.payments!.map((p) => p.reference)).toEqual(months.map((m) => m.reference).reverse());
    expect(after.accounts).toEqual([months.at(-1)]);
  });
});

describe('when a payout reconcile found on the service was paid (rules.ts sentAt)', () => {
  const now = '2026-12-20T09:00:00.000Z';
  it.each([
    { createdAt: '2026-11-26T14:30:00.000Z', paid: '2026-11-26T14:30:00.000Z' },
    { createdAt: '2026-11-26T14:30:00Z', paid: '2026-11-26T14:30:00.000Z' },
    { createdAt: '2026-11-26T09:30:00-05:00', paid: '2026-11-26T14:30:00.000Z' },
    { createdAt: '2026-11-26T14:30:00.123456+00:00', paid: '2026-11-26T14:30:00.123Z' },
    // Without a zone designator: UTC, whatever the machine's time zone.
    { createdAt: '2026-11-26T14:30:00.123', paid: '2026-11-26T14:30:00.123Z' },
    { createdAt: '2026-12-20T09:00:00.000Z', paid: '2026-12-20T09:00:00.000Z' },
    // Later than the register's now, unreadable, absent: the store keeps the time of the send.
    { createdAt: '2026-12-20T09:00:00.001Z', paid: undefined },
    { createdAt: 'yesterday', paid: undefined },
    { createdAt: '2026-11-26', paid: undefined },
    { createdAt: '2026-11-26T25:00:00Z', paid: undefined },
    { createdAt: undefined, paid: undefined },
  ])('created $createdAt: paid $paid', ({ createdAt, paid }) => {
    expect(sentAt(createdAt, now)).toBe(paid);
  });
});
