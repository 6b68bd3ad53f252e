/**
 * The batch digest's rows hashed from their cells alone (src/batch/digest.ts CellDigestRows), as
 * `validate`'s main thread hashes the rows its worker found valid: the same tag as the rows'
 * payouts as the mapper made them, for the cells people write.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchDigest, CellDigestRows, DigestRows, inDigest } from '../../src/batch/digest.js';
import { type PreparedRow, prepareSheet, sheetNumbers } from '../../src/batch/prepare.js';
import { withTempDir } from '../helpers/cli.js';
import { type SheetRow, sampleRows, writeSheet } from '../helpers/sheets.js';

/** The sample's rows, written as people write them: every cell the mapper normalises. */
function looseRows(): SheetRow[] {
  const rows = sampleRows();
  const loose = (i: number, changes: SheetRow) => {
    rows[i] = { ...rows[i]!, ...changes };
  };
  loose(0, { amount: '2,500.5', currency: ' usd', type: 'ach ' });
  loose(1, { reference: ' PAY-2026-11-0002\u200b', amount: '125.5', currency: 'Usd' });
  loose(2, { reference: 'PAY\u00a02026-11-0003', amount: '0012.50', type: 'Wire' });
  loose(3, { amount: '1 000', currency: '\tusd\t' });
  // Invalid: not in the digest, whatever its cells say.
  loose(4, { amount: '12,50', type: 'cheque' });
  return rows;
}

/** The tag of these rows hashed from the mapper's payouts, and from their cells alone. */
async function tagsOf(sheetPath: string): Promise<{ mapped: string; cells: string; valid: number }> {
  const prepared = await prepareSheet({ sheetPath });
  const rows: PreparedRow[] = [];
  for await (const batch of prepared.batches) rows.push(...batch);
  const mapped = new DigestRows(prepared.header.index);
  const cells = new CellDigestRows(prepared.header.index, sheetNumbers(prepared.sheet));
  const whole = new BatchDigest(prepared.header.index);
  let valid = 0;
  for (const row of rows) {
    if (!inDigest(row)) continue;
    valid += 1;
    mapped.add(row.payout, row.raw.cells);
    cells.add(row.raw);
    whole.add(row);
  }
  const tag = mapped.finish();
  expect(whole.finish().tag).toBe(tag);
  return { mapped: tag, cells: cells.finish(), valid };
}

describe('the batch digest rows read from cells', () => {
  it('hash a valid row as its mapped payout: trimmed, grouped, lower-case, zero-width', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'loose.csv');
      const rows = looseRows();
      await writeSheet(sheetPath, rows);
      const { mapped, cells, valid } = await tagsOf(sheetPath);
      expect(valid).toBe(rows.length - 1);
      expect(cells).toBe(mapped);
      expect(cells).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  it('read amounts with decimal commas where the sheet is separated by semicolons', async () => {
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'semicolons.csv');
      const rows = sampleRows().slice(0, 3);
      rows[0] = { ...rows[0]!, amount: '2.500,50' };
      rows[1] = { ...rows[1]!, amount: '125,5' };
      const columns = Object.keys(rows[0]!);
      const lines = [columns, ...rows.map((row) => columns.map((c) => row[c] ?? ''))];
      await writeFile(sheetPath, `${lines.map((cells) => cells.join(';')).join('\r\n')}\r\n`);
      const { mapped, cells, valid } = await tagsOf(sheetPath);
      expect(valid).toBe(3);
      expect(cells).toBe(mapped);
    });
  });

  it('differ when a row differs: the tag is of every valid row', async () => {
    await withTempDir(async (dir) => {
      const first = path.join(dir, 'first.csv');
      const second = path.join(dir, 'second.csv');
      const rows = sampleRows();
      await writeSheet(first, rows);
      rows[6] = { ...rows[6]!, amount: `${rows[6]!['amount']}1` };
      await writeSheet(second, rows);
      expect((await tagsOf(second)).cells).not.toBe((await tagsOf(first)).cells);
    });
  });

  it('a digest whose rows were hashed elsewhere needs their tag', () => {
    const digest = new BatchDigest(new Map([['reference', 0]]), 'elsewhere');
    expect(() => digest.finish()).toThrow('the batch digest needs the tag of rows hashed elsewhere');
    expect(digest.finish('a'.repeat(64)).tag).toBe('a'.repeat(64));
  });
});
