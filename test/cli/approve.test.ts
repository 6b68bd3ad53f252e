/**
 * `payouts approve` with ssh-keygen on both sides (docs/approval.md "Signing without payouts"):
 * a plain `ssh-keygen -Y sign` over the printed statement is recorded, and a signature payouts
 * made verifies with `ssh-keygen -Y verify`. Approvals, and the approvals a run relied on,
 * survive `register copy` from SQLite to PostgreSQL and back.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE } from '../approvals/ssh-keygen.js';
import { runCli } from '../helpers/cli.js';
import { paymentsOf, runAgainst, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { testRegisterDatabase } from '../helpers/postgres.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

const keys = new KeyFolder();
afterAll(() => keys.cleanup());

async function sheetIn(dir: string): Promise<string> {
  const sheet = path.join(dir, 'payouts-2026-11.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return sheet;
}

describe('payouts approve, usage', () => {
  it('needs one thing to do and the service, before reading anything (exit 2)', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const none = await runCli([
      'approve',
      sheet,
      '--base-url',
      'https://pay.example',
      '--log-format',
      'text',
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('needs one of --statement');
    const both = await runCli(['approve', sheet, '--statement', '--key', 'k', '--log-format', 'text']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not --statement and --key');
    const service = await runCli(['approve', sheet, '--statement', '--log-format', 'text'], { env: {} });
    expect(service.code).toBe(2);
    expect(service.stderr).toContain('--base-url URL (or PAYOUTS_BASE_URL)');
    const gate = await runCli(
      ['run', sheet, '--base-url', 'https://pay.example', '--require-approvals', '2', '--log-format', 'text'],
      {
        env: SANDBOX_ENV,
      },
    );
    expect(gate.code).toBe(2);
    expect(gate.stderr).toContain('--allowed-signers FILE (or PAYOUTS_ALLOWED_SIGNERS)');
    const rehearsal = await runCli([
      'run',
      sheet,
      '--sandbox',
      '--require-approvals',
      '1',
      '--log-format',
      'text',
    ]);
    expect(rehearsal.code).toBe(2);
    expect(rehearsal.stderr).toContain('leave out --require-approvals to rehearse');
  });

  it('prints the same statement for the same sheet, register and day', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const register = initTestRegister(path.join(dir, 'register.db'));
    const args = [
      'approve',
      sheet,
      '--statement',
      '--base-url',
      'https://pay.example',
      '--register',
      register,
    ];
    const [first, second] = [await runCli(args), await runCli(args)];
    expect(first.code, first.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const validated = await runCli([
      'validate',
      sheet,
      '--json',
      '--register',
      register,
      '--base-url',
      'https://pay.example',
    ]);
    const { digest } = JSON.parse(validated.stdout) as { digest: string };
    expect(first.stdout).toMatch(
      new RegExp(
        `^payouts approval v1\\ndigest: ${digest}\\norigin: https://pay\\.example\\nsheet: payouts-2026-11\\.csv\\nvalid rows: 12\\n(total [A-Z]{3}: \\d+\\.\\d\\d\\n)+day: \\d{4}-\\d\\d-\\d\\d\\n$`,
      ),
    );
  });
});

describe.skipIf(!HAS_SSH_KEYGEN)(`payouts approve with ssh-keygen${SSH_KEYGEN_NOTE}`, () => {
  it('records a plain ssh-keygen signature of the printed statement, and signs one ssh-keygen verifies', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'register.db')) };
    const alice = keys.key('alice-interop', { type: 'ecdsa', bits: 256 });
    const bob = keys.key('bob-interop', { type: 'rsa', bits: 2048 });
    const signers = `alice@example.com ${alice.publicKey}\nbob@example.com ${bob.publicKey}\n`;
    const allowed = path.join(dir, 'allowed_signers');
    await writeFile(allowed, signers);

    // Without payouts: the statement printed, signed by ssh-keygen, the .sig recorded.
    const printed = await runCli(['approve', sheet, '--statement', '--base-url', sb.url], { env });
    expect(printed.code, printed.stderr).toBe(0);
    const statement = path.join(dir, 'statement.txt');
    await writeFile(statement, printed.stdout);
    await writeFile(`${statement}.sig`, keys.sign(alice, printed.stdout));
    const recorded = await runCli(
      [
        'approve',
        sheet,
        '--signature',
        `${statement}.sig`,
        '--allowed-signers',
        allowed,
        '--base-url',
        sb.url,
        '--json',
      ],
      { env },
    );
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(JSON.parse(recorded.stdout)).toMatchObject({
      principals: ['alice@example.com'],
      fingerprint: alice.fingerprint,
    });

    // With payouts: the signature it writes verifies with ssh-keygen -Y verify.
    const out = path.join(dir, 'bob.sig');
    const signed = await runCli(['approve', sheet, '--key', bob.path, '--out', out, '--base-url', sb.url], {
      env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    const verified = keys.verify(signers, 'bob@example.com', await readFile(out, 'utf8'), printed.stdout);
    expect(verified.output).toContain('Good "payouts-approval" signature for bob@example.com');
    expect(verified.status).toBe(0);

    const paid = await runAgainst(
      sb,
      sheet,
      ['--json', '--rate', '200', '--require-approvals', '2', '--allowed-signers', allowed],
      env,
    );
    expect(paid.code, paid.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('keeps approvals and the approvals of a run through register copy, SQLite to PostgreSQL and back', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const file = initTestRegister(path.join(dir, 'register.db'));
    const alice = keys.key('alice-copy', { type: 'ed25519' });
    const allowed = path.join(dir, 'allowed_signers');
    await writeFile(allowed, `alice@example.com ${alice.publicKey}\n`);
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: file };
    const approved = await runCli(['approve', sheet, '--key', alice.path, '--base-url', sb.url], { env });
    expect(approved.code, approved.stderr).toBe(0);
    const gate = ['--json', '--rate', '200', '--require-approvals', '1', '--allowed-signers', allowed];
    const paid = await runAgainst(sb, sheet, gate, env);
    expect(paid.code, paid.stderr).toBe(0);
    const { runId } = summaryOf(paid);

    const url = await testRegisterDatabase();
    const there = await runCli(['register', 'copy', '--from', file, '--to', url, '--json'], { env: {} });
    expect(there.code, there.stderr).toBe(0);
    expect(JSON.parse(there.stdout).added).toMatchObject({ approval: 1, runApproval: 1 });
    const back = path.join(dir, 'back.db');
    const home = await runCli(['register', 'copy', '--from', url, '--to', back, '--json'], { env: {} });
    expect(home.code, home.stderr).toBe(0);
    expect(JSON.parse(home.stdout).added).toMatchObject({ approval: 1, runApproval: 1 });

    for (const register of [url, back]) {
      const status = await runCli(['status', '--json', '--register', register], { env: {} });
      const runs = (JSON.parse(status.stdout) as { runs: { runId: string; approvals: unknown[] }[] }).runs;
      expect(runs.find((r) => r.runId === runId)?.approvals).toEqual([
        expect.objectContaining({ principal: 'alice@example.com', fingerprint: alice.fingerprint }),
      ]);
      const listed = await runCli(
        ['status', '--approvals', sheet, '--base-url', sb.url, '--register', register, '--json'],
        {
          env: {},
        },
      );
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).approvals).toEqual([
        expect.objectContaining({ fingerprint: alice.fingerprint }),
      ]);
    }
    // The copy's approval still opens the gate (nothing left to pay: every row skipped).
    const again = await runAgainst(sb, sheet, gate, { ...env, PAYOUTS_REGISTER: back });
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again).statuses).toMatchObject({ skipped: 12 });
  });
});
