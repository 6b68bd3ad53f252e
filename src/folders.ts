/**
 * Folder creation that cannot hang. Node's recursive mkdir retries for ever where a parent
 * exists but refuses children with ENOENT (under /proc), at full CPU and deaf to signals;
 * here each missing level is created once, parent first, and the first refusal is the error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** The folders of `dir` that do not exist yet, outermost first. */
function missingLevels(dir: string, exists: (folder: string) => boolean): string[] {
  const missing: string[] = [];
  let at = path.resolve(dir);
  while (!exists(at)) {
    missing.unshift(at);
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  return missing;
}

/** Creates `dir` and its missing parents (`mode` for each new one). */
export function makeFolderSync(dir: string, mode = 0o777): void {
  for (const folder of missingLevels(dir, existsSync)) {
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
  const known = new Map<string, boolean>();
  let at = path.resolve(dir);
  // Walk up asynchronously, then create downwards.
  for (;;) {
    const exists = await stat(at).then(
      () => true,
      () => false,
    );
    known.set(at, exists);
    const up = path.dirname(at);
    if (exists || up === at) break;
    at = up;
  }
  for (const folder of missingLevels(dir, (f) => known.get(f) ?? true)) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
