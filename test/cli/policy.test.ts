/**
 * `payouts policy set` and `policy show` with real ssh-keygen keys (docs/approval.md "The
 * policy"): the first policy needs its own admins, a change the admins of the policy in force,
 * a signature made by plain `ssh-keygen -Y sign -n payouts-policy` over the printed statement
 * counts, and a policy that cannot be met is refused before anything is recorded.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MALFORMED_POLICIES } from '../approvals/malformed-policies.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from '../approvals/ssh-keygen.js';
import {
  type PolicyJson,
  TEAM_RULES,
  type Team as TeamKeys,
  teamKeys,
  teamPolicy,
} from '../approvals/team-policy.js';
import { type CliResult, runCli } from '../helpers/cli.js';
import { spawnCli, testDir } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';

const SERVICE = 'https://pay.example';

type Team = TeamKeys & { erin: TestKey };

/** The team's policy with its first two rules (no treasury rule), changed by `change`. */
/** The kinds of the entries a register holds, in its export order. */
async function entryKinds(register: string): Promise<string[]> {
  const { openRegister } = await import('../../src/register/open.js');
  const opened = await openRegister(register);
  try {
    const kinds: string[] = [];
    for await (const entry of opened.entries()) kinds.push(entry.type);
    return kinds;
  } finally {
    await opened.close();
  }
}

function policyOf(team: Team, change: Record<string, unknown> = {}): PolicyJson {
  return teamPolicy(team, { rules: TEAM_RULES.slice(0, 2), ...change });
}

