/**
 * The SQLite register: scopes, claims between two "processes" (two connections to one file),
 * abandoned claims, payees, migrations and its errors (issue 7, items 1, 3, 6 and 9).
 */
import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { RegisterError } from '../../src/errors.js';
import type { PayoutDetails } from '../../src/register/details.js';
import { holderAlive, markLive, type Self } from '../../src/register/owner.js';
import { openRegister } from '../../src/register/sqlite.js';
import type { ClaimRequest, Register } from '../../src/register/types.js';
import { registerVerdict } from '../../src/register/verdict.js';
import { testDir } from '../helpers/payouts.js';

const scope = { service: 'https://api.pay.example', integratorId: 'int-1' };

function request(reference: string, amount = '10.00'): ClaimRequest {
  const details: PayoutDetails = {
    amount,
    currency: 'USD',
    rail: 'ACH',
    payee: 'p',
    payeeHint: 'account ****1234',
  };
  return { reference, details, idempotencyKey: `key-${reference}` };
}

/** Claims for `self` the way `run` does: the register's verdict decides. */
async function claimAs(
  register: Register,
  self: Self,
  references: string[],
  alive = (_pid: number) => true,
  retryUnknown = false,
) {
  const store = await register.openScope(scope);
  const kinds = new Map<string, string>();
  await store.claim(
    self.runId,
    references.map((r) => request(r)),
    (req, record) => {
      const verdict = registerVerdict(record, req.details, {
        holderAlive: holderAlive(record?.run, self, Date.now(), { leaseMs: 60_000 }, alive),
        retryUnknown,
      });
      kinds.set(req.reference, verdict.kind);
      if (verdict.kind === 'send' || verdict.kind === 'resend') return 'claim';
      return verdict.kind === 'unknown' && record?.state === 'sending' ? 'mark-unknown' : 'leave';
    },
  );
  return { store, kinds };
}

async function begin(register: Register, self: Self) {
  const store = await register.openScope(scope);
  const now = new Date().toISOString();
  await store.beginRun({
    id: self.runId,
    sheet: `${self.runId}.csv`,
    digest: 'd',
    host: self.host,
    pid: self.pid,
    startedAt: now,
  });
  return store;
}

