import { readdir, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SheetError, UsageError } from '../../src/errors.js';
import { openCsv } from '../../src/sheet/csv.js';
import { delimiterOfHeaderLine, firstInvalidUtf8 } from '../../src/sheet/csv-dialect.js';
import { eventually } from '../helpers/eventually.js';
import { readSheet, rejection, texts, useTempDirs } from './tmp.js';

const tempDir = useTempDirs();

async function csvFile(content: string | Buffer, name = 'sheet.csv'): Promise<string> {
  const file = path.join(await tempDir(), name);
  await writeFile(file, content);
  return file;
}

function utf16be(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

describe('openCsv encodings', () => {
  const text = 'reference,name\r\nA-1,José Müller\r\nA-2,Zoë €5\r\n';
  const expected = [
    [2, 'A-1', 'José Müller'],
    [3, 'A-2', 'Zoë €5'],
  ];

  it.each([
    ['UTF-8', Buffer.from(text), 'utf-8'],
    ['UTF-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), 'utf-8'],
    [
      'UTF-16 LE with BOM',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
      'utf-16le',
    ],
    ['UTF-16 BE with BOM', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(text)]), 'utf-16be'],
  ])('reads %s', async (_name, bytes, encoding) => {
    const sheet = await readSheet(await csvFile(bytes));
    expect(sheet.headers).toEqual(['reference', 'name']);
    expect(texts(sheet.rows)).toEqual(expected);
    expect(sheet.dialect.encoding).toBe(encoding);
  });

  it('reads UTF-16 LE without BOM when told to', async () => {
    const sheet = await readSheet(await csvFile(Buffer.from(text, 'utf16le')), { encoding: 'utf16le' });
    expect(texts(sheet.rows)).toEqual(expected);
  });

  it('refuses Latin-1 bytes, naming the line and what to do', async () => {
    const file = await csvFile(Buffer.from(text.replace('€', 'E'), 'latin1'));
    const error = await rejection(readSheet(file));
    expect(error).toBeInstanceOf(SheetError);
    expect(error.message).toBe(
      `${file}: row 2, column B is not valid UTF-8 text: it looks like Windows-1252 (Excel "CSV" on Windows). Save it as "CSV UTF-8 (Comma delimited)", or pass --encoding windows-1252`,
    );
  });

  it('names the row and column of a byte that is not UTF-8 as a spreadsheet shows them, not the line', async () => {
    // Row 2 spans three lines (a quoted cell with line breaks and a "" inside) and ends in a
    // lone CR; row 3 has a quote inside an unquoted cell: the bad byte is in row 3, column D,
    // on line 5 of the file.
    const head =
      'reference;amount;note;name\r\nA-1;5.00;"two\nlines, ""quoted""\r\nthree";x\rB-2;6.00;12" pipe;Jos';
    const file = await csvFile(Buffer.concat([Buffer.from(head), Buffer.from('\xe9\n', 'latin1')]));
    const error = await rejection(readSheet(file));
    // The reader numbers that row 3 as well.
    const fixed = await readSheet(await csvFile(`${head}é\n`, 'fixed.csv'));
    expect(texts(fixed.rows).map(([row, , , , name]) => [row, name])).toEqual([
      [2, 'x'],
      [3, 'José'],
    ]);
    expect(error.message).toBe(
      `${file}: row 3, column D is not valid UTF-8 text: it looks like Windows-1252 (Excel "CSV" on Windows). Save it as "CSV UTF-8 (Comma delimited)", or pass --encoding windows-1252`,
    );
  });

  it('reads Windows-1252 with --encoding latin1 (€ is 0x80 there)', async () => {
    const bytes = Buffer.from(text.replace('€', '\u0080'), 'latin1');
    const sheet = await readSheet(await csvFile(bytes), { encoding: 'latin1' });
    expect(texts(sheet.rows)).toEqual(expected);
    expect(sheet.dialect.encoding).toBe('windows-1252');
  });

  it('accepts a character cut by a read-chunk boundary', async () => {
    // 64 KiB chunks: put the two bytes of "é" on both sides of the first boundary.
    const line = `B-1,${'x'.repeat(65_536 - 'reference,name\n'.length - 'B-1,'.length - 1)}é\n`;
    const file = await csvFile(`reference,name\n${line}B-2,ok\n`);
    const sheet = await readSheet(file);
    expect(sheet.rows.map((r) => r.cells[1]!.text.slice(-2))).toEqual(['xé', 'ok']);
  });

  it('refuses a file that ends inside a character', async () => {
    const file = await csvFile(Buffer.concat([Buffer.from('reference\nA-1\nB'), Buffer.from([0xc3])]));
    await expect(readSheet(file)).rejects.toThrow(/row 3, column A is not valid UTF-8/);
  });

  it('locates the first invalid UTF-8 byte', () => {
    expect(firstInvalidUtf8(Buffer.from('ab\u00e9c'))).toBe(5);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xe9, 0x62]))).toBe(1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1); // overlong
    expect(firstInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0); // surrogate
  });
});

