import { describe, expect, it } from 'vitest';
import { formatMinor, parseAmount, parseSheetAmount } from '../../src/rows/money.js';

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
    ['00.05', 5n, '0.05'],
    ['10.00', 1000n, '10.00'],
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
      'amount "-12.50" is negative: a payout amount must be greater than 0, so remove the row or fix the amount cell',
    ],
    [
      '-0',
      'amount "-0" is negative: a payout amount must be greater than 0, so remove the row or fix the amount cell',
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

describe('parseSheetAmount (amounts as spreadsheets export them)', () => {
  const DOT = { decimalComma: false };
  const COMMA = { decimalComma: true };

  it.each([
    ['1250.00', DOT, 125000n, undefined],
    ['1,250.00', DOT, 125000n, true],
    ['12,345,678.9', DOT, 1234567890n, true],
    ['1,234,567', DOT, 123456700n, true],
    ['1 250.00', DOT, 125000n, true],
    ['1\u00a0250.00', DOT, 125000n, true],
    ['1\u202f250.5', DOT, 125050n, true],
    ["1'250.00", DOT, 125000n, true],
    [' 1,250.00 ', DOT, 125000n, true],
    ['1.250,00', COMMA, 125000n, true],
    ['1.234.567', COMMA, 123456700n, true],
    ['1 250,5', COMMA, 125050n, true],
    ['12,50', COMMA, 1250n, true],
    ['1,250.00', COMMA, 125000n, true],
  ])('reads %j (decimal comma: %o)', (text, numbers, minor, grouped) => {
    const parsed = parseSheetAmount(text, numbers);
    expect(parsed).toEqual(
      grouped
        ? { ok: true, minor, text: formatMinor(minor), grouped }
        : { ok: true, minor, text: formatMinor(minor) },
    );
  });

  it.each([
    [
      '1,250',
      DOT,
      'amount "1,250" is ambiguous: it is 1250.00 if the separator groups thousands, or 1.25 if it marks the decimals. Write it without grouping (1250.00 or 1.25)',
    ],
    [
      '1.250',
      DOT,
      'amount "1.250" is ambiguous: it is 1250.00 if the separator groups thousands, or 1.25 if it marks the decimals. Write it without grouping (1250.00 or 1.25)',
    ],
    [
      '1,250',
      COMMA,
      'amount "1,250" is ambiguous: it is 1250.00 if the separator groups thousands, or 1.25 if it marks the decimals. Write it without grouping (1250.00 or 1.25)',
    ],
    [
      '1.250,00',
      DOT,
      'amount "1.250,00" uses a decimal comma, which only a semicolon-delimited CSV makes certain: write it as 1250.00 with a "." for the decimals',
    ],
    [
      // No comma in it: what it has is "." grouping, which a dot-decimal sheet cannot have.
      '1.234.567',
      DOT,
      'amount "1.234.567" groups thousands with ".", which marks the decimals in this sheet: write it as 1234567.00, without grouping',
    ],
    [
      '1,250.005',
      DOT,
      'amount "1,250.005" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)',
    ],
    [
      '0.125',
      DOT,
      'amount "0.125" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)',
    ],
    [
      '1,25,000.00',
      DOT,
      'amount "1,25,000.00" is not a decimal number with a "." (e.g. 1250.00): fix the amount cell',
    ],
    [
      '-1,250.00',
      DOT,
      'amount "-1,250.00" is negative: a payout amount must be greater than 0, so remove the row or fix the amount cell',
    ],
  ])('refuses %j (decimal comma: %o)', (text, numbers, message) => {
    expect(parseSheetAmount(text, numbers)).toEqual({ ok: false, message });
  });

  it('never echoes more than ~80 characters of a cell, on one line', () => {
    const parsed = parseSheetAmount(`12\n${'9'.repeat(5000)}`, DOT);
    expect(parsed.ok).toBe(false);
    const message = parsed.ok ? '' : parsed.message;
    expect(message).not.toMatch(/\n/);
    expect(message.length).toBeLessThan(200);
  });
});
