/**
 * What only the SQLite register has: its file (private, in a new folder), the packed look-up,
 * leases timed by an injected clock, and the errors of a file that is no register. The rest of
 * the contract is held against both stores in contract.test.ts.
 */
import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { RegisterError } from '../../src/errors.js';
import { historyRowId } from '../../src/register/history-row.js';
import type { Self } from '../../src/register/lease.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from '../../src/register/schema.js';
import { openSqliteRegister as openRegister, openSqliteRegisterWaiting } from '../../src/register/sqlite.js';
import type { Register } from '../../src/register/types.js';
import { begin, claimAs, payeePayment, TEST_SCOPE } from '../helpers/claims.js';
import { fakeOutageClock } from '../helpers/outage-clock.js';
import { testDir } from '../helpers/payouts.js';

const scope = TEST_SCOPE;

/** Claims as `run` does, in the test scope; the store and the verdict's kind per reference. */
async function claimIn(register: Register, self: Self, references: string[]) {
  const store = await register.openScope(scope);
  return { store, kinds: new Map(Object.entries(await claimAs(store, self, references))) };
}

/**
 * A register as the version before the first migration `isNext` names left it, with the test
 * scope: its file, a connection to it, and that version.
 */
async function olderRegister(isNext: (migration: string) => boolean) {
  const file = path.join(await testDir(), 'older.db');
  const raw = new Database(file);
  const before = MIGRATIONS.findIndex(isNext);
  for (const migration of MIGRATIONS.slice(0, before)) raw.exec(migration);
  raw.pragma(`user_version = ${before}`);
  raw.pragma(`application_id = ${APPLICATION_ID}`);
  raw
    .prepare(
      `INSERT INTO scopes (service, integrator_id, secret, created_at, last_used_at)
       VALUES (?, ?, ?, '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z')`,
    )
    .run(scope.service, scope.integratorId, Buffer.alloc(32, 7));
  return { file, raw, before };
}

