/**
 * The register's approval policy enforced by `run` (docs/approval.md "The policy"), end to end
 * with real ssh-keygen keys and the sandbox's ledger: with a policy in force no flag is needed
 * and none lowers it; each applying rule needs its own group; a withdrawn approval counts no more.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from '../approvals/ssh-keygen.js';
import { type Team, teamKeys, teamPolicy } from '../approvals/team-policy.js';
import type { CliResult } from '../helpers/cli.js';
import { paymentsOf, SANDBOX_ENV, spawnCli, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { sampleRows, writeSheet } from '../helpers/sheets.js';

/** The compiled CLI against the sandbox, as a CronJob and an approver's terminal run it. */
async function compiled(
  sb: { url: string },
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<CliResult> {
  const exit = await spawnCli([...args, '--base-url', sb.url], env).exited;
  return { ...exit, code: exit.code ?? -1 };
}

const readFileText = (file: string) => readFile(file, 'utf8');

/** Ana's sample row (ACH, USD) under another reference and amount, to her account or another. */
function anaRow(reference: string, amount: string, accountNumber = '000123456789') {
  return { ...sampleRows()[1]!, reference, amount, accountNumber };
}

describe.skipIf(!HAS_SSH_KEYGEN)(`run under the register's approval policy${SSH_KEYGEN_NOTE}`, () => {
  let keys: KeyFolder;
  let team: Team;
  beforeAll(() => {
    keys = new KeyFolder();
    team = teamKeys(keys);
  });
  afterAll(() => keys?.cleanup());

  it('pays only what the rules allow: one approver small, two large, treasury for changed bank details', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register };
    const policyFile = path.join(dir, 'policy.json');
    await writeFile(policyFile, JSON.stringify(teamPolicy(team)));

    const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
      compiled(sb, [...args, '--log-format', 'text'], { ...env, ...extra });
    for (const admin of [team.alice, team.dave])
      await cli(['policy', 'set', policyFile, '--key', admin.path]);
    expect(JSON.parse((await cli(['policy', 'show', '--json'])).stdout).version).toBe(1);
    const approve = (sheet: string, who: TestKey, ...more: string[]) =>
      cli(['approve', sheet, '--key', who.path, ...more]);
    const run = (sheet: string, extra: NodeJS.ProcessEnv = {}, ...args: string[]) =>
      cli(['run', sheet, '--json', ...args], extra);

    // A small batch: unsigned, nothing is sent, with no flag at all; one approver pays it.
    const small = path.join(dir, 'small.csv');
    await writeSheet(small, [anaRow('SMALL-1', '125.50')]);
    // The compiled CLI, as a CronJob runs it.
    const unsigned = await spawnCli(['run', small, '--base-url', sb.url, '--log-format', 'text'], env).exited;
    expect(unsigned.code, unsigned.stderr).toBe(4);
    expect(unsigned.stderr).toContain('rule "every batch"');
    expect(paymentsOf(sb)).toHaveLength(0);
    expect((await approve(small, team.alice)).code).toBe(0);
    const paid = await spawnCli(['run', small, '--base-url', sb.url, '--log-format', 'text'], env).exited;
    expect(paid.code, paid.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(1);

    // Above USD 1,000 to send: one approver is not enough, even with PAYOUTS_REQUIRE_APPROVALS=1.
    const large = path.join(dir, 'large.csv');
    await writeSheet(large, [anaRow('LARGE-1', '900.00'), anaRow('LARGE-2', '300.00')]);
    expect((await approve(large, team.alice)).code).toBe(0);
    const one = await run(large, { PAYOUTS_REQUIRE_APPROVALS: '1' });
    expect(one.code, one.stderr).toBe(4);
    expect(one.stderr).toContain('rule "large batches" (to send over USD 1000.00) needs 2 of approvers');
    expect(one.stderr).toContain('1 more needed from approvers (waiting on bob@corp)');
    expect(paymentsOf(sb)).toHaveLength(1);
    // --allowed-signers beside a policy is a mistake said before anything (exit 2), on run and approve.
    const signersFile = keys.file(`alice@corp ${team.alice.publicKey}\n`);
    const named = await run(large, {}, '--require-approvals', '1', '--allowed-signers', signersFile);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('the register holds an approval policy');
    expect(
      (await run(large, { PAYOUTS_REQUIRE_APPROVALS: '1', PAYOUTS_ALLOWED_SIGNERS: signersFile })).code,
    ).toBe(2);
    const approveNamed = await approve(large, team.bob, '--allowed-signers', signersFile);
    expect(approveNamed.code).toBe(2);
    expect(paymentsOf(sb)).toHaveLength(1);
    expect((await approve(large, team.bob)).code).toBe(0);
    const two = await run(large);
    expect(two.code, two.stderr).toBe(0);
    expect(summaryOf(two).statuses).toMatchObject({ submitted: 2 });
    expect((summaryOf(two) as unknown as { policy: unknown }).policy).toMatchObject({
      version: 1,
      satisfied: true,
      rules: [
        { name: 'every batch', applies: true, missing: 0 },
        { name: 'large batches', applies: true, signed: ['alice@corp', 'bob@corp'], missing: 0 },
        { name: 'new bank details', applies: false, missing: 0 },
      ],
    });
    expect(paymentsOf(sb)).toHaveLength(3);

    // Ana's account changed: the approvers alone are not enough; treasury too, then it pays.
    const changed = path.join(dir, 'changed.csv');
    await writeSheet(changed, [anaRow('CHANGED-1', '60.00', '000123456780')]);
    expect((await approve(changed, team.alice)).code).toBe(0);
    const approversOnly = await run(changed);
    expect(approversOnly.code, approversOnly.stderr).toBe(4);
    expect(approversOnly.stderr).toContain('rule "new bank details"');
    expect(paymentsOf(sb)).toHaveLength(3);
    expect((await approve(changed, team.carol)).code).toBe(0);
    const withTreasury = await run(changed);
    expect(withTreasury.code, withTreasury.stderr).toBe(0);
    expect(paymentsOf(sb)).toHaveLength(4);

    // An approval withdrawn counts for no rule.
    const withdrawn = path.join(dir, 'withdrawn.csv');
    await writeSheet(withdrawn, [anaRow('WITHDRAWN-1', '20.00')]);
    expect((await approve(withdrawn, team.bob)).code).toBe(0);
    expect((await approve(withdrawn, team.bob, '--revoke')).code).toBe(0);
    const afterRevoke = await run(withdrawn);
    expect(afterRevoke.code, afterRevoke.stderr).toBe(4);
    expect(afterRevoke.stderr).toContain('rule "every batch"');
    expect(paymentsOf(sb)).toHaveLength(4);
  });

  it('counts an approval no more once it is withdrawn (approve --revoke) under an allowed-signers file', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register };
    const cli = (args: string[]) => compiled(sb, [...args, '--log-format', 'text'], env);
    const sheet = path.join(dir, 'once.csv');
    await writeSheet(sheet, [anaRow('ONCE-1', '40.00')]);

    // Without a policy: the allowed-signers file's gate.
    const signers = keys.file(`alice@corp ${team.alice.publicKey}\nbob@corp ${team.bob.publicKey}\n`);
    const gate = ['--require-approvals', '1', '--allowed-signers', signers, '--log-format', 'text'];
    expect((await cli(['approve', sheet, '--key', team.alice.path])).code).toBe(0);
    const revoked = await cli(['approve', sheet, '--revoke', '--key', team.alice.path, '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      command: 'approve',
      revoked: true,
      recorded: true,
      exitCode: 0,
    });
    const refused = await compiled(sb, ['run', sheet, ...gate], env);
    expect(refused.code, refused.stderr).toBe(4);
    expect(paymentsOf(sb)).toHaveLength(0);

    // Bob withdraws his with plain ssh-keygen over the text --revoke --statement prints.
    expect((await cli(['approve', sheet, '--key', team.bob.path])).code).toBe(0);
    const text = await cli(['approve', sheet, '--revoke', '--statement']);
    expect(text.stdout).toMatch(/^payouts approval revoked v1\ndigest: [0-9a-f]{64}\n/);
    const file = keys.file(text.stdout, 'withdrawal.txt');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${file}.sig`, keys.sign(team.bob, text.stdout, 'payouts-approval'));
    expect((await cli(['approve', sheet, '--revoke', '--signature', `${file}.sig`])).code).toBe(0);
    expect((await compiled(sb, ['run', sheet, ...gate], env)).code).toBe(4);
    // An approval statement is no withdrawal.
    const approvalText = keys.file((await cli(['approve', sheet, '--statement'])).stdout, 'approval.txt');
    writeFileSync(
      `${approvalText}.sig`,
      keys.sign(team.bob, await readFileText(approvalText), 'payouts-approval'),
    );
    const notWithdrawal = await cli(['approve', sheet, '--revoke', '--signature', `${approvalText}.sig`]);
    expect(notWithdrawal.code).toBe(4);
    expect(notWithdrawal.stderr).toContain('is not a withdrawal');
    expect(paymentsOf(sb)).toHaveLength(0);
  });

  it('refuses PAYOUTS_REQUIRE_APPROVALS on a register without a policy and without signers (exit 2)', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const sheet = path.join(dir, 'small.csv');
    await writeSheet(sheet, [anaRow('ALONE-1', '10.00')]);
    const result = await compiled(sb, ['run', sheet, '--log-format', 'text'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
      PAYOUTS_REQUIRE_APPROVALS: '1',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--allowed-signers FILE (or PAYOUTS_ALLOWED_SIGNERS), or an approval policy',
    );
    expect(paymentsOf(sb)).toHaveLength(0);
  });
});
