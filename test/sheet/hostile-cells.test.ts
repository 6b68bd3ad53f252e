// Bounded memory on hostile sheets. A cell over Excel's limit is an error on
// its row, read without holding the whole cell; no message echoes more than ~80 characters of it.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { MAX_CELL_CHARS } from '../../src/sheet/limits.js';
import { TextRunLimit } from '../../src/sheet/xlsx-parts.js';
import { readSheet, useTempDirs } from './tmp.js';

describe('TextRunLimit', () => {
  it.each([
    ['short runs pass', ['<c><v>12</v></c>'], '<c><v>12</v></c>'],
    ['a long run is cut at the limit', ['<t>', 'x'.repeat(30), '</t>'], `<t>${'x'.repeat(7)}</t>`],
    ['the cut never splits an entity', ['<t>abc&amp;', 'xxxxxx</t>'], '<t>abc</t>'],
    ['the cut never splits a surrogate pair', ['<t>abcdef\u{1F600}x', '</t>'], '<t>abcdef</t>'],
    [
      'a new tag starts a new run',
      ['<t>xxxxxxx</t><t>', 'yyyyyyyyyy', '</t>'],
      '<t>xxxxxxx</t><t>yyyyyyy</t>',
    ],
  ])('%s', (_label, chunks, expected) => {
    // A limit of 10 characters since the last "<" (the tag itself counts).
    const limit = new TextRunLimit(10);
    expect(chunks.map((c) => limit.cut(c)).join('')).toBe(expected);
  });

  it('looks inside a chunk longer than the limit', () => {
    const limit = new TextRunLimit(10);
    expect(limit.cut(`<a>${'x'.repeat(20)}</a><b>yy</b>`)).toBe(`<a>${'x'.repeat(7)}</a><b>yy</b>`);
  });
});

const tempDir = useTempDirs();

/** A workbook of one worksheet, "Payouts" (xl/worksheets/sheet1.xml, for the test to add), and its shared strings when asked. */
function payoutsWorkbook(sharedStrings: boolean): JSZip {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
  );
  zip.file(
    'xl/workbook.xml',
    '<workbook xmlns:r="r"><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>',
  );
  const strings = sharedStrings
    ? '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
    : '';
  zip.file(
    'xl/_rels/workbook.xml.rels',
    `<Relationships><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>${strings}</Relationships>`,
  );
  return zip;
}

async function workbookWithHugeCells(file: string, chars: number): Promise<void> {
  const huge = `${'A'.repeat(chars - 4)}&amp;`;
  const zip = payoutsWorkbook(true);
  zip.file(
    'xl/sharedStrings.xml',
    `<sst><si><t>reference</t></si><si><t>${huge}</t></si><si><t>amount</t></si></sst>`,
  );
  zip.file(
    'xl/worksheets/sheet1.xml',
    `<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>2</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>1</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>${huge}</t></is></c><c r="B3"><v>2</v></c></row><row r="4"><c r="A4" t="inlineStr"><is><t>OK-1</t></is></c><c r="B4"><v>3</v></c></row></sheetData></worksheet>`,
  );
  await writeFile(file, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
}

describe('XLSX cells over the limit', () => {
  it('are an error on their row, shared or inline, and the text kept is bounded', async () => {
    const file = path.join(await tempDir(), 'huge.xlsx');
    await workbookWithHugeCells(file, 5_000_000);
    const { rows } = await readSheet(file);
    expect(rows.map((r) => [r.rowNumber, r.problems])).toEqual([
      [
        2,
        [
          'column "reference" holds more than 32,767 characters, but a cell holds at most 32,767 (Excel\'s limit): shorten it',
        ],
      ],
      [
        3,
        [
          'column "reference" holds more than 32,767 characters, but a cell holds at most 32,767 (Excel\'s limit): shorten it',
        ],
      ],
      [4, []],
    ]);
    for (const row of rows.slice(0, 2)) {
      expect(row.cells[0]!.text.length).toBeGreaterThan(MAX_CELL_CHARS);
      expect(row.cells[0]!.text.length).toBeLessThanOrEqual(8 * MAX_CELL_CHARS);
    }
    expect(rows[2]!.cells.map((c) => c.text)).toEqual(['OK-1', '3']);
  });
});

describe('XLSX error values', () => {
  it('are shown on one line, short, and without the "; " that separates a row\'s messages', async () => {
    const file = path.join(await tempDir(), 'errors.xlsx');
    const zip = payoutsWorkbook(false);
    // Excel writes only its own error values; a file made elsewhere can hold any text there.
    zip.file(
      'xl/worksheets/sheet1.xml',
      `<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>reference</t></is></c></row><row r="2"><c r="A2" t="e"><v>#N/A; x&#10;${'y'.repeat(200)}</v></c></row></sheetData></worksheet>`,
    );
    await writeFile(file, await zip.generateAsync({ type: 'nodebuffer' }));
    const { rows } = await readSheet(file);
    expect(rows.map((r) => r.problems)).toEqual([
      [
        `cell A2 ("reference") holds the error value "#N/A;\u00a0x\\n${'y'.repeat(72)}…" - correct the formula or type the value`,
      ],
    ]);
  });
});