describe('the SQLite register', () => {
  it('is created private (0600) in a new directory, with its scope secret, and opened again by another connection', async () => {
    const file = path.join(await testDir(), 'state', 'payouts', 'register.db');
    const a = openRegister(file);
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

  it('hands each reference to one run: two runs claiming overlapping references at once', async () => {
    const file = path.join(await testDir(), 'register.db');
    const one = openRegister(file);
    const two = openRegister(file);
    const first: Self = { runId: 'run-1', host: 'h', pid: 101 };
    const second: Self = { runId: 'run-2', host: 'h', pid: 102 };
    try {
      await begin(one, first);
      await begin(two, second);
      const [a, b] = await Promise.all([
        claimAs(one, first, ['R1', 'R2', 'R3']),
        claimAs(two, second, ['R2', 'R3', 'R4']),
      ]);
      const winners = new Map<string, string[]>();
      for (const [who, claimed] of [
        ['run-1', a.kinds],
        ['run-2', b.kinds],
      ] as const) {
        for (const [reference, kind] of claimed) {
          if (kind === 'send') winners.set(reference, [...(winners.get(reference) ?? []), who]);
          else expect(kind).toBe('busy');
        }
      }
      expect([...winners].sort()).toEqual([
        ['R1', ['run-1']],
        ['R2', [expect.any(String)]],
        ['R3', [expect.any(String)]],
        ['R4', ['run-2']],
      ]);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('takes over the claims of a dead run, and marks its abandoned sends unknown', async () => {
    const file = path.join(await testDir(), 'register.db');
    const register = openRegister(file);
    try {
      const dead: Self = { runId: 'dead', host: 'h', pid: 201 };
      const store = await begin(register, dead);
      await claimAs(register, dead, ['CLAIMED', 'SENDING']);
      await store.update('dead', 'SENDING', { state: 'sending', simulationId: 'sim-1' });

      const next: Self = { runId: 'next', host: 'h', pid: 202 };
      await begin(register, next);
      const pidIsDead = (pid: number) => pid !== 201;
      const { kinds } = await claimAs(register, next, ['CLAIMED', 'SENDING'], pidIsDead);
      expect(Object.fromEntries(kinds)).toEqual({ CLAIMED: 'send', SENDING: 'unknown' });
      const records = await store.lookup(['CLAIMED', 'SENDING']);
      expect(records.get('CLAIMED')).toMatchObject({ state: 'claimed', runId: 'next' });
      expect(records.get('SENDING')).toMatchObject({
        state: 'unknown',
        runId: 'dead',
        simulationId: 'sim-1',
        error: 'the run of dead.csv stopped while this transaction request was being sent',
      });

      // --retry-unknown takes it over, still in doubt: should that run die before its request,
      // the next one must see a payout that may have been paid, not a fresh claim.
      const retrying: Self = { runId: 'retrying', host: 'h', pid: 203 };
      await begin(register, retrying);
      const resend = await claimAs(register, retrying, ['SENDING'], pidIsDead, true);
      expect(resend.kinds.get('SENDING')).toBe('resend');
      expect((await store.lookup(['SENDING'])).get('SENDING')).toMatchObject({
        state: 'sending',
        runId: 'retrying',
        simulationId: 'sim-1',
      });
      const after: Self = { runId: 'after', host: 'h', pid: 204 };
      await begin(register, after);
      const { kinds: afterKinds } = await claimAs(register, after, ['SENDING'], (pid) => pid === 204);
      expect(afterKinds.get('SENDING')).toBe('unknown');
    } finally {
      await register.close();
    }
  });

  it('counts a run of this process alive only while it is marked live (a container restarted as pid 1)', () => {
    const self: Self = { runId: 'me', host: 'h', pid: 1 };
    const now = Date.now();
    const earlier = {
      id: 'before-restart',
      sheet: 's',
      digest: 'd',
      host: 'h',
      pid: 1,
      startedAt: '',
      heartbeatAt: new Date(now).toISOString(),
    };
    expect(holderAlive(earlier, self, now)).toBe(false);
    markLive('before-restart', true);
    expect(holderAlive(earlier, self, now)).toBe(true);
    markLive('before-restart', false);
    // Another host: only the heartbeat tells.
    const remote = { ...earlier, host: 'elsewhere', pid: 7 };
    expect(holderAlive(remote, self, now)).toBe(true);
    expect(holderAlive(remote, self, now + 61_000)).toBe(false);
    expect(holderAlive({ ...remote, finishedAt: new Date(now).toISOString() }, self, now)).toBe(false);
  });

  it('remembers payees per scope and releases bare claims of a run that sent nothing', async () => {
    const register = openRegister(path.join(await testDir(), 'register.db'));
    try {
      const self: Self = { runId: 'r', host: 'h', pid: 301 };
      const store = await begin(register, self);
      await store.rememberPayee('recipient', 'fp-1', 'rcp_1');
      expect(await store.payee('recipient', 'fp-1')).toBe('rcp_1');
      expect(await store.payee('beneficiary', 'fp-1')).toBeUndefined();
      await claimAs(register, self, ['A', 'B']);
      await store.update('r', 'B', { state: 'refused', error: 'account 123456789012 was refused' });
      await store.release('r');
      const records = await store.lookup(['A', 'B']);
      expect(records.has('A')).toBe(false);
      // Refused stays, to be sent again; the account number in its message is masked.
      expect(records.get('B')).toMatchObject({ state: 'refused', error: 'account ****9012 was refused' });
    } finally {
      await register.close();
    }
  });

  it('looks up references that hold its separators, alike on a read-only connection', async () => {
    const file = path.join(await testDir(), 'register.db');
    const register = openRegister(file);
    const reader = openRegister(file, { readonly: true });
    try {
      const self: Self = { runId: 'r', host: 'h', pid: 401 };
      const store = await begin(register, self);
      // The look-up packs a record's fields with \x1f and its records with \x1e (sqlite.ts):
      // references and messages holding them, and 600 plain ones across two query chunks.
      const odd = ['UNIT\x1fREF', 'RECORD\x1eREF', 'BOTH\x1e\x1f'];
      const plain = Array.from({ length: 600 }, (_, i) => `R-${i}`);
      await claimAs(register, self, [...odd, ...plain]);
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
    await openRegister(newer).close();
    const raw = new Database(newer);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openRegister(newer)).toThrow(
      `the register ${newer} was written by a newer payouts (schema version 99, this payouts knows 1): upgrade payouts to use it`,
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

  it('says what is wrong with a directory it cannot create, in words (exit 2)', async () => {
    const dir = await testDir();
    const blocked = path.join(dir, 'a-file');
    await writeFile(blocked, 'x');
    expect(() => openRegister(path.join(blocked, 'register.db'))).toThrow(
      `the register ${path.join(blocked, 'register.db')} cannot be created: a part of the path is not a directory (ENOTDIR)`,
    );
  });
});
