// Line endings as files really mix them: a header typed in Excel (CRLF) above rows appended by a
// script (LF), or the reverse. Every CRLF, LF or lone CR outside quotes ends a row, as Excel,
// LibreOffice and Python's csv module read it; inside quotes a line break is part of the cell.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateSheet } from '../../src/batch/validate/validate.js';
import { readSheet, texts, useTempDirs } from './tmp.js';

const tempDir = useTempDirs();

async function csvFile(content: string | Buffer, name = 'sheet.csv'): Promise<string> {
  const file = path.join(await tempDir(), name);
  await writeFile(file, content);
  return file;
}

const EXPECTED = [
  [2, 'A-1', '10.00', 'first'],
  [3, 'A-2', '11.00', ''],
  [4, 'A-3', '12.00', 'third'],
];

describe('CSV line endings in any mix', () => {
  it.each([
    ['CRLF header, LF rows', 'reference,amount,note\r\nA-1,10.00,first\nA-2,11.00,\nA-3,12.00,third\n'],
    ['LF header, CRLF rows', 'reference,amount,note\nA-1,10.00,first\r\nA-2,11.00,\r\nA-3,12.00,third\r\n'],
    ['CR header, LF and CRLF rows', 'reference,amount,note\rA-1,10.00,first\nA-2,11.00,\r\nA-3,12.00,third'],
    [
      'LF header, lone CR rows (classic Mac)',
      'reference,amount,note\nA-1,10.00,first\rA-2,11.00,\rA-3,12.00,third\r',
    ],
    ['every row its own', 'reference,amount,note\r\nA-1,10.00,first\rA-2,11.00,\nA-3,12.00,third\r\n'],
  ])('%s: one row per line, no line ending left in a cell', async (_name, text) => {
    const sheet = await readSheet(await csvFile(text));
    expect(sheet.headers).toEqual(['reference', 'amount', 'note']);
    expect(texts(sheet.rows)).toEqual(EXPECTED);
  });

  it('counts blank lines of any ending in the row numbers, and skips them', async () => {
    const text = 'reference,amount\r\n\nA-1,10.00\n\r\n\rA-2,11.00\r\n';
    const sheet = await readSheet(await csvFile(text));
    expect(texts(sheet.rows)).toEqual([
      [3, 'A-1', '10.00'],
      [6, 'A-2', '11.00'],
    ]);
  });

  it('keeps CR, LF and CRLF inside quoted cells as they are, whatever the rows end in', async () => {
    const text =
      'reference,note\r\nA-1,"cr\rinside"\nA-2,"lf\ninside"\r\nA-3,"crlf\r\ninside"\rA-4,"ends in cr\r"\n';
    const sheet = await readSheet(await csvFile(text));
    expect(texts(sheet.rows)).toEqual([
      [2, 'A-1', 'cr\rinside'],
      [3, 'A-2', 'lf\ninside'],
      [4, 'A-3', 'crlf\r\ninside'],
      [5, 'A-4', 'ends in cr\r'],
    ]);
  });

  it('reads a CRLF cut by a read-chunk boundary as one line ending', async () => {
    // The reader takes 32 KiB at a time: put the CR last in the first chunk, its LF first in the next.
    const head = 'reference,note\n';
    const filler = 'x'.repeat(32 * 1024 - head.length - 'A-1,'.length - 1);
    const text = `${head}A-1,${filler}\r\nA-2,after\nA-3,last\r\n`;
    expect(text.indexOf('\r\n')).toBe(32 * 1024 - 1);
    const sheet = await readSheet(await csvFile(text));
    expect(texts(sheet.rows)).toEqual([
      [2, 'A-1', filler],
      [3, 'A-2', 'after'],
      [4, 'A-3', 'last'],
    ]);
  });

  it('reads mixed endings in UTF-16 and with a BOM the same way', async () => {
    const text = 'reference,amount,note\r\nA-1,10.00,first\nA-2,11.00,\rA-3,12.00,third\r\n';
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    expect(texts((await readSheet(await csvFile(utf16))).rows)).toEqual(EXPECTED);
    expect(texts((await readSheet(await csvFile(bom))).rows)).toEqual(EXPECTED);
  });

  it('reads a mixed sheet with a stray quote (the relaxed reading) the same way', async () => {
    const text = 'reference,amount,note\r\nA-1,10.00,first\nA-2,11.00,12" pipe\r\nA-3,12.00,third\n';
    const sheet = await readSheet(await csvFile(text));
    expect(texts(sheet.rows)).toEqual([
      [2, 'A-1', '10.00', 'first'],
      [3, 'A-2', '11.00', '12" pipe'],
      [4, 'A-3', '12.00', 'third'],
    ]);
    expect(sheet.rows.map((row) => row.strayQuote === true)).toEqual([false, true, false]);
  });
});

describe('the results file of a sheet with mixed line endings', () => {
  // The first rows of the sample sheet: 42 columns, the last (bankAddress.country) empty in each row.
  async function sampleLines(): Promise<string[]> {
    const sample = await readFile(
      path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv'),
      'utf8',
    );
    const lines = sample.split('\r\n').slice(0, 4);
    return [lines[0]!, ...lines.slice(1).map((line) => line.replace('PAY-2026-11-', 'MIX-'))];
  }

  const RESULT_HEADERS =
    'result.row,result.status,result.errors,result.warnings,result.beneficiaryId,result.recipientId,result.simulationId,result.transactionId';

  it.each([
    ['CRLF header, LF rows', ['\r\n', '\n', '\n']],
    ['LF header, CRLF rows', ['\n', '\r\n', '\r\n']],
    ['CR, CRLF, LF, CR', ['\r', '\r\n', '\n', '\r']],
  ])('%s: every row in the results, every cell as typed, no stray CR', async (_name, endings) => {
    const lines = await sampleLines();
    const sheetPath = await csvFile(lines.map((line, i) => line + (endings[i] ?? '\n')).join(''));
    const outPath = path.join(path.dirname(sheetPath), 'results.csv');
    const report = await validateSheet({ sheetPath, outPath });
    expect(report.summary.rows).toBe(3);
    expect(report.summary.statusCounts()).toEqual({ valid: 3 });
    const payees = ['Ana Lopez', 'Ana Lopez', 'Acme Supplies LLC'];
    const expected = [
      `${lines[0]},${RESULT_HEADERS}`,
      ...lines
        .slice(1)
        .map(
          (line, i) =>
            `${line},${i + 2},valid,,new payee: the register has no earlier payout to ${payees[i]},,,,`,
        ),
    ];
    expect(await readFile(outPath, 'utf8')).toBe(`${expected.join('\n')}\n`);
  });
});
