import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { type OpenSheetOptions, openSheet } from '../../src/sheet/open.js';
import type { OpenedSheet, RawRow } from '../../src/sheet/types.js';

/** A fresh temporary directory per call, removed after each test. */
export function useTempDirs(): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'payouts-sheet-'));
    dirs.push(dir);
    return dir;
  };
}

/** Opens a sheet and reads all its rows. */
export async function readSheet(
  file: string,
  opts: OpenSheetOptions = {},
): Promise<{ headers: string[]; rows: RawRow[]; dialect: OpenedSheet['dialect'] }> {
  const sheet = await openSheet(file, opts);
  const rows: RawRow[] = [];
  for await (const row of sheet.rows) rows.push(row);
  return { headers: sheet.headers, rows, dialect: sheet.dialect };
}

/** Row number and cell texts of each row, for compact assertions. */
export function texts(rows: readonly RawRow[]): [number, ...string[]][] {
  return rows.map((row) => [row.rowNumber, ...row.cells.map((cell) => cell.text)]);
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to reject');
}
