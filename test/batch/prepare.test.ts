import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PreparedRow, prepareSheet } from '../../src/batch/prepare.js';
import { SheetError } from '../../src/errors.js';
import { withTempDir } from '../helpers/cli.js';
import { generateRows, SAMPLES_DIR, type SheetRow, writeSheet } from '../helpers/sheets.js';

async function viaRows(sheetPath: string): Promise<PreparedRow[]> {
  const rows: PreparedRow[] = [];
  for await (const row of (await prepareSheet({ sheetPath })).rows) rows.push(row);
  return rows;
}

async function viaBatches(sheetPath: string): Promise<PreparedRow[][]> {
  const batches: PreparedRow[][] = [];
  for await (const batch of (await prepareSheet({ sheetPath })).batches) batches.push(batch);
  return batches;
}

/** Comparable parts of a prepared row (the refs' keys are getters). */
function plain(row: PreparedRow) {
  return {
    rowNumber: row.raw.rowNumber,
    cells: row.raw.cells,
    problems: row.raw.problems,
    reference: row.payout.reference,
    amount: row.payout.amount,
    beneficiary: row.payout.beneficiary.kind,
    recipient: row.payout.recipient.kind,
    issues: row.issues,
    errorColumns: row.errorColumns,
  };
}

describe('prepareSheet batches', () => {
  it('give the rows of `rows`, a reference used twice flagged across batches', async () => {
    await withTempDir(async (dir) => {
      const rows: SheetRow[] = generateRows(3000);
      rows[2500] = { ...rows[2500]!, reference: rows[10]!['reference']!, amount: '0' };
      const sheet = path.join(dir, 'sheet.csv');
      await writeSheet(sheet, rows);
      const batches = await viaBatches(sheet);
      expect(batches.length).toBeGreaterThan(2);
      const flat = batches.flat();
      expect(flat.map(plain)).toEqual((await viaRows(sheet)).map(plain));
      expect(flat).toHaveLength(3000);
      expect(flat[2500]!.issues.map((i) => i.message)).toEqual([
        expect.stringMatching(/^amount "0" is not greater than 0/),
        `reference "${rows[10]!['reference']}" is already used on row 12: every payout needs its own reference, so this row would not be paid`,
      ]);
      expect(flat[2500]!.errorColumns).toEqual([1, 0]);
    });
  });

  it('quote a long reference used twice in 80 characters, on one line', async () => {
    await withTempDir(async (dir) => {
      const rows: SheetRow[] = generateRows(3);
      const long = `R\n${'9'.repeat(100_000)}`;
      rows[0] = { ...rows[0]!, reference: long };
      rows[2] = { ...rows[2]!, reference: long };
      const sheet = path.join(dir, 'sheet.csv');
      await writeSheet(sheet, rows);
      const [, , third] = await viaRows(sheet);
      expect(third!.issues.map((i) => i.message)).toContain(
        `reference "R\\n${'9'.repeat(78)}…" is already used on row 2: every payout needs its own reference, so this row would not be paid`,
      );
    });
  });

  it('give the mistakes of the mistakes sample as `rows` does', async () => {
    const sheet = path.join(SAMPLES_DIR, 'payouts-mistakes.csv');
    const flat = (await viaBatches(sheet)).flat();
    expect(flat.some((row) => row.issues.length > 0)).toBe(true);
    expect(flat.map(plain)).toEqual((await viaRows(sheet)).map(plain));
  });

  it('refuse a sheet of headers alone with the SheetError of `rows`', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'empty.csv');
      await writeSheet(sheet, []);
      const error = await viaBatches(sheet).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SheetError);
      expect((error as Error).message).toBe(
        `${sheet}: has column headers but no payout rows: is this the right file?`,
      );
      expect(((await viaRows(sheet).catch((e: unknown) => e)) as Error).message).toBe(
        (error as Error).message,
      );
    });
  });
});
