import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIRED_COLUMNS } from '../../src/columns/columns.js';
import { SheetError, UsageError } from '../../src/errors.js';
import { loadColumnsMap, matchHeaders, normaliseHeader } from '../../src/sheet/headers.js';
import { rejection, useTempDirs } from './tmp.js';

const file = 'payouts.csv';

describe('normaliseHeader', () => {
  it('ignores case, spaces, underscores, hyphens and dots (docs/sheets.md)', () => {
    for (const header of [
      'Routing Number',
      'routing_number',
      'routingNumber',
      'ROUTING-NUMBER',
      ' routing.number ',
    ]) {
      expect(normaliseHeader(header)).toBe('routingnumber');
    }
    expect(normaliseHeader('recipientAddress.street1')).toBe(normaliseHeader('Recipient Address Street1'));
  });
});

describe('matchHeaders', () => {
  it('maps human spellings onto the canonical columns and keeps the rest as unknown', () => {
    const match = matchHeaders(
      [
        'Reference',
        'AMOUNT',
        'currency',
        'Type',
        'Routing Number',
        'Recipient Address Street1',
        'Cost centre',
      ],
      { file },
    );
    expect(Object.fromEntries(match.index)).toEqual({
      reference: 0,
      amount: 1,
      currency: 2,
      type: 3,
      routingNumber: 4,
      'recipientAddress.street1': 5,
    });
    expect(match.unknown).toEqual(['Cost centre']);
    expect(match.ignored).toEqual([]);
  });

  it('ignores result.* columns on input so a results file can be fed back', () => {
    const match = matchHeaders(
      ['reference', 'amount', 'currency', 'type', 'result.status', ' RESULT.errors'],
      { file },
    );
    expect(match.ignored).toEqual([4, 5]);
    expect(match.unknown).toEqual([]);
    expect(match.index.has('reference')).toBe(true);
  });

  it('names blank header cells by position, but not the blank ones at the end', () => {
    const match = matchHeaders(['reference', 'amount', '', 'currency', 'type', '', '  '], { file });
    expect(match.unknown).toEqual(['(column 3)']);
  });

  it('refuses a missing required header, naming every missing one and what is expected', () => {
    const error = catchError(() => matchHeaders(['reference', 'Currency', 'note'], { file }));
    expect(error).toBeInstanceOf(SheetError);
    expect(error.message).toContain('payouts.csv: missing required columns amount, type');
    expect(error.message).toContain(
      `the header row (the first row, or one of the first 10 below a title) must hold the headers ${REQUIRED_COLUMNS.join(', ')}`,
    );
    expect(error.message).toContain('The header row read holds "reference", "Currency", "note"');
    expect(error.message).not.toContain('; ');
  });

  it('keeps the message on one line and bounded: a header with a line break, a 3 MB header', () => {
    const huge = 'x'.repeat(3 * 1024 * 1024);
    const error = catchError(() => matchHeaders(['reference', 'Amount\n(USD)', huge], { file }));
    expect(error.message).not.toMatch(/[\r\n]/);
    expect(error.message.length).toBeLessThan(1000);
    expect(error.message).toContain(
      `The header row read holds "reference", "Amount\\n(USD)", "${'x'.repeat(80)}…"`,
    );
  });

  it('names the worksheet and row read, and the other sheets (a "Summary" sheet first)', () => {
    const place = { worksheet: 'Summary', rowNumber: 1, worksheets: ['Summary', 'Notes'] };
    const error = catchError(() => matchHeaders(['Month', 'Total'], { file, place }));
    expect(error.message).toBe(
      'payouts.csv: missing required columns reference, amount, currency, type in worksheet "Summary" (row 1): the header row (the first row, or one of the first 10 below a title) must hold the headers reference, amount, currency, type (case, spaces, underscores, hyphens and dots do not matter, and --columns FILE maps other names). The header row read holds "Month", "Total". The workbook\'s other sheets ("Notes") do not have them either within their first 10 rows: fix the headers, or name the sheet with --sheet',
    );
  });

  it('refuses two headers that mean the same column, naming both', () => {
    const error = catchError(() =>
      matchHeaders(['reference', 'amount', 'currency', 'type', 'Routing Number', 'routing_number'], { file }),
    );
    expect(error).toBeInstanceOf(SheetError);
    expect(error.message).toBe(
      'payouts.csv: the headers "Routing Number" (column 5) and "routing_number" (column 6) both mean the column routingNumber: keep one of them, or rename the other',
    );
  });

  it('reports duplicates and missing columns in one message', () => {
    const error = catchError(() => matchHeaders(['reference', 'Reference', 'amount'], { file }));
    expect(error.message).toMatch(
      /"reference" \(column 1\) and "Reference" \(column 2\).*, and missing required columns currency, type/,
    );
  });

  it('applies a --columns map before the canonical names', () => {
    const columnsMap = new Map([
      ['Invoice No', 'reference'],
      ['Sum', 'amount'],
    ]);
    const match = matchHeaders(['Invoice No', 'sum', 'currency', 'type'], { file, columnsMap });
    expect(match.index.get('reference')).toBe(0);
    expect(match.index.get('amount')).toBe(1);
  });

  it('refuses a hand-built map with an unknown column', () => {
    expect(() => matchHeaders(['x'], { file, columnsMap: new Map([['x', 'routing']]) })).toThrow(UsageError);
  });
});

