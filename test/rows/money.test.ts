import { describe, expect, it } from 'vitest';
import { formatMinor, parseAmount } from '../../src/rows/money.js';

describe('parseAmount', () => {
  it.each([
    ['1250.00', 125000n, '1250.00'],
    ['1250', 125000n, '1250.00'],
    ['1250.5', 125050n, '1250.50'],
    ['0.01', 1n, '0.01'],
    ['0.1', 10n, '0.10'],
    ['  42.10 ', 4210n, '42.10'],
    ['\t7\n', 700n, '7.00'],
    ['007.50', 750n, '7.50'],
    ['99999999999999999999.99', 9999999999999999999999n, '99999999999999999999.99'],
    // A float would turn 0.29 into 0.28999999999999998; bigint cannot.
    ['0.29', 29n, '0.29'],
    ['1234567890123456.78', 123456789012345678n, '1234567890123456.78'],
  ])('accepts %j as %s minor units (%s)', (text, minor, normalised) => {
    expect(parseAmount(text)).toEqual({ ok: true, minor, text: normalised });
  });

  it.each([
    ['', 'amount is required: enter the amount the recipient receives, e.g. 1250.00'],
    ['   ', 'amount is required: enter the amount the recipient receives, e.g. 1250.00'],
    ['12,50', 'amount "12,50" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['1,250', 'amount "1,250" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['1.234,56', 'amount "1.234,56" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['$12.50', 'amount "$12.50" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    [
      '12.50 USD',
      'amount "12.50 USD" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell',
    ],
    ['.50', 'amount ".50" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['12.', 'amount "12." is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['abc', 'amount "abc" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['NaN', 'amount "NaN" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['Infinity', 'amount "Infinity" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['0x10', 'amount "0x10" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    ['１２', 'amount "１２" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell'],
    [
      '1,234.50',
      'amount "1,234.50" has a thousands separator: write it without separators and with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '1,234,567',
      'amount "1,234,567" has a thousands separator: write it without separators and with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '1 234.50',
      'amount "1 234.50" has a thousands separator: write it without separators and with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      "1'234.50",
      'amount "1\'234.50" has a thousands separator: write it without separators and with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '1E+3',
      'amount "1E+3" is in scientific notation: write the full amount with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '1.5e2',
      'amount "1.5e2" is in scientific notation: write the full amount with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '1e-7',
      'amount "1e-7" is in scientific notation: write the full amount with a "." for the decimals (e.g. 1250.00)',
    ],
    [
      '-12.50',
      'amount "-12.50" is negative: a payout amount must be greater than 0 - remove the row or fix the amount cell',
    ],
    [
      '-0',
      'amount "-0" is negative: a payout amount must be greater than 0 - remove the row or fix the amount cell',
    ],
    ['+12.50', 'amount "+12.50" has a sign: write the amount without "+" (e.g. 1250.00)'],
    ['12.345', 'amount "12.345" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)'],
    [
      '0.30000000000000004',
      'amount "0.30000000000000004" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)',
    ],
    ['12.500', 'amount "12.500" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)'],
    ['0', 'amount "0" is not greater than 0: enter the amount to pay, or remove the row'],
    ['0.00', 'amount "0.00" is not greater than 0: enter the amount to pay, or remove the row'],
  ])('refuses %j', (text, message) => {
    expect(parseAmount(text)).toEqual({ ok: false, message });
  });

  it('quotes the amount trimmed', () => {
    expect(parseAmount('  12,50  ')).toEqual({
      ok: false,
      message: 'amount "12,50" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell',
    });
  });
});

describe('formatMinor', () => {
  it.each([
    [0n, '0.00'],
    [1n, '0.01'],
    [10n, '0.10'],
    [100n, '1.00'],
    [123450n, '1234.50'],
    [-5n, '-0.05'],
    [-123456n, '-1234.56'],
    [123456789012345678901234567890n, '1234567890123456789012345678.90'],
  ])('%s → %s', (minor, text) => {
    expect(formatMinor(minor)).toBe(text);
  });

  it('round-trips with parseAmount', () => {
    for (const text of ['0.01', '0.99', '1.00', '10.10', '123456.78']) {
      const parsed = parseAmount(text);
      expect(parsed.ok && formatMinor(parsed.minor)).toBe(text);
    }
  });
});
