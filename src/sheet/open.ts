import { open as openFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { SheetError } from '../errors.js';
import { type CsvEncoding, openCsv } from './csv.js';
import { restoreFormula } from './formula.js';
import { isResultHeader } from './headers.js';
import type { OpenedSheet, RawRow } from './types.js';
import { unreadableReason } from './unreadable.js';

/** Options of `openSheet`: `--delimiter`, `--encoding` (CSV) and `--sheet` (XLSX). */
export interface OpenSheetOptions {
  delimiter?: string;
  encoding?: CsvEncoding;
  sheetName?: string;
  /** Which row is the header row (and, without --sheet, which worksheet has one). */
  isHeaderRow?: (cells: readonly string[]) => boolean;
}

const CSV_EXTENSIONS = new Set(['.csv', '.txt', '.tsv']);
const XLSX_EXTENSIONS = new Set(['.xlsx', '.xlsm']);
const ZIP_MAGIC = Buffer.from('PK\x03\x04', 'latin1');
// Compound File Binary: Excel 97-2003 .xls, and password-protected .xlsx.
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/**
 * Opens a payout sheet, CSV or XLSX, by its extension and its first bytes (which must agree).
 * Throws SheetError (exit 2) naming the file when it cannot be read as a whole.
 */
export async function openSheet(file: string, opts: OpenSheetOptions = {}): Promise<OpenedSheet> {
  return restoredIfResults(await openByFormat(file, opts));
}

async function openByFormat(file: string, opts: OpenSheetOptions): Promise<OpenedSheet> {
  const magic = await firstBytes(file);
  const extension = path.extname(file).toLowerCase();
  const isZip = magic.subarray(0, 4).equals(ZIP_MAGIC);
  if (magic.subarray(0, 8).equals(OLE2_MAGIC)) {
    throw new SheetError(
      file,
      'is an Excel 97-2003 workbook (.xls) or a password-protected one: save it as an Excel Workbook (.xlsx) without a password, or as CSV UTF-8',
    );
  }
  if (extension === '.xls') {
    throw new SheetError(
      file,
      'has the .xls extension, which payouts does not read: save it as .xlsx or CSV UTF-8',
    );
  }
  if (extension === '.ods') {
    throw new SheetError(file, 'is an OpenDocument spreadsheet: save it as .xlsx or CSV UTF-8');
  }
  if (XLSX_EXTENSIONS.has(extension)) {
    if (!isZip && magic.length > 0) {
      throw new SheetError(
        file,
        `has the ${extension} extension but is not an Excel workbook (it looks like a text file): if it is a CSV, rename it to .csv`,
      );
    }
    return (await import('./xlsx.js')).openXlsx(file, {
      sheetName: opts.sheetName,
      isHeaderRow: opts.isHeaderRow,
    });
  }
  if (isZip) {
    if (CSV_EXTENSIONS.has(extension)) {
      throw new SheetError(
        file,
        `has the ${extension} extension but is an Excel workbook: rename it to .xlsx`,
      );
    }
    return (await import('./xlsx.js')).openXlsx(file, {
      sheetName: opts.sheetName,
      isHeaderRow: opts.isHeaderRow,
    });
  }
  return openCsv(file, { delimiter: opts.delimiter, encoding: opts.encoding, isHeaderRow: opts.isHeaderRow });
}

/**
 * A results file fed back (it has `result.*` columns) gets its formula marks removed, so the
 * service receives exactly what the user had typed, never the `'` (docs/sheets.md "The results
 * file").
 */
function restoredIfResults(sheet: OpenedSheet): OpenedSheet {
  if (!sheet.headers.some(isResultHeader)) return sheet;
  const restoreRow = (row: RawRow): RawRow => {
    for (let i = 0; i < row.cells.length; i++) {
      const cell = row.cells[i]!;
      if (cell.kind === 'string' && cell.text.charCodeAt(0) === 39 /* ' */) {
        const text = restoreFormula(cell.text);
        if (text !== cell.text) row.cells[i] = { ...cell, text };
      }
    }
    return row;
  };
  const { rows, batches } = sheet;
  return {
    ...sheet,
    headers: sheet.headers.map(restoreFormula),
    rows: (async function* () {
      for await (const row of rows) yield restoreRow(row);
    })(),
    batches:
      batches &&
      (async function* () {
        for await (const batch of batches) {
          for (const row of batch) restoreRow(row);
          yield batch;
        }
      })(),
  };
}

async function firstBytes(file: string): Promise<Buffer> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new SheetError(file, 'is a directory, not a sheet file');
    if (!info.isFile()) throw new SheetError(file, 'is not a regular file');
    const handle = await openFile(file, 'r');
    try {
      const buffer = Buffer.alloc(8);
      const { bytesRead } = await handle.read(buffer, 0, 8, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof SheetError) throw error;
    throw new SheetError(file, unreadableReason(error), { cause: error });
  }
}
