import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFolder, makeFolderSync } from '../../src/folders.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-folders-'));
  dirs.push(dir);
  return dir;
}

describe.each([
  ['makeFolderSync', async (dir: string, mode?: number) => makeFolderSync(dir, mode)],
  ['makeFolder', makeFolder],
] as const)('%s', (_name, make) => {
  it('creates the missing levels with the mode, and is content with what exists', async () => {
    const root = await scratch();
    const deep = path.join(root, 'a', 'b', 'c');
    await make(deep, 0o700);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
    await make(deep, 0o700);
    await make(root);
    expect(existsSync(deep)).toBe(true);
  });

  it('a file on the way is ENOTDIR', async () => {
    const root = await scratch();
    await writeFile(path.join(root, 'file'), 'x');
    await expect(make(path.join(root, 'file', 'sub', 'deeper'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  // Node's recursive mkdir spins for ever here (/proc answers ENOENT to mkdir): one try each.
  it.skipIf(process.platform !== 'linux')('a parent that refuses children fails at once', async () => {
    const started = Date.now();
    await expect(make('/proc/payouts-test/register')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(make('/proc/self/payouts-test')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
