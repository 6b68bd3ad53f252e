/**
 * `payouts webhooks verify` with a body or secret file it cannot read: exit 2, the file named and
 * the system error in words, as for every other file payouts reads.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';

describe('webhooks verify and its files', () => {
  it('says a missing body file in words (exit 2)', async () => {
    await withTempDir(async (dir) => {
      const secret = path.join(dir, 'secret');
      await writeFile(secret, 'whsec-files-test\n');
      const body = path.join(dir, 'missing.json');
      const result = await runCli(['webhooks', 'verify', body, '--signature', 'x', '--secret-file', secret], {
        env: {},
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `payouts: verify: cannot read the body file ${body}: no such file or directory (ENOENT)`,
      );
    });
  });

  it('says a secret file that is a folder in words (exit 2)', async () => {
    await withTempDir(async (dir) => {
      const body = path.join(dir, 'body.json');
      await writeFile(body, '{}');
      const result = await runCli(['webhooks', 'verify', body, '--signature', 'x', '--secret-file', dir], {
        env: {},
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `payouts: cannot read the webhook secret file ${dir}: it is a directory (EISDIR)`,
      );
    });
  });
});
