import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SheetError } from '../../src/errors.js';
import { openSheet } from '../../src/sheet/open.js';
import type { RawRow } from '../../src/sheet/types.js';
import { readSheet, rejection, useTempDirs } from './tmp.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'sheets');
const tempDir = useTempDirs();

/** Reads a sheet through `batches`, keeping the batches as they came. */
async function readBatches(file: string): Promise<RawRow[][]> {
  const sheet = await openSheet(file);
  if (sheet.batches === undefined) throw new Error('no batches');
  const batches: RawRow[][] = [];
  for await (const batch of sheet.batches) batches.push(batch);
  return batches;
}

/** A CSV of `count` rows, long enough to take several chunks of the file, with blank lines in it. */
function bigCsv(count: number): string {
  const lines = ['reference,amount,currency,type,note'];
  for (let i = 0; i < count; i++) {
    lines.push(`R-${i},${i + 1}.00,USD,ACH,"note ${i}, with a comma"`);
    if (i % 500 === 0) lines.push('', ',,,,');
    if (i === 1234) lines.push('R-short,1.00');
  }
  return `${lines.join('\r\n')}\r\n`;
}

describe('OpenedSheet.batches', () => {
  it('CSV: gives the rows of `rows`, in several batches, blank lines counted and skipped', async () => {
    const file = path.join(await tempDir(), 'big.csv');
    await writeFile(file, bigCsv(3000));
    const batches = await readBatches(file);
    expect(batches.length).toBeGreaterThan(2);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    const rows = batches.flat();
    expect(rows).toEqual((await readSheet(file)).rows);
    expect(rows).toHaveLength(3001);
    expect(rows[0]!.rowNumber).toBe(2);
    expect(rows.at(-1)!.rowNumber).toBe(2 + 3000 + 2 * 6);
    const short = rows.find((row) => row.cells[0]!.text === 'R-short')!;
    expect(short.problems).toEqual([expect.stringMatching(/^row has 2 fields but the header has 5/)]);
  });

  it('CSV: a stretch of the file with only blank lines gives no batch, and its lines still count', async () => {
    const file = path.join(await tempDir(), 'gap.csv');
    // 60,000 blank lines (120 KB with CRLF): several of the reader's chunks hold nothing else.
    const blank = Array.from({ length: 60_000 }, () => '').join('\r\n');
    await writeFile(file, `reference,amount\r\nR-1,1.00\r\n${blank}\r\nR-2,2.00\r\n`);
    const batches = await readBatches(file);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    expect(batches.flat().map((row) => [row.rowNumber, row.cells[0]!.text])).toEqual([
      [2, 'R-1'],
      [60_003, 'R-2'],
    ]);
  });

  it('XLSX: gives the rows of `rows`', async () => {
    for (const name of ['payouts.openpyxl.xlsx', 'payouts.libreoffice.xlsx']) {
      const file = path.join(FIXTURES, name);
      const rows = (await readBatches(file)).flat();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows).toEqual((await readSheet(file)).rows);
    }
  });

  it('CSV: a quote never closed ends the batches with the SheetError of `rows`, after the rows before it', async () => {
    const file = path.join(await tempDir(), 'broken.csv');
    await writeFile(file, `${bigCsv(2000)}R-x,"1.00,USD,ACH,x\r\nR-y,1.00,USD,ACH,y\r\n`);
    const sheet = await openSheet(file);
    const seen: RawRow[] = [];
    const error = await rejection(
      (async () => {
        for await (const batch of sheet.batches!) seen.push(...batch);
      })(),
    );
    expect(error).toBeInstanceOf(SheetError);
    expect(error.message).toMatch(/a quoted cell that starts in row 2011 is never closed/);
    expect(seen).toHaveLength(2001);
    const viaRows = await rejection(readSheet(file));
    expect(viaRows.message).toBe(error.message);
  });
});
