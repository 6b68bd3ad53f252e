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
});
