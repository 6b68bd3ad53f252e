/**
 * Process warnings go through the command's logger: with JSON logs, stderr holds JSON lines only,
 * even when a library warns. The warning here is node-postgres' own, met as a user meets it: a
 * register URL without a password, the password in a pgpass file (PGPASSFILE), which
 * node-postgres reads with a DeprecationWarning, and a pgpass file others can read, which the
 * pgpass reader complains about on stderr.
 */
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { expectOnePaymentPerRow, SANDBOX_ENV, spawnCli, testDir, testSandbox } from '../helpers/payouts.js';
import { testRegisterDatabase } from '../helpers/postgres.js';
import { generateRows, writeSheet } from '../helpers/sheets.js';

/** The test server's password (postgres-server.ts). */
const PASSWORD = 'payouts-test';

async function pgpassSetup(mode: number) {
  const sb = await testSandbox();
  const dir = await testDir();
  const url = new URL(await testRegisterDatabase());
  const passfile = path.join(dir, 'pgpass');
  await writeFile(passfile, `${url.hostname}:${url.port}:*:${url.username}:${PASSWORD}\n`);
  await chmod(passfile, mode);
  url.password = '';
  const sheet = path.join(dir, 'sheet.csv');
  const rows = generateRows(3, { prefix: 'WARN' });
  await writeSheet(sheet, rows);
  return { sb, dir, sheet, rows, register: url.href, passfile };
}

function records(stderr: string): Array<Record<string, unknown>> {
  const lines = stderr.split('\n').filter((line) => line !== '');
  // Every line is a JSON record: nothing printed as text.
  return lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`stderr holds a line that is not JSON: ${line}`);
    }
  });
}

describe('process warnings', () => {
  it("are log records, not text, when the logs are JSON: node-postgres' pgpass deprecation", async () => {
    const s = await pgpassSetup(0o600);
    const exit = await spawnCli(
      ['run', s.sheet, '--base-url', s.sb.url, '--out', path.join(s.dir, 'out.csv'), '--log-format', 'json'],
      { ...SANDBOX_ENV, PAYOUTS_REGISTER: s.register, PGPASSFILE: s.passfile },
    ).exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(s.sb, s.rows);
    const warning = records(exit.stderr).find((r) => r['warning'] === 'DeprecationWarning');
    expect(warning, exit.stderr).toMatchObject({
      level: 40,
      msg: expect.stringContaining('pgpass support is deprecated and will be removed in pg@9.0'),
    });
    expect(exit.stderr).not.toContain('(node:');
  });

  it('are one line each of the text log with text logs', async () => {
    const s = await pgpassSetup(0o600);
    const exit = await spawnCli(
      ['run', s.sheet, '--base-url', s.sb.url, '--out', path.join(s.dir, 'out.csv'), '--log-format', 'text'],
      { ...SANDBOX_ENV, PAYOUTS_REGISTER: s.register, PGPASSFILE: s.passfile },
    ).exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    expect(exit.stderr).toMatch(
      /^\d\d:\d\d:\d\d warn {2}pgpass support is deprecated .* warning=DeprecationWarning$/m,
    );
    expect(exit.stderr).not.toContain('(node:');
  });

  it("the pgpass reader's complaint about a file others can read is a JSON record too", async () => {
    const s = await pgpassSetup(0o644);
    const exit = await spawnCli(
      ['run', s.sheet, '--base-url', s.sb.url, '--out', path.join(s.dir, 'out.csv'), '--log-format', 'json'],
      { ...SANDBOX_ENV, PAYOUTS_REGISTER: s.register, PGPASSFILE: s.passfile },
    ).exited;
    // A password file others can read is not used (libpq's rule too): no password, exit 2.
    expect(exit.code, exit.stderr).toBe(EXIT.usage);
    const all = records(exit.stderr);
    expect(all).toContainEqual(
      expect.objectContaining({
        level: 40,
        warning: 'PasswordFileWarning',
        msg: `password file "${s.passfile}" has group or world access; permissions should be u=rw (0600) or less`,
      }),
    );
    expect(all.map((r) => r['msg'])).toContainEqual(
      expect.stringContaining('the database refused the user name or password (28P01)'),
    );
  });

  it('are a "payouts: warning:" line from a command that takes no logging options (status)', async () => {
    const s = await pgpassSetup(0o600);
    const exit = await spawnCli(['status', '--register', s.register], { PGPASSFILE: s.passfile }).exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    expect(exit.stderr).toMatch(
      /^payouts: warning: pgpass support is deprecated and will be removed in pg@9\.0/m,
    );
    expect(exit.stderr).not.toContain('(node:');
  });
});
