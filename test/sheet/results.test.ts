import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { SheetError, StorageError } from '../../src/errors.js';
import {
  neutraliseFormula,
  openResultsWriter,
  RESULT_COLUMNS,
  type ResultRecord,
  type ResultsWriter,
  restoreFormula,
  resultsLayout,
} from '../../src/sheet/results.js';
import type { Cell, RawRow, SheetFormat } from '../../src/sheet/types.js';
import { readSheet, rejection, useTempDirs } from './tmp.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'sheets');
const tempDir = useTempDirs();

const str = (text: string): Cell => ({ text, kind: 'string' });
const num = (text: string): Cell => ({ text, kind: 'number' });
const EMPTY: Cell = { text: '', kind: 'empty' };

function record(cells: Cell[], overrides: Partial<ResultRecord> = {}): ResultRecord {
  return { cells, rowNumber: 2, status: 'valid', errors: [], errorColumns: [], ...overrides };
}

async function writeAll(writer: ResultsWriter, rows: ResultRecord[]): Promise<void> {
  for (const row of rows) await writer.write(row);
  await writer.commit();
}

describe('neutraliseFormula', () => {
  it('prefixes what a spreadsheet would run, but not plain numbers', () => {
    const cases: [string, string][] = [
      ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
      ['+SUM(A1)', `'+SUM(A1)`],
      ['-2+3', `'-2+3`],
      ['@SUM(A1)', `'@SUM(A1)`],
      ['\t=1', `'\t=1`],
      ['\r=1', `'\r=1`],
      ['-Foo', `'-Foo`],
      ['\uFF1D1+1', `'\uFF1D1+1`],
      ['\uFF0D5', `'\uFF0D5`],
      ['-12.50', '-12.50'],
      ['+12', '+12'],
      ['-.5', '-.5'],
      ['-1e5', '-1e5'],
      ['12=3', '12=3'],
      ['', ''],
      ['Ana Lopez', 'Ana Lopez'],
    ];
    for (const [input, output] of cases) expect(neutraliseFormula(input), JSON.stringify(input)).toBe(output);
  });
});

describe('restoreFormula', () => {
  it('gives back exactly what neutraliseFormula was given, and leaves other texts alone', () => {
    const typed = [
      '=1+1',
      '-Foo',
      '@x',
      "'=1+1",
      "''@x",
      "'abc",
      "'",
      "'-12.50",
      '-12.50',
      'Ana',
      '',
      '\t=1',
    ];
    for (const text of typed)
      expect(restoreFormula(neutraliseFormula(text)), JSON.stringify(text)).toBe(text);
    const cases: [string, string][] = [
      ["'=1+1", '=1+1'],
      ["'-Foo", '-Foo'],
      ["'abc", "'abc"],
      ["'-12.50", "'-12.50"],
      ["''=1", "'=1"],
      ["'", "'"],
    ];
    for (const [input, output] of cases) expect(restoreFormula(input), JSON.stringify(input)).toBe(output);
  });
});

describe('resultsLayout', () => {
  it('drops result.* input columns and appends fresh ones', () => {
    const layout = resultsLayout(['reference', 'result.status', 'amount', 'Result.Errors']);
    expect(layout.headers).toEqual(['reference', 'amount', ...RESULT_COLUMNS]);
    expect(layout.kept).toEqual([0, 2]);
    expect(layout.outputOf).toEqual([0, -1, 1, -1]);
  });
});

