/**
 * A --log-file that opens but cannot be written (a full disk: /dev/full) is not a silent
 * success: `validate` and `reconcile` end with exit 2 (nothing was sent) and say which file, on
 * stderr and in the --json summary, as `run` does with its exit 6; so does `register copy`.
 */
import { existsSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegister } from '../../src/register/open.js';
import { runCli, withTempDir } from '../helpers/cli.js';
import { SANDBOX_ENV, testSandbox } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';

const FULL = '/dev/full';
const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

describe.skipIf(!existsSync(FULL))('a --log-file on a full disk', () => {
  it('ends validate with exit 2, the file named', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'sheet.csv');
      await copyFile(SAMPLE, sheet);
      const result = await runCli(
        ['validate', sheet, '--no-report', '--json', '--log-file', FULL, '--log-level', 'debug'],
        { env: {} },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`payouts: cannot write the log file ${FULL}`);
      expect(result.stderr).toContain('no space left on the device');
      expect(JSON.parse(result.stdout)).toMatchObject({
        command: 'validate',
        exitCode: 2,
        error: { code: 'STORAGE' },
      });
    });
  });

  it('ends reconcile with exit 2, the file named', async () => {
    const sb = await testSandbox();
    await withTempDir(async (dir) => {
      const result = await runCli(['reconcile', '--json', '--log-file', FULL, '--base-url', sb.url], {
        env: { ...SANDBOX_ENV, PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'register.db')) },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`payouts: cannot write the log file ${FULL}`);
      expect(JSON.parse(result.stdout)).toMatchObject({ command: 'reconcile', exitCode: 2 });
    });
  });

  it('ends register copy with exit 2, the file named', async () => {
    await withTempDir(async (dir) => {
      const from = path.join(dir, 'from.db');
      await (await openRegister(from, { create: true })).close();
      const result = await runCli(
        ['register', 'copy', '--from', from, '--to', path.join(dir, 'to.db'), '--log-file', FULL],
        { env: {} },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`payouts: cannot write the log file ${FULL}`);
    });
  });
});
