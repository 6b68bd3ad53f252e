import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SheetError } from '../../src/errors.js';
import { columnLetters } from '../../src/sheet/column-letters.js';
import { columnIndexOf, displayedNumber, isoOfSerial, openXlsx } from '../../src/sheet/xlsx.js';
import { isDateFormatCode, resolvePartPath } from '../../src/sheet/xlsx-parts.js';
import { openZip } from '../../src/sheet/zip.js';
import { eventually } from '../helpers/eventually.js';
import { readSheet, rejection, texts, useTempDirs } from './tmp.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'sheets');
const fixture = (name: string): string => path.join(FIXTURES, name);
const tempDir = useTempDirs();

describe('XLSX written by other software', () => {
  // The same sheet as CSV, as openpyxl XLSX and as LibreOffice XLSX gives
  // the same headers, row numbers and cell texts.
  it.each(['payouts.openpyxl.xlsx', 'payouts.libreoffice.xlsx'])(
    '%s reads like payouts.csv',
    async (name) => {
      const csv = await readSheet(fixture('payouts.csv'));
      const xlsx = await readSheet(fixture(name));
      expect(xlsx.headers).toEqual(csv.headers);
      expect(texts(xlsx.rows)).toEqual(texts(csv.rows));
      expect(xlsx.rows.every((r) => r.problems.length === 0)).toBe(true);
      expect(xlsx.dialect).toEqual({ worksheet: 'Payouts' });
      // Row 6 is empty in every version, so the numbers skip it; row 8 holds a line break.
      expect(csv.rows.map((r) => r.rowNumber)).toEqual([2, 3, 4, 5, 7, 8, 9]);
    },
  );

  it('keeps what kind of value each cell held', async () => {
    const { headers, rows } = await readSheet(fixture('payouts.libreoffice.xlsx'));
    const at = (row: number, header: string) =>
      rows.find((r) => r.rowNumber === row)!.cells[headers.indexOf(header)]!;
    // LibreOffice spells General out as a format of its own: still no format of the cell's.
    expect(at(2, 'amount')).toEqual({ text: '2500', kind: 'number' });
    expect(at(4, 'amount')).toEqual({ text: '250', kind: 'number', formula: true });
    expect(at(2, 'paymentDate')).toEqual({ text: '2026-11-15', kind: 'date' });
    expect(at(2, 'integratorLevel')).toMatchObject({ text: 'false', kind: 'boolean' });
    expect(at(7, 'accountNumber')).toEqual({ text: '12345678', kind: 'number' });
    expect(at(2, 'accountNumber')).toEqual({ text: '000123456789', kind: 'string' });
    expect(at(3, 'notes')).toEqual({ text: 'Acme Corp', kind: 'string' }); // rich text, two runs
    expect(at(5, 'memo')).toEqual({ text: '', kind: 'empty' }); // merged into notes
    expect(at(2, 'beneficiaryEmail')).toEqual({ text: 'payee@example.com', kind: 'string' }); // hyperlink
  });
});

