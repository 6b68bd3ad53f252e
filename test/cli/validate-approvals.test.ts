/**
 * The JSON summary of `validate` names the approvals recorded so far for the sheet's digest, as
 * its report does, so a script can tell whether the sheet is ready for `run
 * --require-approvals`; an empty list when there are none or no register was read.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE } from '../approvals/ssh-keygen.js';
import { runCli, withTempDir } from '../helpers/cli.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

const keys = new KeyFolder();
afterAll(() => keys.cleanup());

const SERVICE = 'https://pay.example';

describe(`validate --json and the approvals${SSH_KEYGEN_NOTE}`, () => {
  it('lists none before anyone signed', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts-2026-11.csv');
      await copyFile(CLEAN_SAMPLE, sheet);
      const env = { PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'register.db')) };
      const result = await runCli(['validate', sheet, '--json', '--no-report', '--base-url', SERVICE], {
        env,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ command: 'validate', approvals: [] });
    });
  });

  it.skipIf(!HAS_SSH_KEYGEN)('names who signed the current digest, with or without the report', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts-2026-11.csv');
      await copyFile(CLEAN_SAMPLE, sheet);
      const env = { PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'register.db')) };
      const alice = keys.key('alice-validate', { type: 'ed25519' });
      const allowed = path.join(dir, 'allowed_signers');
      await writeFile(allowed, `alice@example.com ${alice.publicKey}\n`);
      const signed = await runCli(
        ['approve', sheet, '--key', alice.path, '--allowed-signers', allowed, '--base-url', SERVICE],
        { env },
      );
      expect(signed.code, signed.stderr).toBe(0);
      for (const report of [['--no-report'], []]) {
        const result = await runCli(['validate', sheet, '--json', ...report, '--base-url', SERVICE], { env });
        expect(result.code, result.stderr).toBe(0);
        const approvals = JSON.parse(result.stdout).approvals;
        expect(approvals).toEqual([
          { principal: 'alice@example.com', fingerprint: alice.fingerprint, recordedAt: expect.any(String) },
        ]);
        expect(Number.isNaN(Date.parse(approvals[0].recordedAt))).toBe(false);
      }
    });
  });
});