describe('CSV results', () => {
  it('round-trips through openSheet with every input column, then the result columns', async () => {
    const input = await readSheet(path.join(FIXTURES, 'payouts.csv'));
    const out = path.join(await tempDir(), 'payouts.results.csv');
    const writer = await openResultsWriter({ path: out, format: 'csv', inputHeaders: input.headers });
    await writeAll(
      writer,
      input.rows.map((row: RawRow, i) =>
        record(row.cells, {
          rowNumber: row.rowNumber,
          status: i === 0 ? 'invalid' : 'valid',
          errors: i === 0 ? ['amount must be greater than 0', 'routingNumber is invalid'] : [],
          warnings:
            i === 1 ? ['new payee: no earlier payout to Ana is in the register', 'second'] : undefined,
          recipientId: i === 1 ? 'rcp_123' : undefined,
        }),
      ),
    );
    const bytes = await readFile(out);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // BOM: Excel reads UTF-8 right
    const back = await readSheet(out);
    expect(back.headers).toEqual([...input.headers, ...RESULT_COLUMNS]);
    expect(back.rows.map((r) => r.cells.slice(0, input.headers.length).map((c) => c.text))).toEqual(
      input.rows.map((r) => r.cells.map((c) => c.text)),
    );
    const results = back.rows.map((r) => r.cells.slice(input.headers.length).map((c) => c.text));
    expect(results[0]).toEqual([
      '2',
      'invalid',
      'amount must be greater than 0; routingNumber is invalid',
      '',
      '',
      '',
      '',
      '',
    ]);
    expect(results[1]).toEqual([
      '3',
      'valid',
      '',
      'new payee: no earlier payout to Ana is in the register; second',
      '',
      'rcp_123',
      '',
      '',
    ]);
    expect(results.map((r) => r[0])).toEqual(input.rows.map((r) => String(r.rowNumber)));
  });

  it('keeps the input delimiter and can leave the BOM out', async () => {
    const out = path.join(await tempDir(), 'r.csv');
    const writer = await openResultsWriter({
      path: out,
      format: 'csv',
      inputHeaders: ['reference', 'amount'],
      delimiter: ';',
      bom: false,
    });
    await writeAll(writer, [record([str('A;1'), str('1,50')])]);
    expect(await readFile(out, 'utf8')).toBe(
      'reference;amount;result.row;result.status;result.errors;result.warnings;result.beneficiaryId;result.recipientId;result.simulationId;result.transactionId\n' +
        '"A;1";1,50;2;valid;;;;;;\n',
    );
  });

  it('neutralises formulas in input cells, headers and messages', async () => {
    const out = path.join(await tempDir(), 'r.csv');
    const writer = await openResultsWriter({
      path: out,
      format: 'csv',
      inputHeaders: ['reference', '=bad header'],
    });
    await writeAll(writer, [record([str('=1+1'), str('-12.50')], { errors: ['@evil message'] })]);
    const [headers, cells] = parseCsv(await readFile(out), { bom: true }) as string[][];
    expect(headers!.slice(0, 2)).toEqual(['reference', "'=bad header"]);
    expect(cells!.slice(0, 5)).toEqual(["'=1+1", '-12.50', '2', 'valid', "'@evil message"]);
    // Fed back, the file gives what was typed (the guarding ' must never reach the service).
    const back = await readSheet(out);
    expect(back.headers.slice(0, 2)).toEqual(['reference', '=bad header']);
    expect(back.rows[0]!.cells.map((c) => c.text).slice(0, 2)).toEqual(['=1+1', '-12.50']);
  });

  it('quotes every cell that holds a CR or an LF, so no reader splits the row', async () => {
    const out = path.join(await tempDir(), 'r.csv');
    const writer = await openResultsWriter({
      path: out,
      format: 'csv',
      inputHeaders: ['reference', 'note', 'other'],
      bom: false,
    });
    await writeAll(writer, [record([str('A-1'), str('paid\r=1+2'), str('two\nlines')])]);
    const text = await readFile(out, 'utf8');
    expect(text.split('\n')[1]).toBe('A-1,"paid\r=1+2","two');
    const back = await readSheet(out);
    expect(back.rows.map((r) => r.cells.slice(0, 3).map((c) => c.text))).toEqual([
      ['A-1', 'paid\r=1+2', 'two\nlines'],
    ]);
  });

  it('keeps long and multi-byte cells whole across the 64 KB chunks it writes in', async () => {
    const out = path.join(await tempDir(), 'r.csv');
    const writer = await openResultsWriter({ path: out, format: 'csv', inputHeaders: ['reference', 'note'] });
    const notes = ['€'.repeat(30_000), 'x'.repeat(200_000), `${'ü'.repeat(21_840)}"q"`, '名前, 😀'];
    const rows = Array.from({ length: 120 }, (_, i) =>
      record([str(`A-${i}`), str(notes[i % notes.length]!)], { rowNumber: i + 2 }),
    );
    await writeAll(writer, rows);
    const back = await readSheet(out);
    expect(back.rows.map((r) => r.cells[1]!.text)).toEqual(rows.map((r) => r.cells[1]!.text));
    expect(back.rows.map((r) => r.cells[2]!.text)).toEqual(rows.map((r) => String(r.rowNumber)));
  });

  it('answers backpressure with a promise', async () => {
    const out = path.join(await tempDir(), 'r.csv');
    const writer = await openResultsWriter({ path: out, format: 'csv', inputHeaders: ['reference', 'note'] });
    const long = str('x'.repeat(1000));
    let promises = 0;
    for (let i = 0; i < 2000; i++) {
      const pending = writer.write(record([str(`A-${i}`), long], { rowNumber: i + 2 }));
      if (pending) {
        promises++;
        await pending;
      }
    }
    await writer.commit();
    expect(promises).toBeGreaterThan(0);
    expect((await readSheet(out)).rows).toHaveLength(2000);
  });
});