describe('openCsv delimiters', () => {
  it('detects the delimiter from the header line, outside quotes', () => {
    expect(delimiterOfHeaderLine('a,b,c\n1;2;3;4;5').delimiter).toBe(',');
    expect(delimiterOfHeaderLine('a;b;c\n').delimiter).toBe(';');
    expect(delimiterOfHeaderLine('a\tb\tc\n').delimiter).toBe('\t');
    expect(delimiterOfHeaderLine('"a;b;c",d\n').delimiter).toBe(',');
    expect(delimiterOfHeaderLine('\n\n a;b\n').delimiter).toBe(';');
    // A line without a delimiter may be a title: the search goes on (the end of the file ends it).
    expect(delimiterOfHeaderLine('single\n')).toEqual({ delimiter: ',', complete: false, hasContent: true });
  });

  it('looks below a title line for the delimiter', () => {
    expect(delimiterOfHeaderLine('Payouts November 2026\r\n\r\nreference;amount\r\n')).toEqual({
      delimiter: ';',
      complete: true,
      hasContent: true,
    });
  });

  it('reads a semicolon sheet under a title', async () => {
    const file = await csvFile('Payouts November 2026\n\nreference;amount;currency;type\nA-1;1,50;USD;ACH\n');
    const sheet = await openCsv(file, { isHeaderRow: (cells) => cells.includes('reference') });
    expect(sheet.dialect.delimiter).toBe(';');
    expect(sheet.headers).toEqual(['reference', 'amount', 'currency', 'type']);
    expect(sheet.headerRowNumber).toBe(3);
    await sheet.close?.();
  });

  it('reads a semicolon sheet with decimal commas', async () => {
    const sheet = await readSheet(await csvFile('reference;amount\nA-1;"1.234,50"\nA-2;7,5\n'));
    expect(sheet.dialect.delimiter).toBe(';');
    expect(texts(sheet.rows)).toEqual([
      [2, 'A-1', '1.234,50'],
      [3, 'A-2', '7,5'],
    ]);
  });

  it('reads tab-separated text (Excel "Unicode Text" is UTF-16 LE with tabs)', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('reference\tamount\r\nA-1\t10\r\n', 'utf16le'),
    ]);
    const sheet = await readSheet(await csvFile(bytes, 'sheet.txt'));
    expect(sheet.dialect).toEqual({ encoding: 'utf-16le', delimiter: '\t', bom: true });
    expect(texts(sheet.rows)).toEqual([[2, 'A-1', '10']]);
  });

  it('lets --delimiter force the delimiter, "tab" included', async () => {
    const file = await csvFile('reference|amount;x\nA-1|2;3\n');
    expect((await readSheet(file, { delimiter: '|' })).headers).toEqual(['reference', 'amount;x']);
    const tabs = await csvFile('a,b\tc\n1,2\t3\n');
    expect((await readSheet(tabs, { delimiter: 'tab' })).headers).toEqual(['a,b', 'c']);
    expect((await readSheet(tabs, { delimiter: '\\t' })).headers).toEqual(['a,b', 'c']);
  });

  it('refuses a delimiter that cannot be one', async () => {
    const file = await csvFile('a,b\n');
    await expect(openCsv(file, { delimiter: '""' })).rejects.toThrow(UsageError);
    await expect(openCsv(file, { delimiter: '"' })).rejects.toThrow(
      /quotes and line breaks cannot be delimiters/,
    );
  });
});

