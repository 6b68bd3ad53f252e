import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf, StorageError } from '../errors.js';

/**
 * Mode of every file payouts writes for the user (results, events, logs): they hold account
 * numbers and payment details, so only the owner reads them. The process umask can
 * only make it stricter.
 */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * A file written beside its target under a temporary name, then renamed over it (a
 * failure never leaves a half-written results file; an older file stays until the rename).
 */
export class AtomicFile {
  /** Rejects with the first error of the stream; never settles otherwise. */
  readonly failed: Promise<never>;
  private error: Error | undefined;
  private settled = false;

  private constructor(
    readonly target: string,
    readonly tempPath: string,
    readonly stream: WriteStream,
  ) {
    this.failed = new Promise<never>((_resolve, reject) => {
      stream.on('error', (error) => {
        this.error ??= error;
        reject(this.wrap(error));
      });
    });
    this.failed.catch(() => {});
  }

  /** Creates the temporary file `.name.tmp-<pid>-<random>` in the target's directory. */
  static async create(target: string): Promise<AtomicFile> {
    const dir = path.dirname(target);
    const prefix = `.${path.basename(target)}.tmp-`;
    await removeStaleTemps(dir, prefix);
    const tempPath = path.join(dir, `${prefix}${process.pid}-${randomBytes(6).toString('hex')}`);
    // flush: the data reaches the disk before close, so the rename never publishes an empty file.
    const stream = createWriteStream(tempPath, { flags: 'wx', flush: true, mode: PRIVATE_FILE_MODE });
    const file = new AtomicFile(target, tempPath, stream);
    try {
      await Promise.race([once(stream, 'open'), file.failed]);
    } catch (error) {
      await removeQuietly(tempPath);
      throw error;
    }
    return file;
  }

  /** The stream's error, as a StorageError naming the target; undefined while all is well. */
  get failure(): StorageError | undefined {
    return this.error === undefined ? undefined : this.wrap(this.error);
  }

  /**
   * Waits for the stream to close, then renames the file into place. The writer ends the stream
   * (a pipe or exceljs does), so nothing still on its way is cut off.
   */
  async commit(): Promise<void> {
    if (this.settled) throw new Error(`results file ${this.target} was already committed or aborted`);
    this.settled = true;
    try {
      if (!this.stream.closed) await Promise.race([once(this.stream, 'close'), this.failed]);
      if (this.error !== undefined) throw this.wrap(this.error);
      await rename(this.tempPath, this.target);
    } catch (error) {
      await removeQuietly(this.tempPath);
      throw error instanceof StorageError ? error : this.wrap(error as Error);
    }
    await syncDirectory(path.dirname(this.target));
  }

  /** Stops writing and removes the temporary file; the target is left as it was. */
  async abort(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    if (!this.stream.closed) {
      const closed = once(this.stream, 'close').catch(() => {});
      this.stream.destroy();
      await closed;
    }
    await removeQuietly(this.tempPath);
  }

  // A file error is the environment's (disk full, read-only or missing directory), never a bug:
  // StorageError names the file and says the errno in words (exit 2 before sending, 6 after).
  private wrap(error: Error): StorageError {
    return resultsFileError(this.target, error);
  }
}

/** The results file at `target` could not be written: the path, what to do, the errno in words. */
export function resultsFileError(target: string, cause: unknown): StorageError {
  return new StorageError(`cannot write the results file ${target} (${adviceFor(errnoOf(cause))})`, {
    path: target,
    cause,
  });
}

/** What to do about a file that cannot be written, by its errno. */
function adviceFor(errno: string | undefined): string {
  switch (errno) {
    case 'ENOENT':
      return 'its folder does not exist: create it, or write elsewhere with --out PATH, then run again';
    case 'ENOTDIR':
      return 'a part of its path is a file, not a folder: write elsewhere with --out PATH, then run again';
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'its folder cannot be written: fix its permissions, or write elsewhere with --out PATH, then run again';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some space, or write elsewhere with --out PATH, then run again';
    default:
      return 'fix the folder, or write elsewhere with --out PATH, then run again';
  }
}

// A run killed mid-write (SIGKILL, power loss) leaves its temporary file; the next writer of the
// same target removes it once its process is gone, so none are left behind for long.
async function removeStaleTemps(dir: string, prefix: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return; // creating the temporary file reports a missing directory better
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !isRunning(pid)) {
      await removeQuietly(path.join(dir, name));
    }
  }
}

/**
 * Removes a temporary file if it is there. A path that cannot hold one (a folder that is a
 * file: ENOTDIR) has nothing to remove; the error that matters is the one being reported.
 */
async function removeQuietly(file: string): Promise<void> {
  await rm(file, { force: true }).catch(() => {});
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// After a rename the directory entry itself must reach the disk too; best effort, as some
// file systems refuse to fsync a directory.
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The rename is done; durability of the directory entry is all that is at stake.
  }
}
