/**
 * A PostgreSQL register from the command line (`--register`, docs/register.md "A PostgreSQL
 * register"): a `postgres://` URL in PAYOUTS_REGISTER or --register is a database, never a file;
 * its password is never shown; a database that could lose acknowledged commits is refused; two
 * containers starting together migrate it once.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { InterruptedError, RegisterError } from '../../src/errors.js';
import { openRegister } from '../../src/register/open.js';
import { postgresConnection } from '../../src/register/pg-connection.js';
import { MIGRATION_LOCK } from '../../src/register/postgres.js';
import { PG_SCHEMA_VERSION } from '../../src/register/schema.js';
import { runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import {
  expectOnePaymentPerRow,
  registerRecords,
  runAgainst,
  SANDBOX_ENV,
  sleep,
  spawnCli,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { asAdmin, olderRegisterDatabase, testDatabase, testRegisterDatabase } from '../helpers/postgres.js';
import { readCsv, writeSheet } from '../helpers/sheets.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');
/** The test server's password (postgres-server.ts): it must appear nowhere. */
const PASSWORD = 'payouts-test';

/** Another session holding the migration lock of `url`'s register, as a process migrating it would; ended with the test. */
async function migratingElsewhere(url: string): Promise<pg.Client> {
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  onTestFinished(() => other.end());
  await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  return other;
}

