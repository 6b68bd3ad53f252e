import { describe, expect, it } from 'vitest';
import { FingerprintSet, ReferenceTable } from '../../src/batch/references.js';

describe('ReferenceTable', () => {
  it('gives the first row of a reference seen before, and undefined for a new one', () => {
    const table = new ReferenceTable(4);
    expect(table.claim('INV-1', 2)).toBeUndefined();
    expect(table.claim('INV-2', 3)).toBeUndefined();
    expect(table.claim('INV-1', 9)).toBe(2);
    expect(table.claim('INV-1', 10)).toBe(2);
    expect(table.claim('inv-1', 11)).toBeUndefined();
  });

  it('keeps every reference through growth: 200,000 distinct ones, then each again', () => {
    const table = new ReferenceTable(16);
    for (let i = 0; i < 200_000; i++) expect(table.claim(`PAY-${i}`, i + 2)).toBeUndefined();
    for (let i = 0; i < 200_000; i += 997) expect(table.claim(`PAY-${i}`, 1_000_000)).toBe(i + 2);
  });

  it('tells apart references that differ only in order or by one character', () => {
    const table = new ReferenceTable();
    const refs = ['ab', 'ba', 'a', 'aa', '', 'A-0001', 'A-0010', 'A-0100', 'A-1000', 'ñ', 'n\u0303'];
    for (const [i, r] of refs.entries()) expect(table.claim(r, i + 2), r).toBeUndefined();
  });
});

describe('FingerprintSet', () => {
  it('keeps every payment through growth: 200,000 distinct ones, then each again', () => {
    const set = new FingerprintSet(16);
    for (let i = 0; i < 200_000; i++) expect(set.add(`payee-${i}`, `${i}.00`, 'USD')).toBe(false);
    for (let i = 0; i < 200_000; i += 997) expect(set.add(`payee-${i}`, `${i}.00`, 'USD')).toBe(true);
    // Another amount or currency is another payment.
    expect(set.add('payee-5', '5.01', 'USD')).toBe(false);
    expect(set.add('payee-5', '5.00', 'MXN')).toBe(false);
  });
});
