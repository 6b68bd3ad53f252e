import { execFile } from 'node:child_process';
import { copyFile, readdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';
import { CLI_ENTRY } from '../helpers/payouts.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/results');
const run = promisify(execFile);

/** Runs the built CLI (npm run build first) and returns its exit code and both streams. */
async function payouts(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_ENTRY, ...args], { env: {} });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the results file of a large XLSX sheet', () => {
  // Issue 8: from ~500 rows on, every validate printed MaxListenersExceededWarning lines.
  it('is written without a single warning on stderr', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts.xlsx');
      await copyFile(path.join(FIXTURES, '2000-rows.xlsx'), sheet);
      const result = await payouts(['validate', sheet]);
      expect(result.code).toBe(0);
      expect(result.stderr).not.toMatch(/Warning|memory leak/);
      expect(result.stderr).toContain('2,000 rows');
    });
  });
});

describe('--out', () => {
  const samples = path.resolve(import.meta.dirname, '../../samples');

  // Issue 7: --out set to the sheet wrote the results over it; issue 8: --out x.csv for an
  // XLSX sheet wrote XLSX bytes into x.csv. Both are refused before anything is read or sent.
  it.each(['validate', 'run'])(
    '%s refuses the sheet itself, by a relative path or a link, with exit 2',
    async (command) => {
      await withTempDir(async (dir) => {
        const sheet = path.join(dir, 'payouts.csv');
        await copyFile(path.join(samples, 'payouts-clean.csv'), sheet);
        const before = await readFile(sheet);
        await symlink(sheet, path.join(dir, 'link.csv'));
        for (const out of ['payouts.csv', './payouts.csv', 'link.csv', 'Payouts.CSV']) {
          const result = await runCli([command, 'payouts.csv', '--out', out], { cwd: dir });
          expect(result.code, out).toBe(2);
          expect(result.stderr, out).toContain(
            `payouts: --out "${path.join(dir, out)}" is the sheet "${sheet}" itself: the results file is never written over the sheet`,
          );
        }
        expect(await readFile(sheet)).toEqual(before);
        expect((await readdir(dir)).sort()).toEqual(['link.csv', 'payouts.csv']);
      });
    },
  );

  it.each(['validate', 'run'])('%s refuses an --out without the extension of the sheet', async (command) => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts.xlsx');
      await copyFile(path.join(samples, 'payouts-clean.xlsx'), sheet);
      const result = await runCli([command, sheet, '--out', path.join(dir, 'x.csv')]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`payouts: --out "${path.join(dir, 'x.csv')}" must end in .xlsx`);
      expect(await readdir(dir)).toEqual(['payouts.xlsx']);
    });
  });
});
