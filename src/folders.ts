/**
 * Folder creation that cannot hang. Node's recursive mkdir retries for ever where a parent
 * exists but refuses children with ENOENT (under /proc), at full CPU and deaf to signals;
 * here each missing level is created once, parent first, and the first refusal is the error.
 */
import { existsSync, mkdirSync, statfsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Creates `dir` and its missing parents (`mode` for each new one). */
export function makeFolderSync(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !existsSync(at) && at !== path.dirname(at); at = path.dirname(at))
    missing.unshift(at);
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode });
    } catch (error) {
      // Made meanwhile by another process: as good as made here.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Creates `dir` and its missing parents, asynchronously. */
export async function makeFolder(dir: string, mode = 0o777): Promise<void> {
  const exists = (folder: string) =>
    stat(folder).then(
      () => true,
      () => false,
    );
  const missing: string[] = [];
  for (let at = path.resolve(dir); !(await exists(at)) && at !== path.dirname(at); at = path.dirname(at))
    missing.unshift(at);
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Bytes free for this user in the file system of `folder`, or undefined when it cannot be told. */
export function freeBytes(folder: string): number | undefined {
  try {
    const fs = statfsSync(folder);
    return fs.bavail * fs.bsize;
  } catch {
    return undefined;
  }
}
