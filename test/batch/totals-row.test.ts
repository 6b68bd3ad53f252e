import { describe, expect, it } from 'vitest';
import { isTotalsRow, TotalsRowCheck, totalsRowGuard } from '../../src/batch/totals-row.js';
import type { PayoutRow } from '../../src/rows/types.js';
import type { Cell } from '../../src/sheet/types.js';

const text = (t: string): Cell => (t === '' ? { text: '', kind: 'empty' } : { text: t, kind: 'string' });
const sum = (t: string): Cell => ({ text: t, kind: 'number', formula: true, sum: true });

describe('isTotalsRow (reference in column 0, amount in column 1)', () => {
  it.each([
    ['TOTAL in the reference column', [text('TOTAL'), text('2700')], true],
    ['Total: in another column', [text(''), text('2700'), text('Total:')], true],
    ['Grand total', [text(''), text('2700'), text('Grand total')], true],
    ['Subtotal', [text('Subtotal'), text('10')], true],
    ['Sum', [text('sum'), text('10')], true],
    ['a SUM formula in the amount column, no label', [text(''), sum('2700')], true],
    ['a payout with a reference', [text('INV-1'), text('10'), text('Total')], false],
    ['a SUM formula on a payout row', [text('INV-1'), sum('10')], false],
    ['no reference and no label: an invalid payout, not a totals row', [text(''), text('10')], false],
    ['a label inside longer text', [text(''), text('10'), text('Total of March')], false],
  ])('%s', (_label, cells, expected) => {
    expect(isTotalsRow(cells, 0, 1)).toBe(expected);
  });
});

function payout(rowNumber: number, minor: bigint | undefined, currency?: string): PayoutRow {
  const row: PayoutRow = {
    rowNumber,
    reference: '',
    beneficiary: { kind: 'missing' },
    recipient: { kind: 'existing', id: 'r' },
    issues: [],
  };
  if (minor !== undefined) row.amount = { minor, text: '' };
  if (currency !== undefined) row.currency = currency;
  return row;
}

describe('TotalsRowCheck', () => {
  it('matches the sum of the rows above, in the only currency', () => {
    const check = new TotalsRowCheck();
    check.add(payout(2, 30030n, 'USD'));
    check.add(payout(3, 125000n, 'USD'));
    expect(check.judge(payout(4, 155030n), '1,550.30')).toEqual({
      message: 'row 4 is the totals row, not a payout: its amount USD 1,550.30 matches the 2 rows above it',
    });
  });

  it('reports a mismatch, in the currency the totals row names', () => {
    const check = new TotalsRowCheck();
    check.add(payout(2, 100n, 'USD'));
    check.add(payout(3, 500n, 'MXN'));
    const finding = check.judge(payout(4, 600n, 'MXN'), '6.00');
    expect(finding.mismatch).toBe(
      'the totals row (row 4) says MXN 6.00 but the 2 rows above it add up to MXN 5.00',
    );
    expect(totalsRowGuard([finding.mismatch!])?.message).toBe(
      'control totals do not match, so nothing was sent: the totals row (row 4) says MXN 6.00 but the 2 rows above it add up to MXN 5.00',
    );
  });

  it('does not guess between several currencies, and says so', () => {
    const check = new TotalsRowCheck();
    check.add(payout(2, 100n, 'USD'));
    check.add(payout(3, 500n, 'MXN'));
    expect(check.judge(payout(4, 600n), '6.00')).toEqual({
      message:
        'row 4 is the totals row, not a payout: the rows above it are in several currencies (MXN, USD) and it names none, so it was not checked',
    });
    expect(check.judge(payout(5, undefined), undefined).message).toBe(
      'row 5 is the totals row, not a payout: it has no amount, so it was not checked',
    );
  });
});
