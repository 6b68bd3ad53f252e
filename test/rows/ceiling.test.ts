import { describe, expect, it } from 'vitest';
import { formatAmountForPeople } from '../../src/batch/summary.js';
import { AMOUNT_CEILING_MINOR, AMOUNT_CEILING_TEXT, amountCeilingProblem } from '../../src/rows/ceiling.js';

const TOO_MUCH = (shown: string) =>
  `amount "${shown}" is above 1,000,000,000,000.00, more than any real payout (a pasted account number?): fix the amount cell, or split the payout`;

describe('amountCeilingProblem (a hard ceiling no real payout reaches)', () => {
  it.each([
    ['a usual amount', 125050n, '1250.50', undefined],
    ['the ceiling itself', 100_000_000_000_000n, '1000000000000.00', undefined],
    ['one cent above', 100_000_000_000_001n, '1000000000000.01', TOO_MUCH('1000000000000.01')],
    [
      'the amount of the issue',
      9_999_999_999_999_999_999_999n,
      '99999999999999999999.99',
      TOO_MUCH('99999999999999999999.99'),
    ],
    ['a long cell, quoted to 80 characters', 10n ** 100n, '1'.repeat(101), TOO_MUCH(`${'1'.repeat(80)}…`)],
  ])('%s', (_name, minor, text, expected) => {
    expect(amountCeilingProblem(minor, text)).toBe(expected);
  });

  it('says the ceiling as it is, and stays exact in a double', () => {
    expect(formatAmountForPeople(AMOUNT_CEILING_MINOR)).toBe(AMOUNT_CEILING_TEXT);
    expect(AMOUNT_CEILING_MINOR * 90n).toBeLessThan(BigInt(Number.MAX_SAFE_INTEGER));
  });
});