describe('XLSX results', () => {
  const headers = ['reference', 'amount', 'Routing Number', 'note', 'result.status'];

  async function writeXlsx(rows: ResultRecord[]): Promise<string> {
    const out = path.join(await tempDir(), 'payouts.results.xlsx');
    const writer = await openResultsWriter({ path: out, format: 'xlsx', inputHeaders: headers });
    await writeAll(writer, rows);
    return out;
  }

  const rows = [
    record([str('A-1'), num('12.5'), str('021000021'), str('=cmd|x'), str('old')], { rowNumber: 2 }),
    record([str('A-2'), num('-3'), str('12'), EMPTY, str('old')], {
      rowNumber: 3,
      status: 'invalid',
      errors: ['amount must be greater than 0', 'routingNumber is invalid'],
      errorColumns: [1, 2, 4],
    }),
    record([str('A-3'), num('7'), str('x'.repeat(40_000)), EMPTY, EMPTY], {
      rowNumber: 5,
      status: 'submitted',
      transactionId: 'trx_9',
    }),
  ];

  it('round-trips through openSheet: numbers stay numbers, old result columns are replaced', async () => {
    const out = await writeXlsx(rows);
    const back = await readSheet(out);
    expect(back.headers).toEqual(['reference', 'amount', 'Routing Number', 'note', ...RESULT_COLUMNS]);
    expect(back.dialect).toEqual({ worksheet: 'Results' });
    expect(back.rows.map((r) => r.rowNumber)).toEqual([2, 3, 4]);
    const [first, second, third] = back.rows;
    expect(first!.cells.slice(0, 6)).toEqual([
      str('A-1'),
      num('12.5'),
      str('021000021'),
      str('=cmd|x'),
      num('2'),
      str('valid'),
    ]);
    expect(second!.cells.map((c) => c.text)).toEqual([
      'A-2',
      '-3',
      '12',
      '',
      '3',
      'invalid',
      'amount must be greater than 0; routingNumber is invalid',
      '',
      '',
      '',
      '',
      '',
    ]);
    // Excel cannot hold more than 32,767 characters in a cell; the reader already reported it.
    expect(third!.cells[2]!.text).toHaveLength(32_767);
    expect(third!.cells.at(-1)).toEqual(str('trx_9'));
  });

  it('marks failing cells and the status with a light red fill, bolds the header, keeps identifiers as text', async () => {
    const out = await writeXlsx(rows);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(out);
    const sheet = book.getWorksheet('Results')!;
    const fill = (row: number, column: number) =>
      (sheet.getCell(row, column).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb;
    expect(sheet.getRow(1).getCell(1).font?.bold).toBe(true);
    // Row 3 (sheet row 3) is invalid: amount (B), routing (C) and result.status (F) are marked;
    // column 4 of the input (old result.status) is dropped, so nothing else is.
    expect([1, 2, 3, 4, 5, 6, 7].map((c) => fill(3, c))).toEqual([
      undefined,
      'FFFFC7CE',
      'FFFFC7CE',
      undefined,
      undefined,
      'FFFFC7CE',
      undefined,
    ]);
    expect([1, 2, 3, 6].map((c) => fill(2, c))).toEqual([undefined, undefined, undefined, undefined]);
    expect(sheet.getCell(2, 3).numFmt).toBe('@');
    expect(sheet.getCell(2, 1).numFmt).toBe('@');
    expect(sheet.getCell(2, 2).value).toBe(12.5);
    expect(sheet.getCell(2, 5).value).toBe(2);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
  });
});

describe.each<SheetFormat>(['csv', 'xlsx'])('%s results under backpressure', (format) => {
  // `payouts validate` writes a batch of rows, then awaits the last promise; a 'drain' listener
  // per row flooded the terminal with MaxListenersExceededWarning from ~500 rows on.
  it('waits for one drain however many rows ask, and Node warns of nothing', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const out = path.join(await tempDir(), `r.${format}`);
      const writer = await openResultsWriter({ path: out, format, inputHeaders: ['reference', 'note'] });
      // Random text: zipped XLSX output must grow as fast as CSV for the file to push back.
      const note = str(randomBytes(1000).toString('hex'));
      let waits = 0;
      for (let batch = 0; batch < 8; batch++) {
        const pending = new Set<Promise<void>>();
        for (let i = 0; i < 500; i++) {
          const wait = writer.write(
            record([str(`A-${batch}-${i}`), note], { rowNumber: batch * 500 + i + 2 }),
          );
          if (wait) pending.add(wait);
        }
        waits += pending.size;
        await Promise.all(pending);
      }
      await writer.commit();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      // The same promise is handed out until the drain: at most one per batch.
      expect(waits).toBeLessThanOrEqual(8);
      expect((await readSheet(out)).rows).toHaveLength(4000);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe.each<SheetFormat>(['csv', 'xlsx'])('atomic %s results', (format) => {
  const name = `payouts.results.${format}`;
  const inputHeaders = ['reference', 'amount'];
  const row = record([str('A-1'), str('1')]);

  it('shows nothing at the target until commit, then leaves no temporary file', async () => {
    const dir = await tempDir();
    const out = path.join(dir, name);
    const writer = await openResultsWriter({ path: out, format, inputHeaders });
    await writer.write(row);
    const during = await readdir(dir);
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(
      new RegExp(`^\\.${name.replaceAll('.', '\\.')}\\.tmp-${process.pid}-[0-9a-f]+$`),
    );
    await writer.commit();
    expect(await readdir(dir)).toEqual([name]);
  });

  it('abort leaves neither a temporary file nor a target', async () => {
    const dir = await tempDir();
    const writer = await openResultsWriter({ path: path.join(dir, name), format, inputHeaders });
    await writer.write(row);
    await writer.abort();
    await writer.abort();
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps an older results file as it was until the rename', async () => {
    const dir = await tempDir();
    const out = path.join(dir, name);
    await writeFile(out, 'older results');
    const writer = await openResultsWriter({ path: out, format, inputHeaders });
    await writer.write(row);
    expect(await readFile(out, 'utf8')).toBe('older results');
    await writer.abort();
    expect(await readFile(out, 'utf8')).toBe('older results');
    expect(await readdir(dir)).toEqual([name]);
    const second = await openResultsWriter({ path: out, format, inputHeaders });
    await writeAll(second, [row]);
    expect((await readSheet(out)).rows).toHaveLength(1);
  });

  it('a failing commit removes the temporary file and leaves the target alone', async () => {
    const dir = await tempDir();
    const out = path.join(dir, name);
    await mkdir(out);
    await writeFile(path.join(out, 'keep.txt'), 'kept');
    const writer = await openResultsWriter({ path: out, format, inputHeaders });
    await writer.write(row);
    const error = await rejection(writer.commit());
    // A file error is the environment's (StorageError, exit 2 or 6), never a bug.
    expect(error).toBeInstanceOf(StorageError);
    expect(error.message).toBe(
      `cannot write the results file ${out} (fix the folder, or write elsewhere with --out PATH, then run again): it is a directory (EISDIR)`,
    );
    expect(await readdir(dir)).toEqual([name]);
    expect(await readdir(out)).toEqual(['keep.txt']);
  });

  it('removes the temporary file a killed run left behind, but not one of a live process', async () => {
    const dir = await tempDir();
    const out = path.join(dir, name);
    const dead = `.${name}.tmp-999999999-abcdef012345`;
    const live = `.${name}.tmp-${process.ppid}-abcdef012345`;
    const other = `.other.csv.tmp-999999999-abcdef012345`;
    for (const file of [dead, live, other]) await writeFile(path.join(dir, file), 'partial');
    const writer = await openResultsWriter({ path: out, format, inputHeaders });
    await writeAll(writer, [row]);
    expect((await readdir(dir)).sort()).toEqual([live, other, name].sort());
  });

  it('refuses a target in a directory that does not exist, creating nothing', async () => {
    const dir = await tempDir();
    const out = path.join(dir, 'missing', name);
    const error = await rejection(openResultsWriter({ path: out, format, inputHeaders }));
    expect(error).toBeInstanceOf(StorageError);
    expect(error.message).toBe(
      `cannot write the results file ${out} (its folder does not exist: create it, or write elsewhere with --out PATH, then run again): no such file or directory (ENOENT)`,
    );
    expect([(error as StorageError).exitCode, (error as StorageError).sent().exitCode]).toEqual([2, 6]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('XLSX results of a workbook with other sheets', () => {
  it('keeps every cell of the other sheets, beyond the first row too, with its type and number format', async () => {
    const dir = await tempDir();
    const input = path.join(dir, 'payouts.xlsx');
    const book = new ExcelJS.Workbook();
    const pay = book.addWorksheet('Pay');
    pay.addRow(['reference', 'amount']);
    pay.addRow(['A-1', 5]);
    // A title in A1 alone, a table below it, and a number in the first row of another sheet:
    // none of it is a payout sheet's header, and all of it is the user's.
    const summary = book.addWorksheet('Summary');
    summary.getCell('A1').value = 'Quarterly title';
    summary.getCell('A3').value = 'name';
    summary.getCell('B3').value = 'share';
    summary.getCell('A4').value = 'x';
    summary.getCell('B4').value = 0.125;
    summary.getCell('B4').numFmt = '0.00%';
    summary.getCell('C5').value = new Date(Date.UTC(2024, 0, 2));
    summary.getCell('C5').numFmt = 'yyyy-mm-dd';
    // Widths from column B on: column A has none of its own.
    summary.getColumn(2).width = 30;
    summary.getColumn(3).hidden = true;
    const other = book.addWorksheet('Other', { state: 'hidden' });
    other.getCell('B2').value = 42;
    await book.xlsx.writeFile(input);

    const out = path.join(dir, 'payouts.results.xlsx');
    const writer = await openResultsWriter({
      path: out,
      format: 'xlsx',
      inputHeaders: ['reference', 'amount'],
      workbook: { path: input, sheet: 'Pay', sheets: ['Pay', 'Summary', 'Other'] },
    });
    await writeAll(writer, [record([str('A-1'), num('5')])]);

    const back = new ExcelJS.Workbook();
    await back.xlsx.readFile(out);
    expect(back.worksheets.map((w) => w.name)).toEqual(['Pay', 'Summary', 'Other']);
    const kept = back.getWorksheet('Summary')!;
    expect(kept.getCell('A1').value).toBe('Quarterly title');
    expect(kept.getCell('A3').value).toBe('name');
    expect(kept.getCell('B3').value).toBe('share');
    expect(kept.getCell('B4').value).toBe(0.125);
    expect(kept.getCell('B4').numFmt).toBe('0.00%');
    expect(kept.getCell('C5').value).toEqual(new Date(Date.UTC(2024, 0, 2)));
    expect(kept.getColumn(2).width).toBe(30);
    expect(kept.getColumn(1).width).not.toBe(30);
    expect(kept.getColumn(3).hidden).toBe(true);
    expect(kept.getColumn(2).hidden).toBe(false);
    expect(back.getWorksheet('Other')!.getCell('B2').value).toBe(42);
    expect(back.getWorksheet('Other')!.state).toBe('hidden');
    expect(kept.state).toBe('visible');
  });

  it('refuses a damaged other sheet when opened, before any row, naming it, and leaves no file', async () => {
    const dir = await tempDir();
    const input = path.join(dir, 'payouts.xlsx');
    const book = new ExcelJS.Workbook();
    book.addWorksheet('Pay').addRow(['reference', 'amount']);
    book.addWorksheet('Summary').getCell('A1').value = 'Quarterly title';
    await book.xlsx.writeFile(input);
    // Cut the Summary sheet's XML inside its first cell's tag, as a damaged file would have it.
    const zip = await JSZip.loadAsync(await readFile(input));
    const part = 'xl/worksheets/sheet2.xml';
    const xml = await zip.file(part)!.async('string');
    zip.file(part, xml.slice(0, xml.indexOf('<c r="A1"') + 12));
    await writeFile(input, await zip.generateAsync({ type: 'nodebuffer' }));

    const out = path.join(dir, 'payouts.results.xlsx');
    const error = await rejection(
      openResultsWriter({
        path: out,
        format: 'xlsx',
        inputHeaders: ['reference', 'amount'],
        workbook: { path: input, sheet: 'Pay', sheets: ['Pay', 'Summary'] },
      }),
    );
    expect(error).toBeInstanceOf(SheetError);
    expect(error.message).toBe(
      `${input}: worksheet "Summary", which the results file keeps, cannot be read: the workbook is damaged (xl/worksheets/sheet2.xml: unclosed tag: row) in row 1 - open it in Excel (or LibreOffice) and save it again as .xlsx`,
    );
    expect(await readdir(dir)).toEqual(['payouts.xlsx']);
  });
});
