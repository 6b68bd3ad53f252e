import type { Readable } from 'node:stream';
import unzipperModule from 'unzipper';

/** One file inside a zip archive. */
export interface ZipEntry {
  path: string;
  type: 'File' | 'Directory';
  uncompressedSize: number;
  stream(): Readable;
}

/** A zip archive opened from its central directory: any entry can be read in any order. */
export interface ZipArchive {
  /** Entry by path; falls back to a case-insensitive match, as some writers vary the case. */
  entry(path: string): ZipEntry | undefined;
  readonly paths: string[];
}

interface Unzipper {
  Open: { file(path: string): Promise<{ files: ZipEntry[] }> };
}

// exceljs reads zips with unzipper too, at this version: one copy of it is installed.
const unzipper = unzipperModule as unknown as Unzipper;

/**
 * Opens a zip by its central directory (at the end of the file), so the parts of a workbook can
 * be read in the order we need whatever their order in the file. Rejects for a non-zip or a
 * truncated file.
 */
export async function openZip(file: string): Promise<ZipArchive> {
  const directory = await unzipper.Open.file(file);
  const byPath = new Map<string, ZipEntry>();
  const byLowerPath = new Map<string, ZipEntry>();
  for (const entry of directory.files) {
    if (entry.type !== 'File') continue;
    byPath.set(entry.path, entry);
    byLowerPath.set(entry.path.toLowerCase(), entry);
  }
  return {
    entry: (path) => byPath.get(path) ?? byLowerPath.get(path.toLowerCase()),
    paths: [...byPath.keys()],
  };
}
