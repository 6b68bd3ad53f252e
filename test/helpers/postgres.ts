/**
 * A database of its own on the test run's PostgreSQL server (postgres-server.ts), for one test
 * file or one test: registers in different databases know nothing of each other.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { initRegister } from '../../src/register/open.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/register/schema.js';

/** The URL of a new, empty database on the test server. */
export async function testDatabase(): Promise<string> {
  const admin = inject('postgresUrl');
  // Letters only: a run of digits in a URL is masked in logs like an account number.
  const name = `payouts_${randomBytes(8)
    .toString('hex')
    .replace(/\d/g, (digit) => 'ghijklmnop'[Number(digit)]!)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return admin.replace(/\/postgres$/, `/${name}`);
}

/** The URL of a new database on the test server holding an empty register (`payouts register init`). */
export async function testRegisterDatabase(): Promise<string> {
  const url = await testDatabase();
  await initRegister(url);
  return url;
}

/**
 * The URL of a new database holding a register as the payouts before the last schema change
 * left it: one that any command opens and upgrades.
 */
export async function olderRegisterDatabase(): Promise<string> {
  const url = await testDatabase();
  for (const migration of PG_MIGRATIONS.slice(0, -1)) await asAdmin(url, migration);
  await asAdmin(url, `UPDATE payouts.schema_version SET version = ${PG_SCHEMA_VERSION - 1}`);
  return url;
}

/** Runs one statement as the server's superuser on a database (tests that set the stage). */
export async function asAdmin(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}
