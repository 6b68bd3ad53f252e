import { describe, expect, it } from 'vitest';
import { historyFromText, historyText } from '../../src/register/history-text.js';
import { historyFor, paydayTag, paymentsOf, withoutPayment, withPayment } from '../../src/register/rules.js';
import type { PayeeHistory, PayeeLayer, PayeePayment } from '../../src/register/types.js';
import { payeePayment } from '../helpers/claims.js';

/** A payout of USD `amount` to `account` (a keyed hash) paid on `date` of 2026 at 10:00 UTC. */
const on = (date: string, reference: string, amount: string, account = 'hashOneAccount'): PayeePayment => ({
  ...payeePayment(reference, amount, account),
  paidAt: `2026-${date}T10:00:00.000Z`,
});

/** Payouts recorded one after the other, each its own batch (the reference names it). */
const recorded = (...payouts: PayeePayment[]): PayeeHistory =>
  payouts.reduce<PayeeHistory | undefined>(
    (history, payout) => withPayment(history, payout, payout.reference, 'Ana Pérez'),
    undefined,
  )!;

/** Monthly to one account, then twice to a second one: paydays that are and are not an account's last. */
const twoAccounts = () =>
  recorded(
    on('08-28', 'AUG', '100.00'),
    on('09-28', 'SEP', '100.00'),
    on('10-28', 'OCT-A', '100.00'),
    on('10-29', 'OCT-B', '40.00', 'hashTwoAccount'),
  );