describe('the SQLite register', () => {
  it('is created private (0600) in a new directory, with its scope secret, and opened again by another connection', async () => {
    const file = path.join(await testDir(), 'state', 'payouts', 'register.db');
    const a = openRegister(file, { create: true });
    const b = openRegister(file);
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const sa = await a.openScope(scope, 'integrator@example.com');
      const sb = await b.openScope(scope);
      expect(sb.scope.id).toBe(sa.scope.id);
      // One secret per scope: both connections fingerprint alike, and not as plain SHA-256.
      expect(sb.fingerprint('rail:ACH\naccountNumber:123456789')).toBe(
        sa.fingerprint('rail:ACH\naccountNumber:123456789'),
      );
      expect(sa.fingerprint('x')).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const other = await a.openScope({ ...scope, service: 'http://127.0.0.1:8787' });
      expect(other.scope.id).not.toBe(sa.scope.id);
      expect(other.fingerprint('x')).not.toBe(sa.fingerprint('x'));
      expect((await b.scopes()).map((s) => s.login)).toContain('integrator@example.com');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('looks up references that hold its separators, alike on a read-only connection', async () => {
    const file = path.join(await testDir(), 'register.db');
    const register = openRegister(file, { create: true });
    const reader = openRegister(file, { readonly: true });
    try {
      const self: Self = { runId: 'r', host: 'h', pid: 401 };
      const store = await begin(register, self);
      // The look-up packs a record's fields with \x1f and its records with \x1e (sqlite.ts):
      // references and messages holding them, and 600 plain ones across two query chunks.
      const odd = ['UNIT\x1fREF', 'RECORD\x1eREF', 'BOTH\x1e\x1f'];
      const plain = Array.from({ length: 600 }, (_, i) => `R-${i}`);
      await claimIn(register, self, [...odd, ...plain]);
      await store.update('r', 'R-1', { state: 'failed', transactionId: 'tx-1', error: 'bank\x1fsaid\x1eno' });
      await store.update('r', 'R-2', { state: 'submitted', transactionId: 'tx-2', recipientId: 'rcp-2' });
      const asked = [...odd, ...plain, 'MISSING'];
      const records = await store.lookup(asked);
      expect(records.size).toBe(603);
      expect([...records.keys()].filter((r) => !r.startsWith('R-')).sort()).toEqual([...odd].sort());
      expect(records.get('R-1')).toMatchObject({
        state: 'failed',
        transactionId: 'tx-1',
        error: 'bank\x1fsaid\x1eno',
      });
      expect(records.get('R-2')).toMatchObject({
        state: 'submitted',
        transactionId: 'tx-2',
        recipientId: 'rcp-2',
      });
      // A field that is NULL in the register is absent from the record, not ''.
      expect(Object.keys(records.get('R-3')!)).not.toContain('transactionId');
      expect(records.get('R-3')!.run).toMatchObject({ id: 'r', pid: 401 });

      // `validate` reads the register on its own read-only connection.
      const readStore = await reader.scopeStore(store.scope);
      expect(await readStore.lookup(asked)).toEqual(records);
      expect((await readStore.lookup(['NONE'])).size).toBe(0);
    } finally {
      await reader.close();
      await register.close();
    }
  });

  it('refuses a register of a newer schema, another SQLite file, and a missing one read-only (RegisterError, exit 2)', async () => {
    const dir = await testDir();
    const newer = path.join(dir, 'newer.db');
    await openRegister(newer, { create: true }).close();
    const raw = new Database(newer);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openRegister(newer)).toThrow(
      `the register ${newer} was written by a newer payouts (schema version 99, this payouts knows ${SCHEMA_VERSION}): upgrade payouts to use it`,
    );

    const foreign = path.join(dir, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE t (x)');
    other.close();
    expect(() => openRegister(foreign)).toThrow(`${foreign} is not a payouts register`);

    const text = path.join(dir, 'notes.db');
    await writeFile(text, 'this is not a database at all, just some text that is long enough'.repeat(100));
    const error = (() => {
      try {
        openRegister(text);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(RegisterError);
    expect((error as RegisterError).exitCode).toBe(2);
    expect((error as RegisterError).sent().exitCode).toBe(6);

    expect(() => openRegister(path.join(dir, 'missing.db'), { readonly: true })).toThrow(RegisterError);
  });

  it('moves the payee histories of an older register into an ordinary table, each kept as it was', async () => {
    // The register as the version before the move left it, with two payees' histories.
    const { file, raw } = await olderRegister((migration) => migration.includes('payee_history_rows'));
    const withoutRowid = () =>
      (raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'payee_history'").get() as { sql: string })
        .sql;
    expect(withoutRowid()).toContain('WITHOUT ROWID');
    const history = (reference: string) =>
      JSON.stringify({
        accounts: [],
        payments: [{ reference, paidAt: '2026-10-25T10:00:00.000Z', amount: '2500.00', currency: 'USD' }],
        largest: { USD: '2500.00' },
        batch: 'b'.repeat(64),
        name: 'Ana Lopez',
      });
    const insert = raw.prepare(
      "INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (1, ?, ?, '2026-10-25T10:00:00Z')",
    );
    insert.run('payee-a', history('OCT-1'));
    insert.run('payee-b', history('OCT-2'));

    const register = openRegister(file);
    try {
      const store = await register.openScope(scope);
      const held = await store.payeeHistory(['payee-a', 'payee-b', 'payee-c']);
      expect([...held.keys()].sort()).toEqual(['payee-a', 'payee-b']);
      expect(held.get('payee-b')).toEqual(JSON.parse(history('OCT-2')));
      expect(raw.pragma('user_version')).toEqual([{ user_version: SCHEMA_VERSION }]);
      expect(withoutRowid()).not.toContain('WITHOUT ROWID');
    } finally {
      await register.close();
      raw.close();
    }
  });

  it('finds each payee’s history under its row id, or by its key where another payee took that id first', async () => {
    const file = path.join(await testDir(), 'register.db');
    const register = openRegister(file, { create: true });
    const raw = new Database(file, { readonly: true });
    try {
      const store = await register.openScope(scope);
      const elsewhere = await register.openScope({ ...scope, service: 'http://127.0.0.1:8787' });
      // Three keys alike in their first eight characters (one row id), one too short for an id.
      const [first, second, unpaid] = [`AbCdEfGh${'a'.repeat(24)}`, `AbCdEfGh${'b'.repeat(24)}`, 'AbCdEfGhc'];
      await store.recordPayment(first!, payeePayment('P-1', '10.00', 'acct-1'), 'b', 'First');
      await store.recordPayment(second!, payeePayment('P-2', '20.00', 'acct-2'), 'b', 'Second');
      await store.recordPayment('short', payeePayment('P-3', '30.00', 'acct-3'), 'b', 'Short');
      // The same key in another scope is another payee.
      await elsewhere.recordPayment(first!, payeePayment('X-1', '99.00', 'acct-9'), 'b', 'Elsewhere');
      await store.recordPayment(second!, payeePayment('P-4', '21.00', 'acct-2'), 'b', 'Second');
      const rows = raw.prepare('SELECT id, scope_id, payee FROM payee_history ORDER BY id').all() as {
        id: number;
        scope_id: number;
        payee: string;
      }[];
      expect(rows[0]).toEqual({ id: historyRowId(first!), scope_id: store.scope.id, payee: first });
      expect(rows).toHaveLength(4);

      const held = await store.payeeHistory([unpaid!, second!, 'short', first!, 'never']);
      expect([...held.keys()].sort()).toEqual([first, second, 'short'].sort());
      expect(held.get(first!)!.name).toBe('First');
      expect(held.get(second!)!.accounts.map((paid) => paid.reference)).toEqual(['P-4']);
      expect(held.get(second!)!.payments!.map((paid) => paid.reference)).toEqual(['P-4', 'P-2']);
      expect(held.get('short')!.name).toBe('Short');
      const there = await elsewhere.payeeHistory([first!, second!]);
      expect([...there.keys()]).toEqual([first]);
      expect(there.get(first!)!.name).toBe('Elsewhere');
      // A read-only connection finds them alike.
      const reader = openRegister(file, { readonly: true });
      try {
        const read = await (await reader.scopeStore(store.scope)).payeeHistory([second!, first!]);
        expect(read.get(second!)).toEqual(held.get(second!));
      } finally {
        await reader.close();
      }
    } finally {
      raw.close();
      await register.close();
    }
  });

  it('gives the histories of an older register their row ids, those whose id another took first found by their key', async () => {
    const { file, raw, before } = await olderRegister((migration) =>
      migration.includes('payee_history_by_id'),
    );
    const history = (name: string) =>
      JSON.stringify({
        accounts: [],
        payments: [{ reference: name, paidAt: '2026-10-25T10:00:00.000Z', amount: '1.00', currency: 'USD' }],
        largest: { USD: '1.00' },
        batch: 'october',
        name,
      });
    const payees = [
      `AbCdEfGh${'a'.repeat(24)}`,
      `AbCdEfGh${'b'.repeat(24)}`,
      `ZyXwVuTs${'c'.repeat(24)}`,
      'short',
    ];
    const insert = raw.prepare(
      "INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (1, ?, ?, '2026-10-25T10:00:00Z')",
    );
    for (const [i, payee] of payees.entries()) insert.run(payee, history(`N-${i}`));

    // Read-only, the register stays at its version, and its histories are found by their keys.
    const reader = openRegister(file, { readonly: true });
    try {
      const read = await (await reader.scopeStore((await reader.scopes())[0]!)).payeeHistory(payees);
      expect(payees.map((payee) => read.get(payee)?.name)).toEqual(['N-0', 'N-1', 'N-2', 'N-3']);
      expect(raw.pragma('user_version')).toEqual([{ user_version: before }]);
    } finally {
      await reader.close();
    }

    const register = openRegister(file);
    try {
      const store = await register.openScope(scope);
      expect(raw.pragma('user_version')).toEqual([{ user_version: SCHEMA_VERSION }]);
      const held = await store.payeeHistory([...payees, `AbCdEfGh${'d'.repeat(24)}`]);
      expect(payees.map((payee) => held.get(payee)?.name)).toEqual(['N-0', 'N-1', 'N-2', 'N-3']);
      expect(held.size).toBe(4);
      const ids = raw.prepare('SELECT payee, id FROM payee_history').all() as { payee: string; id: number }[];
      const idOf = new Map(ids.map((row) => [row.payee, row.id]));
      // One of the two alike has the shared id; the other, and the short key, ids SQLite chose.
      expect([idOf.get(payees[0]!), idOf.get(payees[1]!)]).toContain(historyRowId(payees[0]!));
      expect(idOf.get(payees[2]!)).toBe(historyRowId(payees[2]!));
      expect(new Set(idOf.values()).size).toBe(4);

      // A payouts from before, still running, writes a history without its id: it moves there.
      const late = `LaTeOnE0${'e'.repeat(24)}`;
      const writer = new Database(file);
      writer
        .prepare(
          "INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (1, ?, ?, '2026-10-26T10:00:00Z')",
        )
        .run(late, history('N-late'));
      writer.close();
      expect(raw.prepare('SELECT id FROM payee_history WHERE payee = ?').get(late)).toMatchObject({
        id: historyRowId(late),
      });
      expect((await store.payeeHistory([late])).get(late)?.name).toBe('N-late');
    } finally {
      await register.close();
      raw.close();
    }
  });

  it('writes a payout that is both a payday and its account’s last once, and leaves histories written before as they are until they change', async () => {
    // The register as the version before the shorter histories left it, with one payee paid once.
    const { file, raw } = await olderRegister((migration) => migration.trim() === 'SELECT 1');
    const october = payeePayment('OCT-1', '2500.00', 'acct-1');
    const whole = JSON.stringify({
      accounts: [october],
      payments: [
        {
          reference: 'OCT-1',
          paidAt: october.paidAt,
          amount: '2500.00',
          currency: 'USD',
          accountTag: 'acct-1',
        },
      ],
      largest: { USD: '2500.00' },
      batch: 'october',
      name: 'Ana Lopez',
    });
    raw
      .prepare(
        "INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (1, 'payee-a', ?, '2026-10-25T10:00:00Z')",
      )
      .run(whole);
    const stored = () =>
      (raw.prepare("SELECT history FROM payee_history WHERE payee = 'payee-a'").get() as { history: string })
        .history;

    const register = openRegister(file);
    try {
      const store = await register.openScope(scope);
      expect(raw.pragma('user_version')).toEqual([{ user_version: SCHEMA_VERSION }]);
      expect(stored()).toBe(whole);
      const november = { ...payeePayment('NOV-1', '2500.00', 'acct-2'), paidAt: '2026-11-25T10:00:00.000Z' };
      await store.recordPayment('payee-a', november, 'november', 'Ana Lopez');
      const now = JSON.parse(stored());
      expect(now.accounts).toEqual([november, october]);
      expect(now.paydays).toEqual([0, 1]);
      expect(now.before.paydays).toEqual([0]);
      const read = (await store.payeeHistory(['payee-a'])).get('payee-a')!;
      expect(read.payments).toEqual([november, october]);
    } finally {
      await register.close();
      raw.close();
    }
  });

  it('times leases by an injected clock when one is given: expired past the lease, never before', async () => {
    let now = Date.parse('2026-11-25T12:00:00Z');
    const clock = { now: () => now };
    const register = openRegister(path.join(await testDir(), 'register.db'), {
      clock,
      leaseMs: 60_000,
      create: true,
    });
    try {
      const holder: Self = { runId: 'holder', host: 'h', pid: 1 };
      const store = await begin(register, holder);
      await claimIn(register, holder, ['C-1']);
      const other: Self = { runId: 'other', host: 'h', pid: 2 };
      await begin(register, other);
      now += 59_000;
      expect((await claimIn(register, other, ['C-1'])).kinds.get('C-1')).toBe('busy');
      // A heartbeat renews it from the clock's now.
      await store.heartbeat('holder');
      now += 59_000;
      expect((await claimIn(register, other, ['C-1'])).kinds.get('C-1')).toBe('busy');
      now += 1_000;
      expect((await claimIn(register, other, ['C-1'])).kinds.get('C-1')).toBe('send');
      expect((await store.runs(5)).find((r) => r.id === 'holder')).toMatchObject({
        leaseExpired: true,
        leaseExpiresAt: '2026-11-25T12:01:59.000Z',
      });
    } finally {
      await register.close();
    }
  });

  it('says what is wrong with a directory it cannot create, in words (exit 2)', async () => {
    const dir = await testDir();
    const blocked = path.join(dir, 'a-file');
    await writeFile(blocked, 'x');
    expect(() => openRegister(path.join(blocked, 'register.db'), { create: true })).toThrow(
      `the register ${path.join(blocked, 'register.db')} cannot be created: a part of the path is not a directory (ENOTDIR)`,
    );
  });

  it('waits 15 s on its clock for a lock another process keeps while opening, then says it is locked', async () => {
    const file = path.join(await testDir(), 'register.db');
    await openRegister(file, { create: true }).close();
    const holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    const clock = fakeOutageClock();
    try {
      const error = await openSqliteRegisterWaiting(file, { outageClock: clock }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RegisterError);
      expect((error as RegisterError).errno).toBe('SQLITE_BUSY');
      // Asynchronous pauses as an open register's operations wait (outage.ts), for 15 s in all.
      expect(clock.waits.slice(0, 3)).toEqual([15, 30, 60]);
      expect(clock.timers.elapsed()).toBeGreaterThanOrEqual(15_000);
      expect(clock.timers.elapsed()).toBeLessThan(16_000);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    // Let go of, it opens at once.
    await (await openSqliteRegisterWaiting(file, { outageClock: clock })).close();
  });
});