describe('a PostgreSQL register', () => {
  it('pays a sheet, then skips it on the next run, and never shows the password', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const url = await testRegisterDatabase();
    expect(url).toContain(`:${PASSWORD}@`);
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, await readCsv(SAMPLE));
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: url };

    const first = await runAgainst(sb, sheet, ['--json', '--log-format', 'json'], env);
    expect(first.code, first.stderr).toBe(0);
    const shown = url.replace(`:${PASSWORD}@`, ':***@');
    expect(summaryOf(first).register).toBe(shown);
    // No file named after the URL in the working folder, as an SQLite path would make.
    expect(existsSync(path.join(process.cwd(), 'postgres:'))).toBe(false);
    await expectOnePaymentPerRow(sb, await readCsv(SAMPLE));

    const second = await runCli(['run', sheet, '--base-url', sb.url, '--register', url, '--json'], {
      env: SANDBOX_ENV,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(summaryOf(second).statuses).toMatchObject({ skipped: 12, submitted: 0 });

    const status = await runCli(['status', '--register', url], { env: {} });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(shown);
    const validate = await runCli(['validate', sheet, '--register', url, '--base-url', sb.url, '--json'], {
      env: {},
    });
    expect(validate.code, validate.stderr).toBe(0);
    expect(JSON.parse(validate.stdout).statuses).toMatchObject({ skipped: 12 });

    for (const result of [first, second, status, validate]) {
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    }
    const results = await readFile(summaryOf(second).results, 'utf8');
    expect(results).not.toContain(PASSWORD);
    expect((await registerRecords(url, sb)).size).toBe(12);
  });

  it('in a database without the payouts schema is refused by every command that needs one: exit 2, nothing sent, no table made', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, await readCsv(SAMPLE));
    const url = await testDatabase();
    const shown = url.replace(`:${PASSWORD}@`, ':***@');
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: url, PAYOUTS_WEBHOOK_SECRET: 'whsec-test' };
    for (const args of [
      ['run', sheet, '--base-url', sb.url],
      ['reconcile', '--base-url', sb.url],
      ['approve', sheet, '--statement', '--base-url', sb.url],
      ['status'],
      ['webhooks', 'listen', '--port', '0'],
      ['validate', sheet, '--no-report'],
    ]) {
      const result = await runCli(args[0] === 'status' ? args : [...args, '--log-format', 'text'], { env });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(
        `there is no payouts register at ${shown} (named by PAYOUTS_REGISTER): the database holds no payouts schema`,
      );
      expect(result.stderr).not.toContain(PASSWORD);
    }
    expect(sb.ledger().requests.total).toBe(0);
    const tables = await asAdmin(
      url,
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    expect(tables.rows).toEqual([]);
    expect(await readdir(dir)).toEqual(['november.csv']);

    const init = await runCli(['register', 'init', '--json'], { env });
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toEqual({
      command: 'register init',
      register: shown,
      kind: 'postgres',
      created: true,
      exitCode: 0,
    });
    const again = await runCli(['register', 'init'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `There is a register at ${shown} (named by PAYOUTS_REGISTER) already: nothing was changed.`,
    );
    const paid = await runAgainst(sb, sheet, ['--json', '--rate', '200'], env);
    expect(paid.code, paid.stderr).toBe(0);
    await expectOnePaymentPerRow(sb, await readCsv(sheet));
  });

  it('names the database without its password when it refuses the login (exit 2, nothing sent)', async () => {
    const sb = await testSandbox();
    const url = (await testDatabase()).replace(`:${PASSWORD}@`, ':wrong-secret@');
    const result = await runAgainst(sb, SAMPLE, ['--out', path.join(await testDir(), 'r.csv')], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: url,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the database refused the user name or password');
    expect(result.stderr).toContain(url.replace(':wrong-secret@', ':***@'));
    expect(result.stderr).not.toContain('wrong-secret');
    expect(sb.ledger().transactions).toHaveLength(0);
  });

  it('refuses a database whose synchronous_commit is off: an acknowledged intent could be lost', async () => {
    const url = await testDatabase();
    const name = new URL(url).pathname.slice(1);
    await asAdmin(url, `ALTER DATABASE ${name} SET synchronous_commit = off`);
    const error = await openRegister(url).catch((e) => e);
    expect(error).toBeInstanceOf(RegisterError);
    expect(error.message).toContain("synchronous_commit is 'off'");
    expect(error.exitCode).toBe(2);
  });

  it('is migrated once when several containers open a new database together', async () => {
    const url = await testDatabase();
    const registers = await Promise.all(Array.from({ length: 4 }, () => openRegister(url, { create: true })));
    try {
      const scopes = await Promise.all(
        registers.map((r) => r.openScope({ service: 'https://api.example', integratorId: 'int-1' })),
      );
      expect(new Set(scopes.map((s) => s.scope.id)).size).toBe(1);
      const version = await asAdmin(url, 'SELECT version FROM payouts.schema_version');
      expect(version.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
    } finally {
      await Promise.all(registers.map((r) => r.close()));
    }
  });

  it('is migrated when a schema change takes longer than the register deadline', async () => {
    const url = await testDatabase();
    // Each CREATE SCHEMA takes 1.5 s, as building an index over a large register's payouts
    // does: past the 1 s deadline of --max-outage 2, which bounds a query, not a migration.
    await asAdmin(
      url,
      `CREATE FUNCTION public.slow_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.5); END $$;
       CREATE EVENT TRIGGER slow_ddl ON ddl_command_start WHEN TAG IN ('CREATE SCHEMA') EXECUTE FUNCTION public.slow_ddl()`,
    );
    const register = await openRegister(url, { maxOutageMs: 2_000, create: true });
    await register.close();
    const version = await asAdmin(url, 'SELECT version FROM payouts.schema_version');
    expect(version.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
  });

  it('waits for another process migrating it, past the register deadline', async () => {
    const url = await olderRegisterDatabase();
    const other = await migratingElsewhere(url);
    const started = performance.now();
    const opening = openRegister(url, { maxOutageMs: 2_000 });
    await sleep(2_500);
    await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    const register = await opening;
    await register.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_400);
    const version = await asAdmin(url, 'SELECT version FROM payouts.schema_version');
    expect(version.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
  });

  it('ends the wait for another process migrating it at a stop: interrupted, nothing changed', async () => {
    const url = await olderRegisterDatabase();
    await migratingElsewhere(url);
    const stop = new AbortController();
    const opening = openRegister(url, { stop: stop.signal }).catch((e: unknown) => e);
    await sleep(500);
    const stoppedAt = performance.now();
    stop.abort();
    const error = await opening;
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as Error).message).toMatch(
      /^stopped while the register .* was being opened, before anything was sent$/,
    );
    const version = await asAdmin(url, 'SELECT version FROM payouts.schema_version');
    expect(version.rows).toEqual([{ version: PG_SCHEMA_VERSION - 1 }]);
  });

  it('run: a stop while another process migrates the register ends it at once, exit 5, nothing sent', {
    timeout: 60_000,
  }, async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const url = await olderRegisterDatabase();
    const sheet = path.join(dir, 'december.csv');
    const out = path.join(dir, 'results.csv');
    await writeSheet(sheet, await readCsv(SAMPLE));
    const other = await migratingElsewhere(url);
    const run = spawnCli(['run', sheet, '--base-url', sb.url, '--out', out, '--json'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: url,
    });
    // Connected, and waiting for the migration the other session holds the lock of.
    await eventually(async () => {
      const waiting = await other.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'payouts'",
      );
      return waiting.rows.length > 0;
    }, 20_000);
    const stoppedAt = performance.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(performance.now() - stoppedAt).toBeLessThan(10_000);
    expect(exit.code, exit.stderr).toBe(5);
    expect(exit.stderr).toContain('was being opened, before anything was sent');
    const results = await readCsv(out);
    expect(results.map((r) => r['result.status'])).toEqual(Array(12).fill('skipped'));
    expect(sb.ledger().transactions).toEqual([]);
  });

  it.each([
    ['postgres://u:pw@db.internal:5432/payouts', 'db.internal'],
    ['postgresql://u:pw@10.1.2.3/payouts?sslmode=disable', '10.1.2.3'],
    ['postgres://u:pw@db.internal/payouts?sslmode=verify-full', undefined],
    ['postgres://u:pw@db.internal/payouts?ssl=true', undefined],
    ['postgres://u:pw@127.0.0.1:5432/payouts', undefined],
    ['postgres://u:pw@localhost/payouts', undefined],
    ['postgres://u:pw@[::1]/payouts', undefined],
    ['postgres://u@/payouts?host=/var/run/postgresql', undefined],
  ])('warns, for %s, when a remote database is reached without TLS', (url, host) => {
    const [warning] = postgresConnection(url, {}).warnings;
    expect(warning).toBe(
      host === undefined
        ? undefined
        : `the register's database at ${host} is reached without TLS: its traffic (payouts, and the password) can be read on the way: add sslmode=verify-full to the URL`,
    );
  });

  it('reads the PG* environment for a bare postgres:// URL', () => {
    const warningsOf = (env: NodeJS.ProcessEnv) => postgresConnection('postgres://', env).warnings;
    expect(warningsOf({ PGHOST: 'db.internal' })[0]).toContain('at db.internal');
    expect(warningsOf({ PGHOST: 'db.internal', PGSSLMODE: 'require' })).toEqual([]);
    expect(warningsOf({})).toEqual([]);
  });
});
