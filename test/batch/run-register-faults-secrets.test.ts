/**
 * A PostgreSQL register's password never shows (docs/register.md "A PostgreSQL register"): a
 * password holding each of # / ? @ % : or a space, percent-encoded (well-formed) or as typed
 * (malformed), through --register or PAYOUTS_REGISTER, is never in stdout, stderr at debug
 * level, the JSON summary or the results file of `run`, nor in `status`. And a TLS mode the
 * server cannot give, or one payouts refuses, is exit 2 with the reason in words.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { initRegister } from '../../src/register/open.js';
import { runCli } from '../helpers/cli.js';
import { runAgainst, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { asAdmin, testDatabase, testRegisterDatabase } from '../helpers/postgres.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

const PASSWORDS = ['Pg#S3cret', 'Pg/S3cret', 'Pg?S3cret', 'Pg@S3cret', 'Pg%S3cret', 'Pg:S3cret', 'Pg S3cret'];

/** A role on the test server with this password, owning a new database; the two URLs that name it. */
async function roleWith(password: string): Promise<{ encoded: string; typed: string }> {
  const database = await testDatabase();
  const role = `payouts_${randomBytes(6)
    .toString('hex')
    .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!)}`;
  await asAdmin(database, `CREATE ROLE ${role} LOGIN PASSWORD '${password.replace(/'/g, "''")}'`);
  const name = new URL(database).pathname.slice(1);
  await asAdmin(database, `ALTER DATABASE ${name} OWNER TO ${role}`);
  const { host } = new URL(database);
  const encoded = `postgres://${role}:${encodeURIComponent(password)}@${host}/${name}`;
  // Made by its owner, as `payouts register init` run with that URL would.
  await initRegister(encoded);
  return { encoded, typed: `postgres://${role}:${password}@${host}/${name}` };
}

function expectHidden(text: string): void {
  expect(text).not.toContain('S3cret');
  expect(text).not.toContain('S3cret'.toLowerCase());
}

describe('a PostgreSQL register password is never shown', () => {
  it.each(PASSWORDS)(
    '%s: run and status, through the flag and the environment',
    {
      timeout: 60_000,
    },
    async (password) => {
      const urls = await roleWith(password);
      const sb = await testSandbox();
      const dir = await testDir();
      const sheet = path.join(dir, 'payouts.csv');
      await copyFile(CLEAN_SAMPLE, sheet);
      // Well-formed, from the environment: the run pays, and shows the URL redacted.
      const ran = await runAgainst(sb, sheet, ['--json', '--log-level', 'debug'], {
        ...SANDBOX_ENV,
        PAYOUTS_REGISTER: urls.encoded,
      });
      expect(ran.code, ran.stderr).toBe(EXIT.ok);
      expect(summaryOf(ran).register).toMatch(/^postgres:\/\/payouts_\w+:\*\*\*@/);
      expectHidden(ran.stdout + ran.stderr);
      expectHidden(await readFile(summaryOf(ran).results, 'utf8'));
      // Well-formed, on the command line: works, and warns that the command line shows it.
      const flagged = await runCli(['status', '--register', urls.encoded, '--json'], {
        env: {},
      });
      expect(flagged.code, flagged.stderr).toBe(0);
      expectHidden(flagged.stdout + flagged.stderr);
      const warned = await runAgainst(sb, sheet, ['--json', '--register', urls.encoded], SANDBOX_ENV);
      expect(warned.stderr).toMatch(/password was given on the command line/);
      expectHidden(warned.stdout + warned.stderr);
      // As typed, through both ways: read as meant or refused, and never echoed.
      for (const [args, env] of [
        [['--register', urls.typed], {}],
        [[], { PAYOUTS_REGISTER: urls.typed }],
      ] as const) {
        const status = await runCli(['status', ...args, '--json'], { env });
        expectHidden(status.stdout + status.stderr);
        const typed = await runAgainst(sb, sheet, ['--json', '--log-level', 'debug', ...args], {
          ...SANDBOX_ENV,
          ...env,
        });
        expect([EXIT.ok, EXIT.usage], typed.stderr).toContain(typed.code);
        expectHidden(typed.stdout + typed.stderr);
      }
    },
  );
});

describe('a PostgreSQL register and TLS', () => {
  it('sslmode=require against a server without TLS: exit 2, the reason in words, JSON on stderr only', async () => {
    const url = await testRegisterDatabase();
    const sb = await testSandbox();
    const result = await runAgainst(sb, CLEAN_SAMPLE, ['--json'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: `${url}?sslmode=require`,
    });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain('the server does not support TLS, and sslmode=require asks for it');
    for (const line of result.stderr.trim().split('\n')) expect(() => JSON.parse(line), line).not.toThrow();
    expect(result.stderr).not.toMatch(/SECURITY WARNING|payouts-test/);
    expect(sb.ledger().requests.total).toBe(0);
  });

  it('sslmode=prefer: exit 2 naming the values payouts takes', async () => {
    const url = await testRegisterDatabase();
    const sb = await testSandbox();
    const result = await runAgainst(sb, CLEAN_SAMPLE, ['--json'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: `${url}?sslmode=prefer`,
    });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toMatch(
      /sslmode=prefer is not accepted.*sslmode=require.*verify-ca or verify-full/,
    );
    expect(result.stderr).not.toContain('payouts-test');
  });
});
