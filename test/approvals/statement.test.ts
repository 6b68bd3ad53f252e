import { describe, expect, it } from 'vitest';
import { StatementError } from '../../src/approvals/errors.js';
import {
  type ApprovalStatement,
  approvalStatement,
  parseStatement,
  utcDay,
} from '../../src/approvals/statement.js';

const DIGEST = 'a3f1c2d4e5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

function sample(overrides: Partial<ApprovalStatement> = {}): ApprovalStatement {
  return {
    digest: DIGEST,
    origin: 'https://payments.example.com',
    sheet: 'payouts-2026-11.csv',
    validRows: 1204,
    // Inserted out of order: the text sorts them.
    validTotals: new Map([
      ['USD', 1_500_075n],
      ['BRL', 31_500_000_000n],
      ['EUR', 125_000n],
    ]),
    day: '2026-11-26',
    ...overrides,
  };
}

function refusedWith(text: string, message: RegExp): void {
  let error: unknown;
  try {
    parseStatement(text);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(StatementError);
  expect((error as Error).message).toMatch(message);
}

describe('approvalStatement', () => {
  it('writes one field a line, totals sorted by currency as decimal strings, ending with a newline', () => {
    expect(approvalStatement(sample())).toBe(
      [
        'payouts approval v1',
        `digest: ${DIGEST}`,
        'origin: https://payments.example.com',
        'sheet: payouts-2026-11.csv',
        'valid rows: 1204',
        'total BRL: 315000000.00',
        'total EUR: 1250.00',
        'total USD: 15000.75',
        'day: 2026-11-26',
        '',
      ].join('\n'),
    );
  });

  it('gives the same bytes for the same input, whatever order the totals came in', () => {
    const reordered = sample({
      validTotals: new Map([
        ['EUR', 125_000n],
        ['USD', 1_500_075n],
        ['BRL', 31_500_000_000n],
      ]),
    });
    expect(approvalStatement(reordered)).toBe(approvalStatement(sample()));
  });

  it('writes a sheet without valid rows with no total lines', () => {
    const text = approvalStatement(sample({ validRows: 0, validTotals: new Map() }));
    expect(text).toContain('valid rows: 0\nday: 2026-11-26\n');
    expect(parseStatement(text).validTotals.size).toBe(0);
  });

  it('keeps amounts beyond 2^53 exact (money is never a float)', () => {
    const huge = 9_007_199_254_740_993_01n; // 9007199254740993.01
    const text = approvalStatement(sample({ validTotals: new Map([['COP', huge]]) }));
    expect(text).toContain('total COP: 9007199254740993.01\n');
    expect(parseStatement(text).validTotals.get('COP')).toBe(huge);
  });

  it('writes the sheet name in Unicode NFC, so a name typed on macOS gives the same bytes', () => {
    const decomposed = 'Jose\u0301 payouts.csv';
    expect(approvalStatement(sample({ sheet: decomposed }))).toContain('sheet: Jos\u00e9 payouts.csv\n');
  });

  it('refuses input that would not read back: a line break in the name, a bad digest, origin or day', () => {
    expect(() => approvalStatement(sample({ sheet: 'a\nday: 2020-01-01' }))).toThrow(/rename the file/);
    expect(() => approvalStatement(sample({ digest: DIGEST.toUpperCase() }))).toThrow(/not a batch digest/);
    expect(() => approvalStatement(sample({ origin: 'https://payments.example.com/v1' }))).toThrow(
      /not a service origin/,
    );
    expect(() => approvalStatement(sample({ day: '2026-02-30' }))).toThrow(/not a day/);
    expect(() => approvalStatement(sample({ validRows: 1.5 }))).toThrow(/whole number/);
    expect(() => approvalStatement(sample({ validTotals: new Map([['usd', 1n]]) }))).toThrow(/currency code/);
    expect(() => approvalStatement(sample({ validTotals: new Map([['USD', -1n]]) }))).toThrow(/negative/);
  });

  it('gives the UTC day of a moment', () => {
    expect(utcDay(Date.parse('2026-11-26T23:59:59.999Z'))).toBe('2026-11-26');
    expect(utcDay(Date.parse('2026-11-27T00:00:00+01:00'))).toBe('2026-11-26');
  });
});

describe('parseStatement', () => {
  const text = approvalStatement(sample());

  it('reads back what approvalStatement wrote', () => {
    const parsed = parseStatement(text);
    expect(parsed).toEqual({ ...sample(), validTotals: expect.any(Map) });
    expect([...parsed.validTotals]).toEqual([
      ['BRL', 31_500_000_000n],
      ['EUR', 125_000n],
      ['USD', 1_500_075n],
    ]);
    expect(approvalStatement(parsed)).toBe(text);
  });

  it('refuses an unknown version and text that is not a statement', () => {
    refusedWith(
      text.replace('payouts approval v1', 'payouts approval v2'),
      /format v2, but this payouts reads v1/,
    );
    refusedWith(`hello\n${text}`, /not a payouts approval statement/);
    refusedWith('', /does not end with a line break/);
  });

  it('refuses a missing field, naming it', () => {
    refusedWith(text.replace(/^origin: .*\n/m, ''), /no "origin" line/);
    refusedWith(text.replace(/^day: .*\n/m, ''), /no "day" line/);
    refusedWith(text.replace(/^valid rows: .*\n/m, ''), /no "valid rows" line/);
  });

  it('refuses a duplicate field, naming it', () => {
    refusedWith(text.replace(/^(sheet: .*\n)/m, '$1$1'), /field "sheet" twice/);
    refusedWith(text.replace(/^(total EUR: .*\n)/m, '$1$1'), /field "total EUR" twice/);
  });

  it('refuses extra text: after the day, an unknown field, an empty line, a line without a value', () => {
    refusedWith(`${text}approved by: alice\n`, /unknown field "approved by"/);
    refusedWith(`${text}total GBP: 1.00\n`, /text after its "day" line/);
    refusedWith(text.replace('valid rows', 'valid rows:\n\nx'), /empty line|not "field: value"/);
    refusedWith(text.replace('day: 2026-11-26\n', 'day: 2026-11-26\n\n'), /empty line 10/);
    refusedWith(
      text.replace('digest: ', 'digest:'),
      /line 2 of this approval statement is not "field: value"/,
    );
    refusedWith(text.replace(/\n$/, ''), /does not end with a line break/);
  });

  it('refuses fields out of order, Windows line ends, and values of the wrong shape', () => {
    const swapped = text.replace(/^(origin: .*\n)(sheet: .*\n)/m, '$2$1');
    refusedWith(swapped, /not in payouts' order/);
    refusedWith(
      text.replace(
        'total BRL: 315000000.00\ntotal EUR: 1250.00',
        'total EUR: 1250.00\ntotal BRL: 315000000.00',
      ),
      /order/,
    );
    refusedWith(text.replace(/\n/g, '\r\n'), /Windows line endings/);
    refusedWith(text.replace('1250.00', '1250.5'), /total EUR .* not an amount like 1234.50/);
    refusedWith(text.replace('1250.00', '1.25e3'), /not an amount/);
    refusedWith(text.replace('valid rows: 1204', 'valid rows: 01204'), /not a whole number/);
    refusedWith(text.replace('2026-11-26', '2026-13-01'), /not a day/);
    refusedWith(text.replace(DIGEST, DIGEST.slice(1)), /not a batch digest/);
  });
});
