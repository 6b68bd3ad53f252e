import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import type { SheetFormat } from './types.js';

/** `<sheet dir>/<sheet name>` without the extension, the stem of every derived file. */
function stemOf(sheetPath: string): string {
  const parsed = path.parse(sheetPath);
  return path.join(parsed.dir, parsed.name);
}

/**
 * The default `--out` (README "Options of `validate` and `run`"):
 * `<sheet dir>/<sheet name>.results.<same extension>`; a rehearsal (`run --sandbox`) writes
 * `<sheet name>.sandbox.results.<ext>`, never over a real run's.
 */
export function resultsPathFor(sheetPath: string, format: SheetFormat, rehearsal = false): string {
  return `${stemOf(sheetPath)}${rehearsal ? '.sandbox' : ''}.results${defaultExtension(sheetPath, format)}`;
}

/**
 * The sheet's own extension, as it is spelt (`.tsv` gives `.tsv`, `.CSV` gives `.CSV`), where a
 * results file of its format may have it (extensionsFor); else the format's (`.xlsm` gives `.xlsx`).
 */
function defaultExtension(sheetPath: string, format: SheetFormat): string {
  const own = path.extname(sheetPath);
  return extensionsFor(sheetPath, format).includes(own.toLowerCase()) ? own : `.${format}`;
}

/**
 * The default `--report` of validate (README "The approver's view"): `<sheet name>.report.html`
 * beside the results file.
 */
export function reportPathFor(sheetPath: string, resultsPath: string): string {
  return path.join(path.dirname(resultsPath), `${path.parse(sheetPath).name}.report.html`);
}

/** The format a sheet is read in, by its extension (`openSheet` also checks its first bytes). */
export function formatByExtension(sheetPath: string): SheetFormat {
  const extension = path.extname(sheetPath).toLowerCase();
  return extension === '.xlsx' || extension === '.xlsm' ? 'xlsx' : 'csv';
}

// CSV sheets may be .txt or .tsv; their results are CSV, so .csv fits too. An XLSX results file
// is a plain workbook: .xlsm would make Excel refuse it (a macro workbook without macros).
function extensionsFor(sheetPath: string, format: SheetFormat): string[] {
  if (format === 'xlsx') return ['.xlsx'];
  const own = path.extname(sheetPath).toLowerCase();
  return own === '.txt' || own === '.tsv' ? ['.csv', own] : ['.csv'];
}

/**
 * Refuses a results path that cannot be right (docs/sheets.md "The results file", `--out`): one
 * whose extension is not the sheet's format (XLSX bytes in `x.csv`), or one that is the sheet
 * itself, however it is spelled: relative, through a symbolic link, as a hard link, or in another
 * case (a case-insensitive disk would write over the sheet). Throws UsageError (exit 2).
 */
export function checkResultsPath(sheetPath: string, outPath: string, format: SheetFormat): void {
  const allowed = extensionsFor(sheetPath, format);
  const extension = path.extname(outPath).toLowerCase();
  if (!allowed.includes(extension)) {
    // The same name with a right extension, unless that is the sheet itself.
    const renamed = `${outPath.slice(0, outPath.length - path.extname(outPath).length)}${allowed[0]}`;
    const suggestion = isSameFile(sheetPath, renamed) ? resultsPathFor(sheetPath, format) : renamed;
    throw new UsageError(
      `--out ${quoted(outPath)} must end in ${allowed.join(' or ')}: the results file has the format of the sheet ${quoted(sheetPath)} (${format.toUpperCase()}) - use for example --out ${quoted(suggestion)}`,
    );
  }
  if (isSameFile(sheetPath, outPath)) {
    throw new UsageError(
      `--out ${quoted(outPath)} is the sheet ${quoted(sheetPath)} itself: the results file is never written over the sheet - choose another --out, or leave it out for ${quoted(resultsPathFor(sheetPath, format))}`,
    );
  }
}

/** Whether two paths name one file, or would on a case-insensitive disk. */
export function isSameFile(a: string, b: string): boolean {
  const sheet = statOrUndefined(a);
  const other = statOrUndefined(b);
  // Hard links and symbolic links: one inode.
  if (sheet && other && sheet.dev === other.dev && sheet.ino === other.ino) return true;
  return canonical(a).toLowerCase() === canonical(b).toLowerCase();
}

// The real path of the file's folder (links resolved) and its own name, whether or not it exists.
function canonical(file: string): string {
  const absolute = path.resolve(file);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(absolute)), path.basename(absolute));
    } catch {
      return absolute;
    }
  }
}

function statOrUndefined(file: string): { dev: number; ino: number } | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

// Paths are quoted whole up to ~80 characters, then shortened in the middle with an ellipsis.
function quoted(file: string): string {
  const shown = file.length > 80 ? `${file.slice(0, 38)}...${file.slice(-39)}` : file;
  return `"${shown}"`;
}

/** The path when that file was written at or after `since` (epoch ms), else null (none there). */
export function writtenSince(file: string, since: number): string | null {
  try {
    // File times are rounded by some file systems: a second of slack.
    return statSync(file).mtimeMs >= since - 1_000 ? file : null;
  } catch {
    return null;
  }
}
