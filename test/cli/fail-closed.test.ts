/**
 * Configuration fails closed (docs/configuration.md): an empty or malformed variable, a misspelt
 * name, a register that is not there and a gate that could never pass are each exit 2 before
 * anything is sent or created; `register init` is how a register comes to be.
 */
import { existsSync } from 'node:fs';
import { copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { VARIABLES } from '../../src/environment.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { HAS_SSH_KEYGEN, KeyFolder } from '../approvals/ssh-keygen.js';
import { type CliResult, runCli } from '../helpers/cli.js';
import { paymentsOf, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

/** The CLI in-process with exactly this environment (no test register added), text logs. */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runCli([...args, ...(args[0] === 'status' ? [] : ['--log-format', 'text'])], {
    env,
    exactEnv: true,
  });
}

/** A folder with the clean sample and a register made on purpose in it. */
async function workspace(): Promise<{ dir: string; sheet: string; register: string }> {
  const dir = await testDir();
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return { dir, sheet, register: initTestRegister(path.join(dir, 'state', 'register.db')) };
}

/** What a SQLite register holds, as text: its schema version, tables and their rows. */
function schemaOf(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare('SELECT name, sql FROM sqlite_master ORDER BY name').all() as {
      name: string;
      sql: string;
    }[];
    const rows = tables
      .filter((t) => t.sql?.startsWith('CREATE TABLE'))
      .map((t) => `${t.name}: ${JSON.stringify(db.prepare(`SELECT * FROM "${t.name}"`).all())}`);
    return [String(db.pragma('user_version', { simple: true })), ...tables.map((t) => t.sql), ...rows].join(
      '\n',
    );
  } finally {
    db.close();
  }
}

function expectNothingSent(sb: SandboxHandle): void {
  expect(sb.ledger().requests.total).toBe(0);
  expect(paymentsOf(sb)).toEqual([]);
}

/** A malformed value of each kind that can have one. */
const MALFORMED: Readonly<Record<string, string>> = {
  PAYOUTS_BASE_URL: 'api.example.com',
  PAYOUTS_AUTH_URL: 'ftp://auth.example.com',
  PAYOUTS_REQUIRE_APPROVALS: 'two',
  PAYOUTS_DEBUG: 'maybe',
  PAYOUTS_PUSH_METRICS: 'pushgateway:9091',
};