describe('loadColumnsMap', () => {
  const tempDir = useTempDirs();

  it('reads a JSON object', async () => {
    const dir = await tempDir();
    const json = path.join(dir, 'columns.json');
    await writeFile(json, JSON.stringify({ 'Invoice No': 'reference', ABA: 'routing_number' }));
    const map = await loadColumnsMap(json);
    expect([...map]).toEqual([
      ['invoiceno', 'reference'],
      ['aba', 'routingNumber'],
    ]);
    expect(
      matchHeaders(['Invoice No', 'amount', 'currency', 'type', 'ABA'], { file, columnsMap: map }).index.get(
        'routingNumber',
      ),
    ).toBe(4);
  });

  it('reads a two-column CSV with or without its title line', async () => {
    const dir = await tempDir();
    const withTitle = path.join(dir, 'with-title.csv');
    await writeFile(withTitle, '\uFEFFheader,column\r\nInvoice No,reference\r\n"Sum, gross",amount\r\n');
    expect([...(await loadColumnsMap(withTitle))]).toEqual([
      ['invoiceno', 'reference'],
      ['sum,gross', 'amount'],
    ]);
    const bare = path.join(dir, 'bare.csv');
    await writeFile(bare, 'Invoice No,reference\n');
    expect([...(await loadColumnsMap(bare))]).toEqual([['invoiceno', 'reference']]);
  });

  it('refuses unknown canonical names, listing them', async () => {
    const dir = await tempDir();
    const json = path.join(dir, 'columns.json');
    await writeFile(json, JSON.stringify({ A: 'routing', B: 'reference', C: 'accountNo' }));
    const error = await rejection(loadColumnsMap(json));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain(
      'unknown columns "routing" (for "A"), "accountNo" (for "C") - the columns are: reference, amount',
    );
  });

  it('refuses unreadable files and wrong shapes with a UsageError', async () => {
    const dir = await tempDir();
    const cases: [string, string, RegExp][] = [
      ['bad.json', '{ "a": ', /not valid JSON/],
      ['array.json', '["reference"]', /expected a JSON object/],
      ['number.json', '{ "a": 1 }', /the value for "a" must be a column name/],
      ['three.csv', 'a,b,c\n', /line 1 has 3 fields/],
    ];
    for (const [name, content, message] of cases) {
      const target = path.join(dir, name);
      await writeFile(target, content);
      await expect(loadColumnsMap(target)).rejects.toThrow(message);
    }
    await expect(loadColumnsMap(path.join(dir, 'missing.json'))).rejects.toThrow(/file not found/);
    // A folder named by mistake is said so, not with Node's EISDIR.
    await expect(loadColumnsMap(dir)).rejects.toThrow(`--columns ${dir}: is a directory, not a file`);
  });
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}
