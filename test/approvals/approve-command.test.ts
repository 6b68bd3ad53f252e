/**
 * `payouts approve` in-process, offline (docs/approval.md "Signing an approval"): the service URL
 * it is checked against as run checks it.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

/** A folder with the clean sample as payouts.csv, removed after the test. */
async function folder(): Promise<{ dir: string; sheet: string; register: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-approve-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return { dir, sheet, register: path.join(dir, 'register.db') };
}

describe('payouts approve --base-url', () => {
  it('refuses plain http:// to a host that is not loopback, as run does (exit 2)', async () => {
    const { sheet, register } = await folder();
    const remote = await runCli(
      ['approve', sheet, '--statement', '--base-url', 'http://example.com', '--register', register],
      { env: {} },
    );
    expect(remote.code).toBe(2);
    expect(remote.stdout).toBe('');
    expect(remote.stderr).toContain(
      '--base-url http://example.com uses plain http://, which is refused except to loopback addresses (127.0.0.1, ::1, localhost) - use https://',
    );
    const fromEnv = await runCli(['approve', sheet, '--statement', '--register', register], {
      env: { PAYOUTS_BASE_URL: 'http://pay.example:8080' },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('--base-url http://pay.example:8080 uses plain http://');
    const loopback = await runCli(
      ['approve', sheet, '--statement', '--base-url', 'http://127.0.0.1:8787', '--register', register],
      { env: {} },
    );
    expect(loopback.code, loopback.stderr).toBe(0);
    expect(loopback.stdout).toContain('\norigin: http://127.0.0.1:8787\n');
  });
});