describe.skipIf(!HAS_SSH_KEYGEN)(`payouts policy${SSH_KEYGEN_NOTE}`, () => {
  let keys: KeyFolder;
  let team: Team;
  beforeAll(() => {
    keys = new KeyFolder();
    team = { ...teamKeys(keys), erin: keys.key('erin', { type: 'ed25519' }) };
  });
  afterAll(() => keys?.cleanup());

  /** `payouts policy ...` by the compiled CLI against `register`, for the test service, JSON out. */
  const policy = async (register: string, ...args: string[]): Promise<CliResult> => {
    const exit = await spawnCli(
      ['policy', ...args, '--base-url', SERVICE, '--register', register, '--json', '--log-format', 'text'],
      {},
    ).exited;
    return { ...exit, code: exit.code ?? -1 };
  };
  const show = async (register: string) => JSON.parse((await policy(register, 'show')).stdout);

  it('puts the first policy in force once its own two admins signed, and a change once the admins in force did', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    expect(await show(register)).toEqual({
      command: 'policy show',
      service: SERVICE,
      version: 0,
      policy: null,
      signedBy: [],
      since: null,
      exitCode: 0,
    });
    const file = path.join(dir, 'policy.json');
    await writeFile(file, JSON.stringify(policyOf(team), null, 2));

    const one = await policy(register, 'set', file, '--key', team.alice.path);
    expect(one.code, one.stderr).toBe(4);
    expect(JSON.parse(one.stdout)).toMatchObject({
      inForce: false,
      version: 0,
      signedBy: ['alice@corp'],
      missing: 1,
      waitingOn: ['dave@corp'],
      exitCode: 4,
    });
    expect((await show(register)).version).toBe(0);

    // Dave signs elsewhere, with plain ssh-keygen, the text --statement prints.
    const printed = await policy(register, 'set', file, '--statement');
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(
      /^payouts policy v1\norigin: https:\/\/pay\.example\npolicy: [0-9a-f]{64}\nreplaces: 0\n$/,
    );
    const signature = keys.file(keys.sign(team.dave, printed.stdout, 'payouts-policy'), 'dave.sig');
    const two = await policy(register, 'set', file, '--signature', signature);
    expect(two.code, two.stderr).toBe(0);
    expect(JSON.parse(two.stdout)).toMatchObject({
      inForce: true,
      version: 1,
      signedBy: ['alice@corp', 'dave@corp'],
    });
    const first = await show(register);
    expect(first).toMatchObject({ version: 1, signedBy: ['alice@corp', 'dave@corp'], exitCode: 0 });
    expect(first.policy.admins).toEqual({ from: 'admins', require: 2 });

    // A change: erin joins and signs it, but only the admins of version 1 can put it in force.
    const changed = path.join(dir, 'policy-2.json');
    const withErin = policyOf(team, {
      signers: [...policyOf(team).signers, `erin@corp ${team.erin.publicKey}`],
      groups: { approvers: ['alice@corp', 'bob@corp'], treasury: ['carol@corp'], admins: ['erin@corp'] },
      admins: { require: 1, from: 'admins' },
    });
    await writeFile(changed, JSON.stringify(withErin));
    const outsider = await policy(register, 'set', changed, '--key', team.erin.path);
    expect(outsider.code).toBe(4);
    expect(outsider.stderr).toContain('not among the signers of the policy that decides');
    const byOne = await policy(register, 'set', changed, '--key', team.dave.path);
    expect(byOne.code).toBe(4);
    expect(JSON.parse(byOne.stdout)).toMatchObject({
      replaces: 1,
      signedBy: ['dave@corp'],
      waitingOn: ['alice@corp'],
    });
    expect((await show(register)).version).toBe(1);
    const byBoth = await policy(register, 'set', changed, '--key', team.alice.path);
    expect(byBoth.code, byBoth.stderr).toBe(0);
    expect(await show(register)).toMatchObject({ version: 2, signedBy: ['dave@corp', 'alice@corp'] });
  });

  it('signs with a key so that ssh-keygen -Y verify accepts the signature', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const file = path.join(dir, 'policy.json');
    await writeFile(file, JSON.stringify(policyOf(team, { admins: { require: 1, from: 'admins' } })));
    const statement = (await policy(register, 'set', file, '--statement')).stdout;
    expect((await policy(register, 'set', file, '--key', team.alice.path)).code).toBe(0);
    // The register kept the signature payouts made: ssh-keygen verifies it.
    const { openRegister } = await import('../../src/register/open.js');
    const opened = await openRegister(register);
    try {
      const version = (await opened.policy(SERVICE))!;
      const [held] = await opened.policySignatures({ service: SERVICE, digest: version.digest, replaces: 0 });
      expect(held!.statement).toBe(statement);
      const verified = keys.verify(
        `alice@corp ${team.alice.publicKey}\n`,
        'alice@corp',
        held!.signature,
        statement,
        'payouts-policy',
      );
      expect(verified.status, verified.output).toBe(0);
    } finally {
      await opened.close();
    }
  });

  it('refuses a policy naming an unknown group (exit 2) and records nothing', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const file = path.join(dir, 'policy.json');
    const bad = policyOf(team, { rules: [{ name: 'every batch', require: 1, from: 'approver' }] });
    await writeFile(file, JSON.stringify(bad));
    const set = await policy(register, 'set', file, '--key', team.alice.path);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain(`${file}: /rules/0/from: unknown group "approver"`);
    expect(JSON.parse(set.stdout)).toMatchObject({ exitCode: 2 });
    expect(await entryKinds(register)).toEqual([]);
  });

  it('refuses every malformed policy (exit 2) naming the file and the place, and records nothing', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const good = policyOf(team, {
      rules: [
        { name: 'every batch', require: 1, from: 'approvers' },
        { name: 'large batches', when: { sendTotalOver: { USD: '1000.00' } }, require: 2, from: 'approvers' },
        {
          name: 'new bank details',
          when: { warnings: ['changedBankDetails'] },
          require: 1,
          from: 'treasury',
        },
      ],
    });
    const refusedWrongly: string[] = [];
    for (const [what, change, place, expected] of MALFORMED_POLICIES) {
      const file = path.join(dir, 'policy.json');
      const changed = change(structuredClone(good));
      await writeFile(file, typeof changed === 'string' ? changed : JSON.stringify(changed));
      const set = await policy(register, 'set', file, '--key', team.alice.path);
      const said = set.stderr.includes(`${file}: ${place}: `) && expected.test(set.stderr);
      if (set.code !== 2 || !said) refusedWrongly.push(`${what}: exit ${set.code}, ${set.stderr.trim()}`);
    }
    expect(refusedWrongly).toEqual([]);
    expect(await entryKinds(register)).toEqual([]);
  });

  it('refuses a register that does not exist, and a missing service (exit 2)', async () => {
    const dir = await testDir();
    const missing = await policy(path.join(dir, 'nowhere.db'), 'show');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nowhere.db');
    const noService = await runCli(['policy', 'show', '--register', path.join(dir, 'x.db')], { env: {} });
    expect(noService.code).toBe(2);
    expect(noService.stderr).toContain('--base-url URL (or PAYOUTS_BASE_URL)');
  });
});
