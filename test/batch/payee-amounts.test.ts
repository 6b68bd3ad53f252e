/** The previous batch's amounts per payee, a few bytes each: found again, added up, exact. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PayeeAmounts } from '../../src/batch/payee-amounts.js';

/** A payee key as a register makes it: an HMAC in 32 characters of base64url. */
const keyed = () => randomBytes(24).toString('base64url');

describe('PayeeAmounts', () => {
  it('finds every payee again as the index grows, and no other', () => {
    const amounts = new PayeeAmounts();
    const payees = Array.from({ length: 20_000 }, (_, i) => (i % 2 === 0 ? keyed() : `payee ${i}`));
    payees.forEach((payee, i) => {
      amounts.addPaid(payee, BigInt(i), 'USD');
    });
    expect(amounts.size).toBe(payees.length);
    const lost = payees.filter((payee, i) => amounts.find(payee) !== i);
    expect(lost).toEqual([]);
    expect(amounts.find(keyed())).toBe(-1);
    expect(amounts.find('payee 20001')).toBe(-1);
  });

  it('adds up each payee then and now, and lists those missing or paid another amount', () => {
    const amounts = new PayeeAmounts();
    amounts.addPaid('same', 100n, 'USD');
    amounts.addPaid('same', 50n, 'USD');
    amounts.addPaid('gone', 70n, 'USD');
    amounts.addPaid('zero', 0n, 'EUR');
    amounts.addPaid('more', 10n, 'EUR');
    amounts.addSheet('same', 150n, 'USD');
    amounts.addSheet('zero', 0n, 'EUR');
    amounts.addSheet('more', 11n, 'EUR');
    amounts.addSheet('stranger', 5n, 'USD');
    const listed = (payee: string) => amounts.listed(amounts.find(payee));
    expect(['same', 'gone', 'zero', 'more'].map(listed)).toEqual([false, true, false, true]);
    expect(amounts.amountsOf(amounts.find('gone'))).toEqual({
      paid: new Map([['USD', 70n]]),
      sheet: new Map(),
      seen: false,
    });
    expect(amounts.amountsOf(amounts.find('more'))).toEqual({
      paid: new Map([['EUR', 10n]]),
      sheet: new Map([['EUR', 11n]]),
      seen: true,
    });
    expect(amounts.find('stranger')).toBe(-1);
  });

  it('keeps a payee of several currencies, in the order they came, then and now', () => {
    const amounts = new PayeeAmounts();
    amounts.addPaid('two', 100n, 'USD');
    amounts.addPaid('two', 300n, 'MXN');
    amounts.addPaid('moved', 100n, 'USD');
    amounts.addSheet('moved', 40n, 'USD');
    amounts.addSheet('moved', 60n, 'EUR');
    amounts.addSheet('moved', 60n, 'USD');
    expect(amounts.amountsOf(amounts.find('two'))).toEqual({
      paid: new Map([
        ['USD', 100n],
        ['MXN', 300n],
      ]),
      sheet: new Map(),
      seen: false,
    });
    const moved = amounts.find('moved');
    expect(amounts.amountsOf(moved)).toEqual({
      paid: new Map([['USD', 100n]]),
      sheet: new Map([
        ['USD', 100n],
        ['EUR', 60n],
      ]),
      seen: true,
    });
    // USD the same, EUR new: still another amount.
    expect(amounts.listed(moved)).toBe(true);
  });

  it('adds amounts past 64 bits exactly', () => {
    const amounts = new PayeeAmounts();
    const large = 2n ** 62n;
    amounts.addPaid('large', large, 'USD');
    amounts.addPaid('large', large, 'USD');
    amounts.addSheet('large', large * 2n, 'USD');
    const entry = amounts.find('large');
    expect(amounts.amountsOf(entry).paid).toEqual(new Map([['USD', 2n ** 63n]]));
    expect(amounts.listed(entry)).toBe(false);
  });

  it('agrees with a Map of Maps for payees paid in several currencies, then and now', () => {
    const amounts = new PayeeAmounts();
    const model = new Map<string, { paid: Map<string, bigint>; sheet: Map<string, bigint>; seen: boolean }>();
    const currencies = ['USD', 'MXN', 'BRL', 'COP'];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const payees = Array.from({ length: 3_000 }, (_, i) => (i % 2 === 0 ? keyed() : `payee ${i}`));
    const add = (into: Map<string, bigint>, currency: string, minor: bigint) =>
      into.set(currency, (into.get(currency) ?? 0n) + minor);
    for (let i = 0; i < 12_000; i++) {
      const payee = payees[next(payees.length)]!;
      const currency = currencies[next(currencies.length)]!;
      // Now and then an amount past 64 bits, which moves the payee to a Map of its own.
      const minor = next(500) === 0 ? 2n ** 63n : BigInt(next(100_000));
      amounts.addPaid(payee, minor, currency);
      const held = model.get(payee) ?? { paid: new Map(), sheet: new Map(), seen: false };
      add(held.paid, currency, minor);
      model.set(payee, held);
    }
    for (let i = 0; i < 12_000; i++) {
      const payee = payees[next(payees.length)]!;
      const currency = currencies[next(currencies.length)]!;
      const minor = BigInt(next(100_000));
      amounts.addSheet(payee, minor, currency);
      const held = model.get(payee);
      if (held === undefined) continue;
      add(held.sheet, currency, minor);
      held.seen = true;
    }
    const differs = (held: { paid: Map<string, bigint>; sheet: Map<string, bigint>; seen: boolean }) =>
      !held.seen ||
      [...new Set([...held.paid.keys(), ...held.sheet.keys()])].some(
        (c) => (held.paid.get(c) ?? 0n) !== (held.sheet.get(c) ?? 0n),
      );
    const sorted = (map: ReadonlyMap<string, bigint>) => [...map].sort(([a], [b]) => a.localeCompare(b));
    let listed = 0;
    for (const [payee, held] of model) {
      const entry = amounts.find(payee);
      const kept = amounts.amountsOf(entry);
      expect(sorted(kept.paid)).toEqual(sorted(held.paid));
      expect(sorted(kept.sheet)).toEqual(sorted(held.sheet));
      expect(kept.seen).toBe(held.seen);
      expect(amounts.seen(entry)).toBe(held.seen);
      expect(amounts.currenciesPaid(entry)).toBe(held.paid.size);
      expect(amounts.listed(entry)).toBe(differs(held));
      if (differs(held)) listed += 1;
    }
    expect(amounts.anyListed()).toBe(listed > 0);
  });
});
