/**
 * The guards of `payouts run` refuse before anything is sent (README "Exit codes" 2, 3, 4):
 * control totals, the approval digest, a checkpoint of another sheet, a held lock, refused
 * credentials and plain http to a remote host.
 */
import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { paymentsOf, runAgainst, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

async function sampleSheet(dir: string, name = 'payouts.csv'): Promise<string> {
  const sheet = path.join(dir, name);
  await copyFile(CLEAN_SAMPLE, sheet);
  return sheet;
}

/** Nothing reached the service: no request at all, so no payment either. */
function expectNothingSent(sb: SandboxHandle): void {
  const ledger = sb.ledger();
  expect(ledger.requests.total).toBe(0);
  expect(ledger.transactions).toEqual([]);
  expect(ledger.beneficiaries).toEqual([]);
}

describe('payouts run guards', () => {
  it('refuses a sheet whose control totals do not match (exit 4), and runs one whose totals do', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet(await testDir());

    const count = await runAgainst(sb, sheet, ['--expect-count', '11']);
    expect(count.code, count.stderr).toBe(4);
    expect(count.stderr).toContain('--expect-count 11 but the sheet has 12 rows');
    const total = await runAgainst(sb, sheet, [
      '--expect-total',
      'USD=24905.75',
      '--expect-total',
      'MXN=19200.00',
    ]);
    expect(total.code, total.stderr).toBe(4);
    expect(total.stderr).toContain(
      "--expect-total USD=24,905.75 but the sheet's USD amounts add up to 24,905.74",
    );
    expectNothingSent(sb);

    const matching = await runAgainst(sb, sheet, [
      '--json',
      '--rate',
      '200',
      '--expect-count',
      '12',
      '--expect-total',
      'USD=24905.74',
      '--expect-total',
      'COP=3150000.00',
    ]);
    expect(matching.code, matching.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('refuses a guard given without its value or with a value that is not a number (exit 2), sending nothing', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet(await testDir());
    // A guard left without its value (a commented-out line in a job's arguments, an empty
    // variable) must not quietly run the batch unguarded.
    for (const flag of ['--expect-count', '--expect-total', '--max-amount', '--require-approvals']) {
      const bare = await runAgainst(sb, sheet, ['--rate', '200', flag]);
      expect(bare.code, `${flag}: ${bare.stderr}`).toBe(2);
      expect(bare.stderr).toContain(`${flag} needs a value after it`);
      const followed = await runAgainst(sb, sheet, [flag, '--rate', '200']);
      expect(followed.code, `${flag} --rate: ${followed.stderr}`).toBe(2);
    }
    for (const [value, shown] of [
      ['abc', 'abc'],
      [' ', 'nothing'],
      ['12.5', '12.5'],
      ['-1', '-1'],
      ['0x0c', '0x0c'],
      ['1e1', '1e1'],
    ] as const) {
      const refused = await runAgainst(sb, sheet, [`--expect-count=${value}`]);
      expect(refused.code, `${value}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain(
        `--expect-count must be a whole number of rows, such as --expect-count 120, got ${shown}`,
      );
    }
    expectNothingSent(sb);

    const spaced = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--expect-count', ' 12 ']);
    expect(spaced.code, spaced.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('refuses a wrong --approve digest (exit 4) and runs with the digest validate printed', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet(await testDir());

    const wrong = await runAgainst(sb, sheet, ['--approve', 'ab'.repeat(32)]);
    expect(wrong.code, wrong.stderr).toBe(4);
    expect(wrong.stderr).toContain('does not match this sheet');
    expectNothingSent(sb);

    const validated = await runCli(['validate', sheet, '--json']);
    expect(validated.code).toBe(0);
    const { digest } = JSON.parse(validated.stdout) as { digest: string };
    const approved = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--approve', digest]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(summaryOf(approved).digest).toBe(digest);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('refuses the per-sheet --checkpoint of earlier versions with a pointer to --register (exit 2)', async () => {
    const sb = await testSandbox();
    const sheet = await sampleSheet(await testDir());
    const refused = await runAgainst(sb, sheet, ['--checkpoint', `${sheet}.checkpoint.jsonl`]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('--checkpoint was replaced by the register');
    expect(refused.stderr).toContain('--register PATH');
    expectNothingSent(sb);
  });

  it('stops with exit 3 when the service refuses the credentials, having sent nothing but the token request', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sampleSheet(dir);
    const wrongPassword = 'not-the-sandbox-password';
    const result = await runAgainst(sb, sheet, [], { ...SANDBOX_ENV, PAYOUTS_PASSWORD: wrongPassword });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain('refused the credentials');
    expect(result.stderr).toContain('PAYOUTS_USERNAME and PAYOUTS_PASSWORD');
    expect(result.stderr).not.toContain(wrongPassword);
    const ledger = sb.ledger();
    const tokenRequests = ledger.requests.byRoute['POST /auth/realms/service/protocol/openid-connect/token'];
    expect(tokenRequests).toBeGreaterThanOrEqual(1);
    expect(ledger.requests.total).toBe(tokenRequests);
    expect(ledger.beneficiaries).toEqual([]);
    expect(ledger.transactions).toEqual([]);
  });

  it('refuses plain http to a host that is not loopback (exit 2) before touching anything', async () => {
    const dir = await testDir();
    const sheet = await sampleSheet(dir);
    for (const url of ['http://payments.example.com', 'http://10.1.2.3:8080']) {
      const result = await runCli(['run', sheet, '--base-url', url], { env: SANDBOX_ENV });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('uses plain http://, which is refused except to loopback addresses');
    }
    expect(await readdir(dir)).toEqual(['payouts.csv']);
  });
});
