/**
 * The run's scratch space: a private folder under TMPDIR holding the sheet's snapshot, each
 * row's warnings and the rows' results (docs/container.md "Scratch space"). In a container it
 * is a small `emptyDir` that fills like any disk: every failure to use it is a ScratchError in
 * words that names the folder and what to do (exit 2 before sending, 6 after), never a crash;
 * and before anything is sent the run checks that the sheet fits.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { errnoOf, ScratchError } from '../errors.js';
import { freeBytes } from '../folders.js';

/** Text gathered before a write. */
export const WRITE_CHARS = 256 * 1024;

/** The folder the run's scratch space is made in (TMPDIR, else the system's). */
export function scratchFolder(): string {
  return tmpdir();
}

/** A failure of the scratch space, in words, with what to do. */
export function scratchFailure(cause: unknown): ScratchError {
  if (cause instanceof ScratchError) return cause;
  const folder = scratchFolder();
  const code = errnoOf(cause);
  const words = code === undefined ? `: ${cause instanceof Error ? cause.message : String(cause)}` : '';
  // StorageError says the errno in words after this.
  return new ScratchError(`${scratchNamed(folder)} cannot be used${words}`, { path: folder, cause });
}

/** The scratch folder named, with what to do about it. */
function scratchNamed(folder: string): string {
  return `the run's scratch space in ${folder} (TMPDIR: free space there, or set TMPDIR to a writable folder with room)`;
}

/**
 * What the scratch space holds for a sheet, measured (docs/container.md "Scratch space"): the
 * snapshot of its rows is about 1.4 times a CSV sheet, and about 4 times an XLSX workbook
 * (which is compressed); then, per row, its warnings (up to about 220 bytes) and its result
 * (about 160 bytes), twice while the outcomes known after sending are read into them.
 */
export const SCRATCH = {
  snapshotPerByte: { csv: 1.4, xlsx: 4 },
  bytesPerRow: 220 + 2 * 160,
  /** Left over for the file system's own blocks. */
  marginBytes: 1024 * 1024,
} as const;

/**
 * Throws ScratchError (exit 2: nothing was sent yet) when the scratch space has less room than
 * `need` bytes (`what`: "for its ..."), with both figures. Where the free space cannot be told, the run goes
 * on: a write that fails still says so.
 */
export function checkScratchRoom(need: number, what: string): void {
  const folder = scratchFolder();
  const free = freeBytes(folder);
  const wanted = need + SCRATCH.marginBytes;
  if (free === undefined || free >= wanted) return;
  throw new ScratchError(
    `${scratchNamed(folder)} has ${megabytes(free)} free, and this sheet needs about ${megabytes(wanted)} more there ${what}. Nothing was sent`,
    { path: folder, errno: '' },
  );
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Runs `step`, turning a failure of the file system into a ScratchError. */
export async function inScratch<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw scratchFailure(error);
  }
}

/**
 * A file of lines in the scratch space, written a buffer at a time: the snapshot's rows and
 * the rows' warnings. Every failure to open or write it is a ScratchError.
 */
export class ScratchLines {
  private pending = '';

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** A new file (0600: rows hold account numbers). */
  static async create(file: string): Promise<ScratchLines> {
    return new ScratchLines(file, await inScratch(() => open(file, 'w', 0o600)));
  }

  /** Adds a line; returns a promise to wait on only when a write is due (not one per line). */
  add(line: string): Promise<void> | undefined {
    this.pending += `${line}\n`;
    return this.pending.length >= WRITE_CHARS ? this.flush() : undefined;
  }

  /** Writes what is pending and closes the file. */
  async seal(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close().catch(() => {});
    }
  }

  /** Closes the file without writing what is pending. */
  async abandon(): Promise<void> {
    await this.handle.close().catch(() => {});
  }

  private async flush(): Promise<void> {
    if (this.pending === '') return;
    const bytes = Buffer.from(this.pending);
    this.pending = '';
    await inScratch(async () => {
      // A full disk may take part of a write and refuse the rest: a part is no line.
      const { bytesWritten } = await this.handle.write(bytes);
      if (bytesWritten !== bytes.length) throw diskFull();
    });
  }
}

/** The error of a write the disk took only part of. */
export function diskFull(): Error {
  return Object.assign(new Error('the disk took only part of a write'), { code: 'ENOSPC' });
}

/** Reads the lines of a scratch file, in order, skipping empty ones. */
export async function* scratchLines(file: string): AsyncGenerator<string> {
  const handle = await open(file, 'r');
  try {
    for await (const line of handle.readLines({ encoding: 'utf8' })) if (line !== '') yield line;
  } finally {
    await handle.close();
  }
}
