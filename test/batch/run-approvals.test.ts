/**
 * `run --require-approvals N --allowed-signers FILE` against the sandbox, with real keys made by
 * ssh-keygen (docs/approval.md "What counts"): enough distinct approvers pay; too few, or
 * signatures that do not count, refuse the whole batch before any request (exit 4), saying why.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openRegister } from '../../src/register/open.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import {
  HAS_SSH_KEYGEN,
  KeyFolder,
  type KeySpec,
  SSH_KEYGEN_NOTE,
  type TestKey,
} from '../approvals/ssh-keygen.js';
import { type CliResult, runCli } from '../helpers/cli.js';
import { paymentsOf, runAgainst, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { initTestRegister, testRegisterPath } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

const keys = new KeyFolder();
afterAll(() => keys.cleanup());

/** Nothing reached the service: no request at all, so no payment either. */
function expectNothingSent(sb: SandboxHandle): void {
  const ledger = sb.ledger();
  expect(ledger.requests.total).toBe(0);
  expect(ledger.transactions).toEqual([]);
}

/** A sandbox, a copy of the clean sample, the test's register and an allowed-signers file. */
async function setup(signers: readonly (readonly [string, TestKey, string?])[]) {
  const sb = await testSandbox();
  const dir = await testDir();
  const sheet = path.join(dir, 'payouts-2026-11.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  const allowed = path.join(dir, 'allowed_signers');
  await writeFile(
    allowed,
    signers.map(([who, key, options]) => `${who}${options ? ` ${options}` : ''} ${key.publicKey}\n`).join(''),
  );
  const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: testRegisterPath() };
  const approve = (args: string[], baseUrl = sb.url): Promise<CliResult> =>
    runCli(['approve', sheet, '--base-url', baseUrl, ...args], { env });
  const run = (required: number, args: string[] = []): Promise<CliResult> =>
    runAgainst(
      sb,
      sheet,
      [
        '--json',
        '--rate',
        '200',
        '--require-approvals',
        String(required),
        '--allowed-signers',
        allowed,
        ...args,
      ],
      env,
    );
  return { sb, dir, sheet, allowed, env, approve, run };
}

/** The messages of a command's JSON log records on stderr (its logs without a terminal). */
function said(result: CliResult): string {
  return result.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg))
    .join('\n');
}

/** Raises the first USD amount of the sheet by one: the batch digest changes. */
async function editAnAmount(sheet: string): Promise<void> {
  const text = await readFile(sheet, 'utf8');
  const edited = text.replace(
    /,(\d+\.\d\d),USD,/,
    (_all, amount: string) => `,${(Number(amount) + 1).toFixed(2)},USD,`,
  );
  expect(edited).not.toBe(text);
  await writeFile(sheet, edited);
}

const KEY_TYPES: [string, KeySpec][] = [
  ['ed25519', { type: 'ed25519' }],
  ['ECDSA P-256', { type: 'ecdsa', bits: 256 }],
  ['RSA', { type: 'rsa', bits: 2048 }],
];