describe('variables payouts reads', () => {
  const read = VARIABLES.filter((v) => v.name !== 'XDG_STATE_HOME').map((v) => v.name);
  it.each(read)('%s set but empty is exit 2 naming it: nothing sent, no file written', async (name) => {
    const sb = await testSandbox();
    const { dir, sheet, register } = await workspace();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register, [name]: '' };
    const result = await cli(['run', sheet, '--base-url', sb.url], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`payouts: ${name} is set but empty`);
    expectNothingSent(sb);
    expect((await readdir(dir)).sort()).toEqual(['payouts.csv', 'state']);
  });

  it.each(Object.entries(MALFORMED))('%s=%s is exit 2 naming it', async (name, value) => {
    const sb = await testSandbox();
    const { dir, sheet, register } = await workspace();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register, [name]: value };
    const result = await cli(['run', sheet, '--base-url', sb.url], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`payouts: ${name}(=\\S+)? must be`));
    expectNothingSent(sb);
    expect((await readdir(dir)).sort()).toEqual(['payouts.csv', 'state']);
  });

  it('PAYOUTS_REQUIRE_APPROVALS=0, a guard that does nothing, is exit 2', async () => {
    const { sheet, register } = await workspace();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register, PAYOUTS_REQUIRE_APPROVALS: '0' };
    const result = await cli(['validate', sheet], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('PAYOUTS_REQUIRE_APPROVALS=0 requires no approval at all');
  });

  it('never repeats a secret set to blanks or a URL with its user info', async () => {
    const { sheet, register } = await workspace();
    const env = {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
      PAYOUTS_BASE_URL: 'user:hunter2-secret@api.example.com',
    };
    const result = await cli(['validate', sheet], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYOUTS_BASE_URL must be a URL');
    expect(result.stderr).not.toContain('hunter2');
  });

  it.each([
    ['PAYOUTS_REQUIRE_APPROVAL', '2', 'PAYOUTS_REQUIRE_APPROVALS'],
    ['PAYOUTS_REGISTRY', '/data/register.db', 'PAYOUTS_REGISTER'],
    ['PAYOUTS_ALLOWED_SIGNER', 'approvers', 'PAYOUTS_ALLOWED_SIGNERS'],
  ])('%s, a near miss, is exit 2 with "did you mean"', async (name, value, meant) => {
    const sb = await testSandbox();
    const { sheet, register } = await workspace();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register, [name]: value };
    const result = await cli(['run', sheet, '--base-url', sb.url], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`payouts: ${name} is set, and payouts reads no variable of that name`);
    expect(result.stderr).toContain(`did you mean ${meant}?`);
    expectNothingSent(sb);
  });

  it('ignores the variables Kubernetes sets for a Service named payouts, and an empty XDG_STATE_HOME', async () => {
    const sb = await testSandbox();
    const { sheet, register } = await workspace();
    const env = {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
      PAYOUTS_SERVICE_HOST: '10.0.0.7',
      PAYOUTS_SERVICE_PORT: '80',
      PAYOUTS_PORT: 'tcp://10.0.0.7:80',
      PAYOUTS_PORT_80_TCP_ADDR: '10.0.0.7',
      PAYOUTS_SOMETHING_ELSE_ENTIRELY: 'x',
      XDG_STATE_HOME: '',
    };
    const result = await cli(['run', sheet, '--base-url', sb.url, '--json', '--rate', '200'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses['submitted']).toBe(12);
    expect(paymentsOf(sb)).toHaveLength(12);
  });
});

