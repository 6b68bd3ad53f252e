import { access, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { type CanonicalColumn, IDENTIFIER_COLUMNS } from '../columns/columns.js';
import { RAILS, type Rail } from '../columns/rails.js';
import { ConfigError, errnoOf, systemErrorInWords } from '../errors.js';
import { makeFolder } from '../folders.js';
import { columnHelp, columnsForRails, railsDescription } from './column-help.js';

/** One template: the file stem and the rails it covers. */
export interface TemplateSpec {
  name: string;
  rails: readonly Rail[];
}

/** Templates for the given rails, or one per rail plus `all-rails` when none is named. */
export function templateSpecs(rails: readonly Rail[]): TemplateSpec[] {
  const chosen = rails.length > 0 ? rails : RAILS;
  const specs: TemplateSpec[] = chosen.map((rail) => ({ name: rail.toLowerCase(), rails: [rail] }));
  if (rails.length === 0) specs.push({ name: 'all-rails', rails: RAILS });
  return specs;
}

// Columns a spreadsheet must keep as text: identifiers lose leading zeros as numbers, and
// postal codes do too (docs/sheets.md: spreadsheet damage).
const TEXT_COLUMNS = new Set<string>([
  ...IDENTIFIER_COLUMNS,
  'reference',
  'recipientAddress.postalCode',
  'bankAddress.postalCode',
]);

// A fixed date keeps regenerated templates identical to the committed ones.
const TEMPLATE_DATE = new Date('2026-01-01T00:00:00Z');

/** The files `writeTemplates` writes for the specs: `<name>.csv` and `<name>.xlsx` in `dir`. */
export function templatePaths(dir: string, specs: readonly TemplateSpec[]): string[] {
  return specs.flatMap((spec) => [path.join(dir, `${spec.name}.csv`), path.join(dir, `${spec.name}.xlsx`)]);
}

/** Which of the paths already exist (a filled-in sheet must not be overwritten). */
export async function existingPaths(paths: readonly string[]): Promise<string[]> {
  const found = await Promise.all(
    paths.map((file) =>
      access(file).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
      ),
    ),
  );
  return paths.filter((_, i) => found[i]);
}

/** Writes `<name>.csv` and `<name>.xlsx` for each spec into `dir`; returns the paths written. */
/**
 * `--dir` is a folder, or nothing yet (it is made): a file there would otherwise read as
 * "templates already exist", and a path under a file as a bug.
 */
export async function checkTemplateFolder(dir: string): Promise<void> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(dir)).isDirectory();
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw cannotWrite(dir, error);
  }
  if (!isFolder)
    throw new ConfigError(`--dir ${dir} is a file, not a folder: choose a folder for the templates`);
}

/** Writes the templates into `dir`; a folder the system refuses is the user's to fix (exit 2), not a bug. */
export async function writeTemplatesTo(dir: string, specs: readonly TemplateSpec[]): Promise<string[]> {
  try {
    return await writeTemplates(dir, specs);
  } catch (error) {
    if (errnoOf(error) === undefined) throw error;
    throw cannotWrite(dir, error);
  }
}

function cannotWrite(dir: string, error: unknown): ConfigError {
  return new ConfigError(
    `cannot write the templates to ${dir}: ${systemErrorInWords(error)} - choose another --dir`,
    {
      cause: error,
    },
  );
}

export async function writeTemplates(dir: string, specs: readonly TemplateSpec[]): Promise<string[]> {
  await makeFolder(dir);
  const written: string[] = [];
  for (const spec of specs) {
    const columns = columnsForRails(spec.rails);
    const [csvPath, xlsxPath] = templatePaths(dir, [spec]) as [string, string];
    await writeAtomically(csvPath, (tmp) => writeFile(tmp, `${columns.join(',')}\r\n`, 'utf8'));
    await writeAtomically(xlsxPath, (tmp) => templateWorkbook(spec, columns).xlsx.writeFile(tmp));
    written.push(csvPath, xlsxPath);
  }
  return written;
}

function templateWorkbook(spec: TemplateSpec, columns: readonly CanonicalColumn[]): ExcelJS.Workbook {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'payouts';
  workbook.created = TEMPLATE_DATE;
  workbook.modified = TEMPLATE_DATE;
  const sheet = workbook.addWorksheet('Payouts', { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = columns.map((column) => ({
    header: column,
    key: column,
    width: Math.max(14, column.length + 2),
    style: TEXT_COLUMNS.has(column) ? { numFmt: '@' } : {},
  }));
  const headerRow = sheet.getRow(1);
  headerRow.font = { bold: true };
  columns.forEach((column, i) => {
    const help = columnHelp(column);
    headerRow.getCell(i + 1).note = `${help.meaning}\nRequired: ${help.required}.`;
  });

  const notes = workbook.addWorksheet('Columns');
  notes.columns = [
    { header: 'column', key: 'column', width: 28 },
    { header: 'required', key: 'required', width: 34 },
    { header: 'meaning', key: 'meaning', width: 90 },
    { header: 'example', key: 'example', width: 26 },
  ];
  notes.getRow(1).font = { bold: true };
  for (const column of columns) notes.addRow(columnHelp(column));
  notes.addRow({});
  notes.addRow({ column: 'rails', meaning: `This template covers ${railsDescription(spec.rails)}.` });
  notes.addRow({
    column: 'tip',
    meaning:
      'Identifier columns are formatted as Text so leading zeros survive. Run "payouts validate <sheet>" before "payouts run".',
  });
  return workbook;
}

async function writeAtomically(target: string, write: (tmp: string) => Promise<unknown>): Promise<void> {
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.tmp-${process.pid}`);
  try {
    await write(tmp);
    await rename(tmp, target);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