describe('openCsv rows', () => {
  it('numbers rows as a spreadsheet shows them: records, not lines; blank lines counted and skipped', async () => {
    const file = await csvFile(
      [
        'reference,note', // row 1
        'A-1,"two', // row 2 spans two lines
        'lines"',
        '', // row 3, blank
        'A-3,plain', // row 4
        ',', // row 5, only a delimiter
        '  ', // row 6, only spaces
        'A-6,"a ""quoted"" word"', // row 7
        '',
      ].join('\r\n'),
    );
    expect(texts((await readSheet(file)).rows)).toEqual([
      [2, 'A-1', 'two\r\nlines'],
      [4, 'A-3', 'plain'],
      [7, 'A-6', 'a "quoted" word'],
    ]);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads %s line ends', async (_name, eol) => {
    const file = await csvFile(['reference,amount', 'A-1,1', 'A-2,2'].join(eol) + eol);
    expect(texts((await readSheet(file)).rows)).toEqual([
      [2, 'A-1', '1'],
      [3, 'A-2', '2'],
    ]);
  });

  it('takes the first non-blank line as the header', async () => {
    const sheet = await readSheet(await csvFile('\n\nreference,amount\nA-1,1\n'));
    expect(sheet.headers).toEqual(['reference', 'amount']);
    expect(texts(sheet.rows)).toEqual([[4, 'A-1', '1']]);
  });

  it('makes a wrong field count a problem of its row, padding or cutting the cells', async () => {
    const sheet = await readSheet(await csvFile('a,b,c\n1,2,3,4\n1\n1,2,3\n'));
    expect(sheet.rows.map((r) => [r.rowNumber, r.cells.map((c) => c.text), r.problems])).toEqual([
      [
        2,
        ['1', '2', '3'],
        ['row has 4 fields but the header has 3: check this row for a stray "," or a missing quote'],
      ],
      [
        3,
        ['1', '', ''],
        ['row has 1 field but the header has 3: check this row for a stray "," or a missing quote'],
      ],
      [4, ['1', '2', '3'], []],
    ]);
  });

  it('shares one frozen empty cell and marks CSV cells as strings', async () => {
    const sheet = await readSheet(await csvFile('a,b,c\n,x,\n'));
    const [row] = sheet.rows;
    expect(row!.cells[0]).toBe(row!.cells[2]);
    expect(row!.cells[0]).toEqual({ text: '', kind: 'empty' });
    expect(row!.cells[1]).toEqual({ text: 'x', kind: 'string' });
  });

  it('reports a 10 MB cell on its row, names the column, and goes on', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    const file = await csvFile(`reference,Beneficiary Name\nA-1,"${big}"\nA-2,ok\n`);
    const started = Date.now();
    const sheet = await readSheet(file);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sheet.rows.map((r) => [r.rowNumber, r.cells[1]!.text.length, r.problems])).toEqual([
      [
        2,
        big.length,
        [
          'column "Beneficiary Name" holds 10,485,760 characters, but a cell holds at most 32,767 (Excel\'s limit): shorten it',
        ],
      ],
      [3, 2, []],
    ]);
  });

  it('refuses broken quotes with the row, line and column, never a stack trace', async () => {
    const unclosed = await csvFile('reference,name\nA-1,ok\nA-2,"open\nA-3,x\n');
    await expect(readSheet(unclosed)).rejects.toThrow(
      `${unclosed}: a quoted cell that starts in row 3 is never closed, so the rest of the file would be one cell: check the quotes (") in column B of that row`,
    );
    const trailing = await csvFile('reference,name,note\nA-1,"ab"c,x\n');
    await expect(readSheet(trailing)).rejects.toThrow(
      /row 2 \(line 2\): a quoted cell in column B is followed by more text/,
    );
  });

  it('reads a quote inside an unquoted cell as a character, marking the first row where one was met', async () => {
    const stray = await csvFile('reference,name\nA-1,ok\nA-2,ab"c\nA-3,12" pipe\nA-4,"quoted"\n');
    const { rows } = await readSheet(stray);
    expect(texts(rows)).toEqual([
      [2, 'A-1', 'ok'],
      [3, 'A-2', 'ab"c'],
      [4, 'A-3', '12" pipe'],
      [5, 'A-4', 'quoted'],
    ]);
    expect(rows.map((row) => row.strayQuote ?? false)).toEqual([false, true, false, false]);
  });

  it('stops at 32 MB when a quote is never closed in a long file, instead of taking the memory', async () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => `A-${i},some text for row ${i},more`).join('\n');
    const file = await csvFile(`reference,a,b\nA-x,"open,b\n${`${rows}\n`.repeat(10)}`);
    await expect(readSheet(file)).rejects.toThrow(
      /row 2 \(line \d+\) is larger than 32 MB: a quote \("\) in it is probably never closed - check the quotes in that row/,
    );
  });

  it('refuses more than 1,000 columns', async () => {
    const headers = Array.from({ length: 1001 }, (_, i) => `c${i}`).join(',');
    await expect(openCsv(await csvFile(`${headers}\n`))).rejects.toThrow(
      /the header row has 1001 columns - a payout sheet has at most 1000/,
    );
  });

  it('refuses an empty file but opens a headers-only one with no rows', async () => {
    const empty = await csvFile('');
    await expect(openCsv(empty)).rejects.toThrow(
      `${empty}: the sheet is empty: the first row must hold the column headers`,
    );
    await expect(openCsv(await csvFile('\r\n,,\r\n  \r\n'))).rejects.toThrow(/the sheet is empty/);
    const sheet = await readSheet(await csvFile('reference,amount\r\n'));
    expect(sheet.headers).toEqual(['reference', 'amount']);
    expect(sheet.rows).toEqual([]);
  });

  it('releases the file when the reader stops early or never starts', async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `A-${i},${i}`);
    const file = await csvFile(`reference,amount\n${lines.join('\n')}\n`);
    const sheet = await openCsv(file);
    const rows = sheet.rows[Symbol.asyncIterator]();
    expect((await rows.next()).value?.rowNumber).toBe(2);
    // Still reading: the file is open.
    expect(await openOn(file)).toBe(1);
    await rows.return?.();
    const unread = await openCsv(file);
    await unread.close?.();
    await unread.close?.();
    // Closing is asynchronous: wait until the descriptor is gone, not a guessed time.
    await eventually(async () => (await openOn(file)) === 0);
  });
});