describe('a register that is not there', () => {
  /** Each command that refuses a missing register, as a job would call it. */
  function commands(sb: SandboxHandle, sheet: string): [string, string[]][] {
    return [
      ['run', ['run', sheet, '--base-url', sb.url]],
      ['reconcile', ['reconcile', '--base-url', sb.url]],
      ['approve', ['approve', sheet, '--statement', '--base-url', sb.url]],
      ['status', ['status']],
      ['webhooks listen', ['webhooks', 'listen', '--port', '0']],
      ['validate', ['validate', sheet]],
    ];
  }

  it.each([
    ['a missing file', 'register.db'],
    ['a missing folder', path.join('not-mounted', 'state', 'register.db')],
  ])(
    '%s: every command that needs one is exit 2, naming it and where it came from, and creates nothing',
    async (_, relative) => {
      const sb = await testSandbox();
      const dir = await testDir();
      const sheet = path.join(dir, 'payouts.csv');
      await copyFile(CLEAN_SAMPLE, sheet);
      const missing = path.join(dir, relative);
      for (const [name, args] of commands(sb, sheet)) {
        for (const [how, env, extra] of [
          ['environment', { PAYOUTS_REGISTER: missing }, []],
          ['flag', {}, ['--register', missing]],
        ] as const) {
          const result = await cli([...args, ...extra], {
            ...SANDBOX_ENV,
            PAYOUTS_WEBHOOK_SECRET: 'whsec-test',
            ...env,
          });
          expect(result.code, `${name} (${how}): ${result.stderr}`).toBe(2);
          expect(result.stderr).toContain(`there is no payouts register at ${missing}`);
          expect(result.stderr).toContain(
            how === 'flag' ? '(named by --register)' : '(named by PAYOUTS_REGISTER)',
          );
          expect(result.stderr).toContain('payouts register init');
        }
      }
      expectNothingSent(sb);
      expect(await readdir(dir)).toEqual(['payouts.csv']);
    },
  );

  it('at the default location: exit 2 saying so; validate checks against none and says so first', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const env = {
      ...SANDBOX_ENV,
      XDG_STATE_HOME: path.join(dir, 'state'),
      PAYOUTS_WEBHOOK_SECRET: 'whsec-test',
    };
    const expected = path.join(dir, 'state', 'payouts', 'register.db');
    for (const [name, args] of commands(sb, sheet).filter(([n]) => n !== 'validate')) {
      const result = await cli(args, env);
      expect(result.code, `${name}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`there is no payouts register at ${expected} (the default location`);
    }
    const validate = await cli(['validate', sheet, '--json', '--no-report'], env);
    expect(validate.code, validate.stderr).toBe(0);
    const summary = JSON.parse(validate.stdout) as {
      registerNotChecked?: string;
      statuses: Record<string, number>;
    };
    expect(summary.registerNotChecked).toContain(`there is no register at ${expected}`);
    expect(summary.statuses['valid']).toBe(12);
    expectNothingSent(sb);
    expect(existsSync(path.join(dir, 'state'))).toBe(false);
  });

  it('an empty file, or a SQLite file of another schema, is no register either, and is left as it was', async () => {
    const dir = await testDir();
    const empty = path.join(dir, 'empty.db');
    await writeFile(empty, '');
    const result = await cli(['status', '--register', empty], {});
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`there is no payouts register at ${empty}`);
    expect((await stat(empty)).size).toBe(0);
  });
});

describe('payouts register init', () => {
  it('creates a private register with its folder, says so, changes nothing the second time, and a run then pays', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const register = path.join(dir, 'data', 'state', 'register.db');
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register };

    const first = await cli(['register', 'init'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Created an empty register at ${register} (named by PAYOUTS_REGISTER)`);
    expect((await stat(register)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(register))).mode & 0o777).toBe(0o700);
    const before = schemaOf(register);

    const second = await cli(['register', 'init', register, '--json'], {});
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({
      command: 'register init',
      register,
      kind: 'sqlite',
      created: false,
      exitCode: 0,
    });
    expect(schemaOf(register)).toEqual(before);

    const run = await cli(['run', sheet, '--base-url', sb.url, '--json', '--rate', '200'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run).register).toBe(register);
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('is exit 2 for a location it cannot create, saying why', async () => {
    const dir = await testDir();
    await writeFile(path.join(dir, 'file'), 'not a folder');
    const result = await cli(['register', 'init', path.join(dir, 'file', 'register.db')], {});
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('cannot be created');
  });

  it('run --sandbox needs no init: its throwaway register is its own', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const result = await cli(['run', sheet, '--sandbox', '--json'], {
      XDG_STATE_HOME: path.join(dir, 'state'),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).statuses['submitted']).toBe(12);
    expect(existsSync(path.join(dir, 'state'))).toBe(false);
  });
});

describe('a register written by the release before register init', () => {
  // Made by payouts 0.1.0 (the last release that created a register on first use): the clean
  // sample paid against a sandbox at http://127.0.0.1:18787, seed 20261121.
  const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/register-written-by-0.1.0.db');
  const THEN = 'http://127.0.0.1:18787';

  it('opens without init and refuses its paid references as before: skipped, or invalid with other details', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const register = path.join(dir, 'register.db');
    await copyFile(FIXTURE, register);
    const sheet = path.join(dir, 'payouts-2026-11.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register };
    const args = ['run', sheet, '--base-url', sb.url, '--same-service-as', THEN, '--json', '--rate', '200'];

    const again = await cli(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again).statuses).toMatchObject({ skipped: 12, submitted: 0 });
    expect(paymentsOf(sb)).toEqual([]);

    const text = await readFile(sheet, 'utf8');
    await writeFile(
      sheet,
      text.replace(/,(\d+\.\d\d),USD,/, (_, amount: string) => `,${(Number(amount) + 1).toFixed(2)},USD,`),
    );
    const edited = await cli(args, env);
    expect(edited.code, edited.stderr).toBe(1);
    expect(summaryOf(edited).statuses).toMatchObject({ invalid: 1, skipped: 11 });
    expect(paymentsOf(sb)).toEqual([]);
  });
});