describe('XLSX cell values (hand-built workbook)', () => {
  it('reads shared, inline and rich strings, formulas, booleans, dates and error values', async () => {
    const { headers, rows, dialect } = await readSheet(fixture('parts-order.xlsx'));
    // The workbook lists "Payouts" (sheet2.xml) before "Notes" (sheet1.xml): its order wins.
    expect(dialect).toEqual({ worksheet: 'Payouts' });
    expect(headers).toEqual([
      'reference',
      'amount',
      'currency',
      'type',
      'notes',
      'memo',
      'paymentDate',
      'flag',
    ]);
    expect(rows.map((r) => [r.rowNumber, r.cells, r.problems])).toEqual([
      [
        2,
        [
          { text: 'INL-1', kind: 'string' },
          { text: '12.5', kind: 'number' },
          { text: 'USD', kind: 'string', formula: true },
          { text: 'ACH', kind: 'string' },
          { text: 'Rich text', kind: 'string' },
          { text: '', kind: 'empty' },
          { text: '2026-11-15', kind: 'date' },
          { text: 'true', kind: 'boolean' },
        ],
        [],
      ],
      [
        3,
        [
          { text: 'INL-2', kind: 'string' },
          { text: '13', kind: 'number', formula: true, sum: true },
          { text: 'USD', kind: 'string' },
          { text: 'ACH', kind: 'string' },
          { text: '漢字', kind: 'string' }, // the phonetic guide is left out
          { text: 'line\r\nbreak', kind: 'string' }, // _x000D_ decoded
          { text: '2026-11-15T12:00:00', kind: 'date' },
          { text: 'false', kind: 'boolean', formula: true },
        ],
        [],
      ],
      [
        5,
        [
          { text: 'INL-3', kind: 'string' },
          { text: '0.01', kind: 'number' },
          { text: '#N/A', kind: 'string', formula: true },
          { text: 'ACH', kind: 'string' },
          { text: '', kind: 'empty' },
          { text: '', kind: 'empty' },
          { text: '', kind: 'empty' },
          { text: '', kind: 'empty' },
        ],
        ['cell C5 ("currency") holds the error value #N/A - correct the formula or type the value'],
      ],
    ]);
  });

  it('picks a sheet by --sheet, ignoring case, and lists the sheets for an unknown name', async () => {
    const notes = await readSheet(fixture('parts-order.xlsx'), { sheetName: 'notes' });
    expect(notes.headers).toEqual(['just notes']);
    expect(notes.dialect).toEqual({ worksheet: 'Notes' });
    const file = fixture('parts-order.xlsx');
    await expect(openXlsx(file, { sheetName: 'March' })).rejects.toThrow(
      `${file}: the workbook has no sheet named "March": its sheets are "Payouts", "Notes"`,
    );
  });
});

