/** A PostgreSQL register's URL read once: password never shown, sslmode with libpq's meanings. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { withoutPassword } from '../../src/register/location.js';
import { postgresConnection } from '../../src/register/pg-connection.js';

const PASSWORDS = ['Pg#S3cret', 'Pg/S3cret', 'Pg?S3cret', 'Pg@S3cret', 'Pg%S3cret', 'Pg:S3cret', 'Pg S3cret'];

/** Whatever is shown or said: it must hold no part of the password beyond its first two letters. */
function leaks(text: string, password: string): boolean {
  return text.includes('S3cret') || text.includes(password);
}

describe('postgresConnection: a password with characters a URL gives meaning to', () => {
  it.each(PASSWORDS)('%s percent-encoded: connects with it, never shows it', (password) => {
    const url = `postgres://payouts:${encodeURIComponent(password)}@db.internal:5433/payouts?sslmode=require`;
    const connection = postgresConnection(url, {});
    expect(connection.config).toMatchObject({
      host: 'db.internal',
      port: 5433,
      user: 'payouts',
      password,
      database: 'payouts',
    });
    expect(connection.shown).toBe('postgres://payouts:***@db.internal:5433/payouts?sslmode=require');
  });

  it.each(PASSWORDS)('%s as typed: read as meant, or refused without echoing it', (password) => {
    const url = `postgres://payouts:${password}@db.internal/payouts?sslmode=require`;
    expect(leaks(withoutPassword(url), password)).toBe(false);
    try {
      const connection = postgresConnection(url, {});
      // What parses is read as the user meant it: never a wrong host built from the password.
      expect(connection.config.password).toBe(password);
      expect(connection.config.host).toBe('db.internal');
      expect(leaks(connection.shown, password)).toBe(false);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toContain('the register postgres://*** cannot be read as a URL');
      expect(message).toContain('percent-encoded');
      expect(leaks(message, password)).toBe(false);
    }
  });

  it('masks the password query parameter too', () => {
    expect(withoutPassword('postgres://db/payouts?user=p&password=Pg%23S3cret&sslmode=disable')).toBe(
      'postgres://db/payouts?user=p&password=***&sslmode=disable',
    );
  });
});

describe('postgresConnection: sslmode', () => {
  const url = (query: string) => `postgres://payouts:pw@db.internal/payouts${query}`;

  it('disable (and absent) is plain text, with a warning for a host off this machine', () => {
    for (const query of ['', '?sslmode=disable']) {
      const connection = postgresConnection(url(query), {});
      expect(connection.config.ssl).toBe(false);
      expect(connection.warnings).toEqual([
        "the register's database at db.internal is reached without TLS: its traffic (payouts, and the password) can be read on the way: add sslmode=verify-full to the URL",
      ]);
    }
    expect(postgresConnection('postgres://p:pw@127.0.0.1:5432/db', {}).warnings).toEqual([]);
  });

  it('require encrypts without verifying, as libpq does', () => {
    expect(postgresConnection(url('?sslmode=require'), {}).config.ssl).toEqual({ rejectUnauthorized: false });
  });

  it('verify-full verifies chain and host; verify-ca the chain only; require with a root certificate is verify-ca', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'payouts-ca-'));
    const ca = path.join(dir, 'root.crt');
    await writeFile(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const full = postgresConnection(url(`?sslmode=verify-full&sslrootcert=${ca}`), {}).config.ssl;
    expect(full).toEqual({ ca: expect.stringContaining('BEGIN CERTIFICATE') });
    for (const mode of ['verify-ca', 'require']) {
      const ssl = postgresConnection(url(`?sslmode=${mode}&sslrootcert=${ca}`), {}).config.ssl;
      expect(ssl).toMatchObject({ ca: expect.stringContaining('BEGIN CERTIFICATE') });
      if (ssl === false) throw new Error(`${mode} must encrypt`);
      // The host name is not checked: a function that finds nothing wrong.
      expect(typeof ssl.checkServerIdentity).toBe('function');
      expect(ssl.checkServerIdentity!('another.host', {} as never)).toBeUndefined();
      expect(ssl.rejectUnauthorized).toBeUndefined();
    }
    // PGSSLROOTCERT and PGSSLMODE are read by payouts (node-postgres reads neither file nor mode so).
    const fromEnv = postgresConnection(url(''), { PGSSLMODE: 'verify-full', PGSSLROOTCERT: ca });
    expect(fromEnv.sslmode).toBe('verify-full');
    expect(fromEnv.config.ssl).toEqual({ ca: expect.stringContaining('BEGIN CERTIFICATE') });
    // libpq's `system`: the machine's trusted authorities.
    expect(postgresConnection(url('?sslmode=verify-full&sslrootcert=system'), {}).config.ssl).toEqual({});
  });

  it.each(['prefer', 'allow'])(
    'refuses %s by name: a register never falls back to plain text silently',
    (mode) => {
      expect(() => postgresConnection(url(`?sslmode=${mode}`), {})).toThrow(ConfigError);
      expect(() => postgresConnection(url(`?sslmode=${mode}`), {})).toThrow(
        `sslmode=${mode} is not accepted for the register: it falls back to plain text without saying so`,
      );
      expect(() => postgresConnection(url(''), { PGSSLMODE: mode })).toThrow(
        `sslmode=${mode} is not accepted`,
      );
    },
  );

  it('refuses an unknown mode naming the ones it takes, and an unreadable root certificate naming the file', () => {
    expect(() => postgresConnection(url('?sslmode=on'), {})).toThrow(
      'sslmode=on is not a TLS mode payouts knows: use one of disable, require, verify-ca, verify-full',
    );
    expect(() => postgresConnection(url('?sslmode=verify-full&sslrootcert=/no/such/root.crt'), {})).toThrow(
      'the sslrootcert file /no/such/root.crt of the register postgres://payouts:***@db.internal/payouts?sslmode=verify-full&sslrootcert=/no/such/root.crt cannot be read (no such file)',
    );
  });

  it('leaves a bare postgres:// to the PG* environment', () => {
    const connection = postgresConnection('postgres://', { PGHOST: 'db.internal' });
    expect(connection.config).toEqual({ ssl: false });
    expect(connection.host).toBe('db.internal');
  });
});