describe('a gate that could never pass, or that does nothing', () => {
  async function gated(
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ result: CliResult; sb: SandboxHandle }> {
    const sb = await testSandbox();
    const { sheet, register } = await workspace();
    const result = await cli(['run', sheet, '--base-url', sb.url, ...args], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
      ...env,
    });
    return { result, sb };
  }

  async function signersFile(text: string): Promise<string> {
    const file = path.join(await testDir(), 'approvers');
    await writeFile(file, text);
    return file;
  }

  it('--allowed-signers (flag or environment) without --require-approvals is exit 2, nothing sent', async () => {
    const file = await signersFile('# nobody yet\n');
    for (const [args, env, named] of [
      [['--allowed-signers', file], {}, '--allowed-signers'],
      [[], { PAYOUTS_ALLOWED_SIGNERS: file }, 'PAYOUTS_ALLOWED_SIGNERS'],
    ] as const) {
      const { result, sb } = await gated([...args], env);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        `${named} names who may approve, but nothing says how many approvals this run needs`,
      );
      expectNothingSent(sb);
    }
  });

  it('--require-approvals 0 and --approval-max-age 0 are exit 2, nothing sent', async () => {
    const file = await signersFile('# nobody yet\n');
    const zero = await gated(['--require-approvals', '0', '--allowed-signers', file]);
    expect(zero.result.code, zero.result.stderr).toBe(2);
    expect(zero.result.stderr).toContain('--require-approvals 0 requires no approval at all');
    expectNothingSent(zero.sb);
    const age = await gated([
      '--require-approvals',
      '1',
      '--allowed-signers',
      file,
      '--approval-max-age',
      '0',
    ]);
    expect(age.result.code, age.result.stderr).toBe(2);
    expect(age.result.stderr).toContain('--approval-max-age must be a whole number of days, 1 or more');
    expectNothingSent(age.sb);
  });

  it('an allowed-signers file of comments only, or whose keys all expired, is exit 2, nothing sent', async () => {
    const comments = await signersFile('# approvers of payroll\n\n# (to be filled in)\n');
    const none = await gated(['--require-approvals', '1', '--allowed-signers', comments]);
    expect(none.result.code, none.result.stderr).toBe(2);
    expect(none.result.stderr).toContain(`${comments}: the allowed-signers file lists no key`);
    expectNothingSent(none.sb);

    if (!HAS_SSH_KEYGEN) return;
    const keys = new KeyFolder();
    onTestFinished(() => keys.cleanup());
    const alice = keys.key('alice', { type: 'ed25519' });
    const bob = keys.key('bob', { type: 'ed25519' });
    const expired = await signersFile(
      `alice@corp valid-before="20200101" ${alice.publicKey}\nbob@corp valid-before="20200101Z" ${bob.publicKey}\n`,
    );
    const old = await gated(['--require-approvals', '1', '--allowed-signers', expired]);
    expect(old.result.code, old.result.stderr).toBe(2);
    expect(old.result.stderr).toContain('2 lines are expired, not yet valid or limited to other namespaces');
    expectNothingSent(old.sb);

    const oneOfTwo = await signersFile(
      `alice@corp ${alice.publicKey}\nbob@corp valid-before="20200101" ${bob.publicKey}\n`,
    );
    const short = await gated(['--require-approvals', '2', '--allowed-signers', oneOfTwo]);
    expect(short.result.code, short.result.stderr).toBe(2);
    expect(short.result.stderr).toContain(
      'names one approver whose key may sign an approval now (alice@corp)',
    );
    expectNothingSent(short.sb);
  });

  it('a missing allowed-signers file is said in words, without an errno', async () => {
    const { result } = await gated([
      '--require-approvals',
      '1',
      '--allowed-signers',
      '/nonexistent/approvers',
    ]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('cannot read the allowed-signers file: no such file or directory');
    expect(result.stderr).not.toContain('ENOENT');
  });
});