describe('XLSX and temporary files', () => {
  // exceljs's WorkbookReader spills a worksheet to a temporary file when the zip holds it before
  // sharedStrings.xml; no temporary file may be left behind, so we read the zip by its directory.
  let tmp: string;
  let savedTmpdir: string | undefined;
  beforeEach(async () => {
    savedTmpdir = process.env['TMPDIR'];
    tmp = await mkdtemp(path.join(tmpdir(), 'payouts-tmpdir-'));
    process.env['TMPDIR'] = tmp;
  });
  afterEach(async () => {
    if (savedTmpdir === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = savedTmpdir;
    await rm(tmp, { recursive: true, force: true });
  });

  it('the fixture holds the worksheet before the shared strings', async () => {
    const zip = await openZip(fixture('parts-order.xlsx'));
    expect(zip.paths.indexOf('xl/worksheets/sheet2.xml')).toBeLessThan(
      zip.paths.indexOf('xl/sharedStrings.xml'),
    );
    expect(zip.paths.indexOf('xl/worksheets/sheet2.xml')).toBeLessThan(zip.paths.indexOf('xl/workbook.xml'));
  });

  // A fact about exceljs, not about payouts: its reader races on this part order (now and then it
  // throws reading the workbook it has not parsed yet, seen once on Node 24 under load), so the
  // fact is asked up to three times.
  it('exceljs WorkbookReader would write a temporary file for it (and leave it when stopped early)', {
    retry: 2,
  }, async () => {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(fixture('parts-order.xlsx'), {});
    let spilled: string[] = [];
    for await (const _worksheet of reader) {
      spilled = await readdir(tmp);
      break;
    }
    expect(spilled.length).toBeGreaterThan(0);
    expect(await readdir(tmp)).toEqual(spilled);
  });

  it('openXlsx writes none, whatever the part order', async () => {
    for (const name of ['parts-order.xlsx', 'payouts.openpyxl.xlsx', 'payouts.libreoffice.xlsx']) {
      const sheet = await openXlsx(fixture(name));
      expect(await readdir(tmp)).toEqual([]);
      for await (const _row of sheet.rows) expect(await readdir(tmp)).toEqual([]);
    }
  });
});

describe('XLSX written by exceljs', () => {
  async function workbook(
    build: (sheet: ExcelJS.Worksheet, book: ExcelJS.Workbook) => void,
  ): Promise<string> {
    const book = new ExcelJS.Workbook();
    build(book.addWorksheet('Payouts'), book);
    const file = path.join(await tempDir(), 'book.xlsx');
    await book.xlsx.writeFile(file);
    return file;
  }

  it('takes the first non-empty row as the header and keeps worksheet row numbers', async () => {
    const file = await workbook((sheet) => {
      sheet.getRow(3).values = ['reference', 'amount'];
      sheet.getRow(4).values = ['A-1', 10];
      sheet.getRow(9).values = ['A-2', 20];
    });
    const { headers, rows } = await readSheet(file);
    expect(headers).toEqual(['reference', 'amount']);
    expect(texts(rows)).toEqual([
      [4, 'A-1', '10'],
      [9, 'A-2', '20'],
    ]);
  });

  it('drops blank header cells at the end and reports data with no header on its row', async () => {
    const file = await workbook((sheet) => {
      sheet.getRow(1).values = ['reference', 'amount', '', ' '];
      sheet.getRow(2).values = ['A-1', 10, '', '', 'note'];
    });
    const { headers, rows } = await readSheet(file);
    expect(headers).toEqual(['reference', 'amount']);
    expect(rows[0]!.problems).toEqual([
      'cell E2 holds "note" but its column has no header: add a header or clear the cell',
    ]);
  });

  it('refuses a header row wider than 1,000 columns', async () => {
    const file = await workbook((sheet) => {
      sheet.getRow(1).values = Array.from({ length: 1200 }, (_, i) => `c${i}`);
    });
    await expect(openXlsx(file)).rejects.toThrow(
      /the header row \(row 1\) has 1200 columns - a payout sheet has at most 1000/,
    );
  });

  it('refuses a worksheet without any value', async () => {
    const file = await workbook(() => {});
    await expect(openXlsx(file)).rejects.toThrow(
      /the sheet is empty: the first row of worksheet "Payouts" must hold the column headers/,
    );
  });

  it('skips a hidden first sheet unless --sheet names it', async () => {
    const file = await workbook((sheet, book) => {
      sheet.state = 'hidden';
      sheet.getRow(1).values = ['hidden'];
      book.addWorksheet('Visible').getRow(1).values = ['reference'];
    });
    expect((await readSheet(file)).dialect).toEqual({ worksheet: 'Visible' });
    expect((await readSheet(file, { sheetName: 'Payouts' })).headers).toEqual(['hidden']);
  });

  it('reads dates in the 1904 date system', async () => {
    const file = await workbook((sheet, book) => {
      book.properties.date1904 = true;
      sheet.getRow(1).values = ['reference', 'paymentDate'];
      sheet.getRow(2).values = ['A-1', new Date(Date.UTC(2026, 10, 15))];
    });
    expect(texts((await readSheet(file)).rows)).toEqual([[2, 'A-1', '2026-11-15']]);
  });

  it('releases the zip entry when the reader stops early', async () => {
    // Random numbers, which stay in the worksheet (text would go to the shared strings, read
    // whole first) and barely compress: the zipped worksheet is far larger than the buffers a
    // paused reader fills, so after one row its file must still be open. 1.7 MB of it: given
    // two seconds, a paused reader read 0.6 MB of worksheet whole and closed its file (Node 20
    // and 24), but not 1.2 MB; at 0.6 MB, this test failed once on a loaded machine.
    const file = await workbook((sheet) => {
      sheet.getRow(1).values = ['reference', 'amount'];
      for (let i = 2; i < 60_000; i++) sheet.getRow(i).values = [Math.random(), Math.random()];
    });
    // The descriptors open on this workbook: other test files share the process and open
    // their own, so only these are counted.
    const openOnFile = async () => {
      const links = await Promise.all(
        (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
      );
      return links.filter((target) => target === file).length;
    };
    const sheet = await openXlsx(file);
    const rows = sheet.rows[Symbol.asyncIterator]();
    await rows.next();
    // Large enough that the entry is still being read after one row: its descriptor is open,
    // and only it once the parts read whole before it (closed asynchronously) are closed.
    await eventually(async () => (await openOnFile()) === 1);
    await rows.return?.();
    const unread = await openXlsx(file);
    await unread.close?.();
    // Closing is asynchronous: wait until the descriptor is gone, not a guessed time.
    await eventually(async () => (await openOnFile()) === 0);
  });
});

describe('XLSX helpers', () => {
  it('converts Excel date serials', () => {
    expect(isoOfSerial(46341, false)).toBe('2026-11-15');
    expect(isoOfSerial(46341.75, false)).toBe('2026-11-15T18:00:00');
    expect(isoOfSerial(1, false)).toBe('1900-01-01');
    expect(isoOfSerial(61, false)).toBe('1900-03-01');
    expect(isoOfSerial(0, true)).toBe('1904-01-01');
    expect(isoOfSerial(1e12, false)).toBeUndefined();
  });

  it('tells date formats from number formats', () => {
    for (const code of ['yyyy-mm-dd', 'dd/mm/yyyy;@', '[$-409]mmmm d, yyyy', 'h:mm AM/PM', 'd-mmm']) {
      expect(isDateFormatCode(code), code).toBe(true);
    }
    for (const code of [
      'General',
      '0.00',
      '#,##0;[Red]-#,##0',
      '0.00 "days"',
      '0.00E+00',
      '@',
      '_(* #,##0_)',
    ]) {
      expect(isDateFormatCode(code), code).toBe(false);
    }
  });

  it('converts cell references and resolves part paths', () => {
    expect(['A1', 'Z9', 'AA10', 'XFD1048576'].map(columnIndexOf)).toEqual([0, 25, 26, 16383]);
    expect([0, 25, 26, 16383].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'XFD']);
    expect(resolvePartPath('xl/workbook.xml', 'worksheets/sheet1.xml')).toBe('xl/worksheets/sheet1.xml');
    expect(resolvePartPath('xl/workbook.xml', '/xl/worksheets/sheet1.xml')).toBe('xl/worksheets/sheet1.xml');
    expect(resolvePartPath('xl/workbook.xml', '../customXml/item1.xml')).toBe('customXml/item1.xml');
    expect(resolvePartPath('', 'xl/workbook.xml')).toBe('xl/workbook.xml');
  });

  it('throws SheetError, never a raw exception, for a damaged workbook', async () => {
    const file = path.join(FIXTURES, '..', 'malformed', 'damaged-xml.xlsx');
    const error = await rejection(openXlsx(file));
    expect(error).toBeInstanceOf(SheetError);
    // The worksheet breaks off in the tag that would open cell E1: the message says where, as
    // Excel names it.
    expect(error.message).toBe(
      `${file}: the workbook is damaged (xl/worksheets/sheet1.xml: unclosed tag: row) in row 1, after column D - open it in Excel (or LibreOffice) and save it again as .xlsx`,
    );
  });
});

describe('displayedNumber (numbers as Excel shows them)', () => {
  it.each([
    [300.29999999999995, '300.3'],
    [0.30000000000000004, '0.3'],
    [1049.4100000000001, '1049.41'],
    [99.990000000000009, '99.99'],
    [1250, '1250'],
    [0.1, '0.1'],
    [123456789012345, '123456789012345'],
    // 16 digits or more: every digit kept, so identifier damage is still seen.
    [32180000118359720, '32180000118359720'],
    [1234567890123456, '1234567890123456'],
    [1e21, '1e+21'],
    [-12.5, '-12.5'],
  ])('%s → %s', (value, expected) => {
    expect(displayedNumber(value)).toBe(expected);
  });
});
