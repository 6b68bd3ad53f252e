import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
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

/** Where unzipper reads the archive's bytes from (its `Open.custom`). */
interface ZipSource {
  stream(offset: number, length?: number): Readable;
  size(): Promise<number>;
}

interface Unzipper {
  Open: { custom(source: ZipSource): Promise<{ files: ZipEntry[] }> };
}

// exceljs reads zips with unzipper too, at this version: one copy of it is installed.
const unzipper = unzipperModule as unknown as Unzipper;

/**
 * Opens a zip by its central directory (at the end of the file), so the parts of a workbook can
 * be read in the order we need whatever their order in the file. Rejects for a non-zip or a
 * truncated file.
 */
export async function openZip(file: string): Promise<ZipArchive> {
  // unzipper reads an entry through a stream of the file that it closes once the entry was read
  // to its end: a reader that stops early (an error, a header read alone) would keep the file
  // open for as long as the process lives. The file's streams are made here instead, each
  // closed with the entry it reads.
  let made: Readable | undefined;
  const source: ZipSource = {
    // As unzipper's own file source: `end` is inclusive, and one byte past the length is harmless.
    stream: (offset, length) => {
      made = createReadStream(file, { start: offset, end: length ? offset + length : undefined });
      return made;
    },
    size: async () => (await stat(file)).size,
  };
  const directory = await unzipper.Open.custom(source);
  const byPath = new Map<string, ZipEntry>();
  const byLowerPath = new Map<string, ZipEntry>();
  for (const read of directory.files) {
    if (read.type !== 'File') continue;
    const entry: ZipEntry = {
      path: read.path,
      type: read.type,
      uncompressedSize: read.uncompressedSize,
      stream: () => {
        made = undefined;
        // unzipper asks the source for the file's stream as the entry's stream is made.
        const stream = read.stream();
        const bytes = made as Readable | undefined;
        stream.once('close', () => bytes?.destroy());
        return stream;
      },
    };
    byPath.set(entry.path, entry);
    byLowerPath.set(entry.path.toLowerCase(), entry);
  }
  return {
    entry: (path) => byPath.get(path) ?? byLowerPath.get(path.toLowerCase()),
    paths: [...byPath.keys()],
  };
}