/** Descriptors of this process open on `file` (other test files share the process: only these). */
async function openOn(file: string): Promise<number> {
  const links = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return links.filter((target) => target === file).length;
}

describe('openCsv header row below a title', () => {
  const tempDir = useTempDirs();
  it('finds the header within the first 10 rows and keeps the sheet row numbers', async () => {
    const file = path.join(await tempDir(), 'titled.csv');
    await writeFile(
      file,
      'Payouts November 2026,,,\r\n,,,\r\nreference,amount,currency,type\r\nA-1,1.00,USD,ACH\r\n',
    );
    const isHeaderRow = (cells: readonly string[]) => cells.includes('reference');
    const sheet = await openCsv(file, { isHeaderRow });
    expect(sheet.headers).toEqual(['reference', 'amount', 'currency', 'type']);
    expect(sheet.headerRowNumber).toBe(3);
    const rows: [number, string][] = [];
    for await (const row of sheet.rows) rows.push([row.rowNumber, row.cells[0]!.text]);
    expect(rows).toEqual([[4, 'A-1']]);
  });

  it('without a header row in the first 10 rows, reads the first row as the header', async () => {
    const file = path.join(await tempDir(), 'none.csv');
    await writeFile(file, 'a,b\r\n1,2\r\n');
    const sheet = await openCsv(file, { isHeaderRow: () => false });
    expect(sheet.headers).toEqual(['a', 'b']);
    expect(sheet.headerRowNumber).toBe(1);
    await sheet.close?.();
  });
});

async function writeCsv(dir: () => Promise<string>, text: string): Promise<string> {
  const file = path.join(await dir(), 'sheet.csv');
  await writeFile(file, text);
  return file;
}

describe('line endings of one kind', () => {
  it.each([
    ['\r\n', 'reference,amount,note\r\nA-1,10.00,"two\r\nlines"\r\nA-2,11.00,\r\n'],
    ['\n', 'reference,amount,note\nA-1,10.00,"two\nlines"\nA-2,11.00,\n'],
  ])(
    'with %j throughout, rows end at each line ending and quoted line breaks stay in the cell',
    async (ending, text) => {
      const sheet = await readSheet(await writeCsv(tempDir, text));
      expect(sheet.headers).toEqual(['reference', 'amount', 'note']);
      expect(texts(sheet.rows).map(([n, ref, , note]) => [n, ref, note])).toEqual([
        [2, 'A-1', `two${ending}lines`],
        [3, 'A-2', ''],
      ]);
    },
  );
});