describe.skipIf(!HAS_SSH_KEYGEN)(`run --require-approvals${SSH_KEYGEN_NOTE}`, () => {
  it.each(KEY_TYPES)(
    'pays a sheet one allowed signer approved with an %s key, and names the approval',
    async (name, spec) => {
      const alice = keys.key(`alice-${name.replace(/\W/g, '')}`, spec);
      const t = await setup([['alice@example.com', alice]]);
      const approved = await t.approve(['--key', alice.path, '--allowed-signers', t.allowed, '--json']);
      expect(approved.code, approved.stderr).toBe(0);
      const recorded = JSON.parse(approved.stdout) as Record<string, unknown>;
      expect(recorded).toMatchObject({
        fingerprint: alice.fingerprint,
        principals: ['alice@example.com'],
        recorded: true,
      });
      expect(approved.stdout + approved.stderr).not.toContain('BEGIN SSH SIGNATURE');

      // The approver's report of validate shows who signed the digest so far.
      const report = path.join(t.dir, 'report.html');
      const validated = await runCli(['validate', t.sheet, '--base-url', t.sb.url, '--report', report], {
        env: t.env,
      });
      expect(validated.code, validated.stderr).toBe(0);
      const html = await readFile(report, 'utf8');
      expect(html).toContain('<h2>Approved by</h2>');
      expect(html).toContain(`<td>alice@example.com</td><td class="digest">${alice.fingerprint}</td>`);

      const paid = await t.run(1);
      expect(paid.code, paid.stderr).toBe(0);
      expect(paymentsOf(t.sb)).toHaveLength(12);
      const summary = summaryOf(paid) as unknown as { approvals: unknown[]; runId: string };
      expect(summary.approvals).toEqual([
        {
          principal: 'alice@example.com',
          fingerprint: alice.fingerprint,
          recordedAt: recorded['recordedAt'],
        },
      ]);
      expect(paid.stderr).not.toContain('BEGIN SSH SIGNATURE');

      const status = await runCli(['status', '--json'], { env: t.env });
      const runs = (JSON.parse(status.stdout) as { runs: { runId: string; approvals: unknown[] }[] }).runs;
      expect(runs.find((r) => r.runId === summary.runId)?.approvals).toEqual([
        expect.objectContaining({ principal: 'alice@example.com', fingerprint: alice.fingerprint }),
      ]);
      const listed = await runCli(['status', '--approvals', t.sheet, '--base-url', t.sb.url, '--json'], {
        env: t.env,
      });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).approvals).toEqual([
        expect.objectContaining({ principals: ['alice@example.com'], fingerprint: alice.fingerprint }),
      ]);
    },
  );

  it('refuses a sheet nobody approved (exit 4): nothing sent, who is missing named', async () => {
    const alice = keys.key('alice-none', { type: 'ed25519' });
    const bob = keys.key('bob-none', { type: 'ed25519' });
    const t = await setup([
      ['alice@example.com', alice],
      ['bob@example.com', bob],
    ]);
    const report = path.join(t.dir, 'report.html');
    const validated = await runCli(['validate', t.sheet, '--base-url', t.sb.url, '--report', report], {
      env: t.env,
    });
    expect(validated.code, validated.stderr).toBe(0);
    expect(await readFile(report, 'utf8')).toContain('Not yet approved');

    const refused = await t.run(1);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain('--require-approvals 1: no signed approvals');
    expect(refused.stderr).toContain('missing: alice@example.com, bob@example.com');
    expect(refused.stderr).toContain('Nothing was sent');
    expectNothingSent(t.sb);

    // The environment a CronJob sets does the same.
    const fromEnv = await runAgainst(t.sb, t.sheet, ['--json'], {
      ...t.env,
      PAYOUTS_REQUIRE_APPROVALS: '1',
      PAYOUTS_ALLOWED_SIGNERS: t.allowed,
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(4);
    expectNothingSent(t.sb);
  });

  it('does not count a key the allowed-signers file lacks, nor one past its valid-before (exit 4, reason named)', async () => {
    const alice = keys.key('alice-expired', { type: 'ed25519' });
    const mallory = keys.key('mallory', { type: 'ed25519' });
    // Bob could approve, so the gate can pass (a file of expired keys alone is exit 2).
    const bob = keys.key('bob-unsigned', { type: 'ed25519' });
    const t = await setup([
      ['alice@example.com', alice, 'valid-before="20200101Z"'],
      ['bob@example.com', bob],
    ]);
    // Recorded without --allowed-signers: the register keeps it, the run judges it.
    for (const key of [alice, mallory]) {
      const recorded = await t.approve(['--key', key.path]);
      expect(recorded.code, recorded.stderr).toBe(0);
    }
    const refused = await t.run(1);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain(`not counted: the key ${mallory.fingerprint} that signed is not in`);
    expect(refused.stderr).toMatch(
      new RegExp(`not counted: the key ${alice.fingerprint.replace(/[+/]/g, '.')}: .*(expired|valid-before)`),
    );
    expectNothingSent(t.sb);

    // Said when recording with the file, too: nothing recorded then.
    const told = await t.approve(['--key', mallory.path, '--allowed-signers', t.allowed]);
    expect(told.code).toBe(4);
    expect(told.stderr).toContain('is not in');
  });

  it("does not count a signature for another namespace, nor another service's statement (exit 4, reason named)", async () => {
    const alice = keys.key('alice-elsewhere', { type: 'ed25519' });
    const t = await setup([['alice@example.com', alice]]);
    // Another service's statement, signed and recorded as approve would for that service.
    const elsewhere = await t.approve(['--key', alice.path], 'https://payments.elsewhere.example');
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    // A signature of this sheet's statement for another purpose: approve refuses to record it...
    const printed = await t.approve(['--statement']);
    expect(printed.code, printed.stderr).toBe(0);
    const statement = path.join(t.dir, 'statement.txt');
    await writeFile(statement, printed.stdout);
    const otherNamespace = keys.sign(alice, printed.stdout, 'git');
    await writeFile(`${statement}.sig`, otherNamespace);
    const recorded = await t.approve(['--signature', `${statement}.sig`]);
    expect(recorded.code).toBe(4);
    expect(said(recorded)).toContain('made for "git", not "payouts-approval"');
    // ...and a run does not count one written into the register by other means.
    const register = await openRegister(t.env['PAYOUTS_REGISTER']!);
    const [held] = await register.approvals({ digest: /digest: (\w+)/.exec(printed.stdout)![1]! });
    await register.recordApproval({
      ...held!,
      statement: printed.stdout,
      statementDigest: 'planted',
      signature: otherNamespace,
      origin: new URL(t.sb.url).origin,
    });
    await register.close();

    const refused = await t.run(1);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain('approved this for https://payments.elsewhere.example');
    expect(said(refused)).toContain('not counted: this signature was made for "git"');
    expectNothingSent(t.sb);
  });

  it('refuses a sheet edited after it was signed (exit 4, "changed since it was signed")', async () => {
    const alice = keys.key('alice-edited', { type: 'ecdsa', bits: 256 });
    const t = await setup([['alice@example.com', alice]]);
    expect((await t.approve(['--key', alice.path])).code).toBe(0);
    await editAnAmount(t.sheet);
    const refused = await t.run(1);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain('changed since it was signed by alice@example.com');
    expectNothingSent(t.sb);
  });

  it('counts principals, not signatures: one approver twice or with two keys is one, two approvers pay', async () => {
    const alice = keys.key('alice-two', { type: 'ed25519' });
    const alice2 = keys.key('alice-second', { type: 'rsa', bits: 2048 });
    const bob = keys.key('bob-two', { type: 'ecdsa', bits: 256 });
    const t = await setup([
      ['alice@example.com', alice],
      ['alice@example.com', alice2],
      ['bob@example.com', bob],
    ]);
    expect((await t.approve(['--key', alice.path])).code).toBe(0);
    const again = await t.approve(['--key', alice.path, '--allowed-signers', t.allowed]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('Already recorded');
    expect((await t.approve(['--key', alice2.path])).code).toBe(0);
    const one = await t.run(2);
    expect(one.code, one.stderr).toBe(4);
    expect(one.stderr).toContain('--require-approvals 2: 1 signed approval');
    expect(one.stderr).toContain('missing: bob@example.com');
    expectNothingSent(t.sb);

    expect((await t.approve(['--key', bob.path])).code).toBe(0);
    const two = await t.run(2);
    expect(two.code, two.stderr).toBe(0);
    expect(paymentsOf(t.sb)).toHaveLength(12);
    const approvals = (summaryOf(two) as unknown as { approvals: { principal: string }[] }).approvals;
    expect(approvals.map((a) => a.principal)).toEqual(['alice@example.com', 'bob@example.com']);
  });

  it('names the approval that counted when the same key also signed a statement too old to count', async () => {
    const alice = keys.key('alice-old-and-new', { type: 'ed25519' });
    const t = await setup([['alice@example.com', alice]]);
    // Signed elsewhere with ssh-keygen over a statement dated 42 days ago, recorded first...
    const printed = await t.approve(['--statement']);
    expect(printed.code, printed.stderr).toBe(0);
    const day = new Date(Date.now() - 42 * 86_400_000).toISOString().slice(0, 10);
    const old = printed.stdout.replace(/\nday: \S+\n$/, `\nday: ${day}\n`);
    expect(old).not.toBe(printed.stdout);
    const statement = path.join(t.dir, 'statement.txt');
    await writeFile(statement, old);
    await writeFile(`${statement}.sig`, keys.sign(alice, old));
    const first = await t.approve(['--signature', `${statement}.sig`, '--json']);
    expect(first.code, first.stderr).toBe(0);
    // ...then signed again today with payouts: the one that counts.
    const today = await t.approve(['--key', alice.path, '--json']);
    expect(today.code, today.stderr).toBe(0);
    const counted = JSON.parse(today.stdout) as { recordedAt: string; statementDigest: string };
    expect(counted.statementDigest).not.toBe(
      (JSON.parse(first.stdout) as { statementDigest: string }).statementDigest,
    );

    const paid = await t.run(1);
    expect(paid.code, paid.stderr).toBe(0);
    const summary = summaryOf(paid) as unknown as { approvals: unknown[]; runId: string };
    expect(summary.approvals).toEqual([
      { principal: 'alice@example.com', fingerprint: alice.fingerprint, recordedAt: counted.recordedAt },
    ]);
    const register = await openRegister(t.env['PAYOUTS_REGISTER']!);
    try {
      const [scope] = await register.scopes();
      const store = await register.scopeStore(scope!);
      expect(await store.runApprovals([summary.runId])).toEqual(
        new Map([
          [
            summary.runId,
            [
              {
                principal: 'alice@example.com',
                fingerprint: alice.fingerprint,
                statementDigest: counted.statementDigest,
                recordedAt: counted.recordedAt,
              },
            ],
          ],
        ]),
      );
    } finally {
      await register.close();
    }
  });

  it('approves and counts under a URL declared the same service as another: the statement names the scope it resolves to', async () => {
    const alice = keys.key('alice-alias', { type: 'ed25519' });
    const t = await setup([['alice@example.com', alice]]);
    // November paid under 127.0.0.1: the register's scope, with its payees' history.
    const november = await runAgainst(t.sb, t.sheet, ['--json', '--rate', '200'], t.env);
    expect(november.code, november.stderr).toBe(0);
    expect(paymentsOf(t.sb)).toHaveLength(12);
    // The same service reached as localhost, declared so by the operator.
    const localhost = { url: t.sb.url.replace('127.0.0.1', 'localhost') };
    const declared = await runAgainst(localhost, t.sheet, ['--json', '--same-service-as', t.sb.url], t.env);
    expect(declared.code, declared.stderr).toBe(0);
    expect(summaryOf(declared).statuses).toMatchObject({ skipped: 12 });

    // December: the same payees, new references. Its statement under the alias is the
    // statement of the scope the alias resolves to, with the payees' history (none is new).
    const december = path.join(t.dir, 'payouts-2026-12.csv');
    await writeFile(december, (await readFile(t.sheet, 'utf8')).replaceAll('PAY-2026-11-', 'PAY-2026-12-'));
    const approve = (baseUrl: string, args: string[], register = t.env['PAYOUTS_REGISTER']!) =>
      runCli(['approve', december, '--base-url', baseUrl, '--register', register, ...args], { env: t.env });
    const underAlias = await approve(localhost.url, ['--statement']);
    expect(underAlias.code, underAlias.stderr).toBe(0);
    const underOrigin = await approve(t.sb.url, ['--statement']);
    expect(underAlias.stdout).toBe(underOrigin.stdout);
    expect(underAlias.stdout).toContain(`\norigin: ${t.sb.url}\n`);
    const withoutHistory = await approve(
      localhost.url,
      ['--statement'],
      initTestRegister(path.join(t.dir, 'empty.db')),
    );
    expect(withoutHistory.code, withoutHistory.stderr).toBe(0);
    const digestOf = (text: string) => /^digest: (\w+)$/m.exec(text)![1];
    expect(digestOf(underAlias.stdout)).not.toBe(digestOf(withoutHistory.stdout));
    // validate under the alias prints the same digest, as run computes it.
    const validated = await runCli(['validate', december, '--base-url', localhost.url, '--json'], {
      env: t.env,
    });
    expect(validated.code, validated.stderr).toBe(0);
    expect(JSON.parse(validated.stdout).digest).toBe(digestOf(underAlias.stdout));

    // Signed under the alias and counted by a run under the alias.
    const approved = await approve(localhost.url, ['--key', alice.path, '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      origin: t.sb.url,
      digest: digestOf(underAlias.stdout),
    });
    const paid = await runAgainst(
      localhost,
      december,
      ['--json', '--rate', '200', '--require-approvals', '1', '--allowed-signers', t.allowed],
      t.env,
    );
    expect(paid.code, paid.stderr).toBe(0);
    expect(summaryOf(paid)).toMatchObject({
      digest: digestOf(underAlias.stdout),
      statuses: { submitted: 12 },
    });
    expect((summaryOf(paid) as unknown as { approvals: unknown[] }).approvals).toEqual([
      expect.objectContaining({ principal: 'alice@example.com', fingerprint: alice.fingerprint }),
    ]);
    expect(paymentsOf(t.sb)).toHaveLength(24);
  });

  it('refuses a signature over an earlier statement of the sheet when recording it (exit 4)', async () => {
    const alice = keys.key('alice-earlier', { type: 'ed25519' });
    const t = await setup([['alice@example.com', alice]]);
    const printed = await t.approve(['--statement']);
    const statement = path.join(t.dir, 'statement.txt');
    await writeFile(statement, printed.stdout);
    await writeFile(`${statement}.sig`, keys.sign(alice, printed.stdout));
    await editAnAmount(t.sheet);
    const refused = await t.approve(['--signature', `${statement}.sig`]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('changed since it was signed');
  });
});