describe("a payee's history as the register stores it (history-text.ts)", () => {
  it('writes a payday that is its account’s last payout as that account’s index, and the others whole', () => {
    const stored = JSON.parse(historyText(twoAccounts()));
    expect(stored.accounts.map((paid: PayeePayment) => paid.reference)).toEqual(['OCT-B', 'OCT-A']);
    // The earlier paydays to account one, no longer its last payout: written whole.
    const whole = (reference: string, date: string) => ({
      reference,
      paidAt: `2026-${date}T10:00:00.000Z`,
      amount: '100.00',
      currency: 'USD',
      accountTag: 'hashOneA',
    });
    const older = [whole('SEP', '09-28'), whole('AUG', '08-28')];
    expect(stored.paydays).toEqual([0, 1, ...older]);
    // Before OCT-B's batch, OCT-A was account one's last payout and the only account.
    expect(stored.before.paydays).toEqual([0, ...older]);
    expect(stored).toMatchObject({ largest: { USD: '100.00' }, batch: 'OCT-B', name: 'Ana Pérez' });
  });

  it('reads each such payday back as the account’s payout itself, with the same reference, date, amount and account', () => {
    const history = twoAccounts();
    const read = historyFromText(historyText(history));
    expect(read.payments![0]).toBe(read.accounts[0]);
    expect(read.payments![1]).toBe(read.accounts[1]);
    expect(read.before!.payments![0]).toBe(read.before!.accounts[0]);
    const seen = (h: PayeeLayer) =>
      paymentsOf(h).map((payday) => [
        payday.reference,
        payday.paidAt,
        payday.amount,
        payday.currency,
        paydayTag(payday),
      ]);
    expect(seen(read)).toEqual(seen(history));
    expect(seen(read.before!)).toEqual(seen(history.before!));
    expect(read.accounts).toEqual(history.accounts);
    expect(historyText(read)).toBe(historyText(history));
  });

  it('is a third shorter than the paydays written whole, for a payee paid on three accounts once each', () => {
    const history = recorded(
      on('10-28', 'A', '10.00', 'hashOneAccount'),
      on('10-28', 'B', '11.00', 'hashTwoAccount'),
      on('10-28', 'C', '12.00', 'hashThreeAccount'),
    );
    const { before: _, ...current } = history;
    const whole = JSON.stringify(current);
    expect(JSON.parse(historyText(current)).paydays).toEqual([0, 1, 2]);
    expect(historyText(current).length).toBeLessThan(whole.length * 0.7);
  });

  it('reads a history written before (paydays whole) as it was, and writes it in the shorter form', () => {
    const old = JSON.stringify(twoAccounts());
    expect(historyFromText(old)).toEqual(JSON.parse(old));
    expect(historyText(historyFromText(old))).toBe(historyText(twoAccounts()));
  });

  it('keeps a payday written before paydays named their account untagged, even when it matches an account', () => {
    const { before: _, ...history } = recorded(on('10-28', 'OCT', '100.00'));
    const untagged = {
      ...history,
      payments: [{ reference: 'OCT', paidAt: '2026-10-28T10:00:00.000Z', amount: '100.00', currency: 'USD' }],
    };
    const read = historyFromText(historyText(untagged));
    expect(read.payments).toEqual(untagged.payments);
    expect(paydayTag(read.payments![0]!)).toBeUndefined();
  });

  it('applies the rules to a history read back exactly as to the one written', () => {
    const history = twoAccounts();
    const read = () => historyFromText(historyText(history));
    const next = on('11-28', 'NOV', '100.00');
    // A failed payout leaves; its account stays known through an earlier payday to it.
    expect(historyText(withoutPayment(read(), 'OCT-A'))).toBe(historyText(withoutPayment(history, 'OCT-A')));
    const failed = withoutPayment(read(), 'OCT-A');
    expect(failed.accounts.map((paid) => [paid.account, paid.reference])).toEqual([
      ['hashTwoAccount', 'OCT-B'],
      ['hashOneAccount', 'SEP'],
    ]);
    expect(historyText(withoutPayment(read(), 'OCT-B'))).toBe(historyText(withoutPayment(history, 'OCT-B')));
    expect(historyText(withPayment(read(), next, 'NOV'))).toBe(
      historyText(withPayment(history, next, 'NOV')),
    );
    expect(historyFor(read(), 'OCT-B')).toEqual(historyFor(historyFromText(historyText(history)), 'OCT-B'));
  });

  it('gives a payouts from before, reading with JSON.parse, a history without paydays, which it writes back whole', () => {
    const asRead = JSON.parse(historyText(twoAccounts())) as PayeeHistory;
    expect(asRead.payments).toBeUndefined();
    // Such a payouts takes each account's last payout for the paydays, and writes them whole.
    expect(paymentsOf(asRead).map((payday) => payday.reference)).toEqual(['OCT-B', 'OCT-A']);
    const written = JSON.stringify(withPayment(asRead, on('11-28', 'NOV', '100.00'), 'NOV'));
    expect(JSON.parse(written).paydays).toBeUndefined();
    const read = historyFromText(written);
    expect(read.payments!.map((payday) => [payday.reference, paydayTag(payday)])).toEqual([
      ['NOV', 'hashOneA'],
      ['OCT-B', 'hashTwoA'],
      ['OCT-A', 'hashOneA'],
    ]);
  });

  it('reads a history from which a payouts from before took a failed payout by the paydays it wrote', () => {
    // Such a payouts keeps the fields it does not know (`paydays`, indexing the accounts as they
    // were) and writes the paydays it computed under `payments`.
    const asRead = JSON.parse(historyText(twoAccounts())) as PayeeHistory;
    const written = JSON.parse(JSON.stringify(withoutPayment(asRead, 'OCT-B')));
    expect(written.paydays).toEqual([0, 1, expect.anything(), expect.anything()]);
    expect(written.accounts.map((paid: PayeePayment) => paid.reference)).toEqual(['OCT-A']);
    const read = historyFromText(JSON.stringify(written));
    expect(read.accounts.map((paid) => paid.reference)).toEqual(['OCT-A']);
    expect(read.payments!.map((payday) => [payday.reference, paydayTag(payday)])).toEqual([
      ['OCT-A', 'hashOneA'],
    ]);
    expect(JSON.parse(historyText(read)).paydays).toEqual([0]);
  });

  it('refuses a text whose payday names an account the history does not hold', () => {
    const stored = JSON.parse(historyText(twoAccounts()));
    stored.paydays[1] = 5;
    expect(() => historyFromText(JSON.stringify(stored))).toThrow(
      "a payee history names account 5 of 2 as a payday's (the register is damaged)",
    );
  });
});
