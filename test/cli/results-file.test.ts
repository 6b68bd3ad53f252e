import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { withTempDir } from '../helpers/cli.js';
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
