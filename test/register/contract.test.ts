/**
 * The register contract (register/types.ts), held against both stores alike: an SQLite file and
 * a real PostgreSQL server started by the test run. Claims go through the same decision `run`
 * makes (verdict.ts claimJudge: the verdict, liveness by lease.ts holderAlive, the decision).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimLostError, RegisterError } from '../../src/errors.js';
import { copyRegister } from '../../src/register/copy.js';
import type { Self } from '../../src/register/lease.js';
import { shownLocation, sourceInWords } from '../../src/register/location.js';
import {
  initRegister,
  type OpenOptions,
  openExistingRegister,
  openRegister,
} from '../../src/register/open.js';
import { paydayTag } from '../../src/register/rules.js';
import type {
  ClaimRequest,
  PayeeHistory,
  PayeeLayer,
  PayeePayday,
  PayeePayment,
  Register,
  RegisterEntry,
  ScopeStore,
} from '../../src/register/types.js';
import { begin, claimAs, payeePayment, request, TEST_SCOPE } from '../helpers/claims.js';
import { asAdmin, testDatabase } from '../helpers/postgres.js';

const scope = TEST_SCOPE;

/**
 * A lease short enough to be waited out, taken only by the tests of expiry. Their steps before it
 * runs out must fit in it on a loaded machine too: 400 ms did not always (a run's own intent to
 * send was refused as lapsed).
 */
const LEASE_MS = 2_000;
/**
 * The lease of every other test: one of 400 ms ran out between two statements of a test on a
 * loaded machine (a claim then found the other run dead, and a run its own claims lost).
 */
const TEST_LEASE_MS = 30_000;

interface Store {
  name: string;
  /** A new, empty register location. */
  fresh(): Promise<string>;
  /** Makes the register at `location` claim a newer schema than this payouts knows. */
  makeNewer(location: string): Promise<void>;
  /** The tables at `location` (none where nothing was created). */
  tables(location: string): Promise<string[]>;
}

/** Folders of the SQLite registers, removed after the file. */
const folders: string[] = [];
afterAll(() => Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true }))));

const stores: Store[] = [
  {
    name: 'SQLite',
    fresh: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'payouts-contract-'));
      folders.push(dir);
      return path.join(dir, 'register.db');
    },
    makeNewer: async (file) => {
      const raw = new Database(file);
      raw.pragma('user_version = 99');
      raw.close();
    },
    tables: async (file) => {
      if (!existsSync(file)) return [];
      const raw = new Database(file, { readonly: true });
      try {
        const rows = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1").all();
        return rows.map((row) => (row as { name: string }).name);
      } finally {
        raw.close();
      }
    },
  },
  {
    name: 'PostgreSQL',
    fresh: () => testDatabase(),
    makeNewer: async (url) => {
      await asAdmin(url, 'UPDATE payouts.schema_version SET version = 99');
    },
    tables: async (url) =>
      (
        await asAdmin(
          url,
          "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
        )
      ).rows.map((row: { name: string }) => row.name),
  },
];

/** A payout as its payee's paydays keep it: reference, date, amount, currency, its account's tag. */
function day({ reference, paidAt, amount, currency, account }: PayeePayment): PayeePayday {
  return { reference, paidAt, amount, currency, accountTag: account.slice(0, 8) };
}

/**
 * A history as the store gave it, each payday on its own: a payday that is also its account's
 * last payout is read back as that payout itself (history-text.ts), which says the same.
 */
function plainHistory(history: PayeeHistory): PayeeHistory {
  const plain = (payday: PayeePayday): PayeePayday => {
    const { reference, paidAt, amount, currency } = payday;
    const tag = paydayTag(payday);
    return { reference, paidAt, amount, currency, ...(tag === undefined ? {} : { accountTag: tag }) };
  };
  const layer = <L extends PayeeLayer>(l: L): L =>
    l.payments === undefined ? l : { ...l, payments: l.payments.map(plain) };
  const { before } = history;
  return before === undefined ? layer(history) : { ...layer(history), before: layer(before) };
}

/** The history of one payee, each payday on its own (plainHistory); undefined when it has none. */
async function heldHistory(store: ScopeStore, payee: string): Promise<PayeeHistory | undefined> {
  const history = (await store.payeeHistory([payee])).get(payee);
  return history === undefined ? undefined : plainHistory(history);
}

/** A run elsewhere: no shared process table, so only its lease tells whether it lives. */
function remote(runId: string): Self {
  return { runId, host: 'same-name', pid: 1 };
}

/** A service's policy records as the register keeps them: a proposal, two signatures, two versions, a withdrawal. */
function policyRecords(service: string) {
  const digest = 'b'.repeat(64);
  const policy = '{"admins":{"from":"admins","require":1}}';
  const proposal = { service, digest, replaces: 0, policy, proposedAt: '2026-11-26T08:00:00.000Z' };
  const signature = (statementDigest: string, fingerprint: string, recordedAt: string) => ({
    statementDigest,
    fingerprint,
    service,
    digest,
    replaces: 0,
    statement: `payouts policy v1\norigin: ${service}\npolicy: ${digest}\nreplaces: 0\n`,
    signature: '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n',
    recordedAt,
  });
  const signatures = [
    signature('p1', 'SHA256:alice', '2026-11-26T08:01:00.000Z'),
    signature('p1', 'SHA256:dave', '2026-11-26T08:02:00.000Z'),
  ];
  const versions = [
    {
      service,
      version: 1,
      digest,
      policy,
      signedBy: ['alice@corp', 'dave@corp'],
      since: '2026-11-26T08:02:00.000Z',
    },
    {
      service,
      version: 2,
      digest: 'd'.repeat(64),
      policy: '{"admins":{"from":"admins","require":2}}',
      signedBy: ['alice@corp'],
      since: '2026-11-27T08:00:00.000Z',
    },
  ];
  const withdrawal = {
    statementDigest: 'w1',
    approvalDigest: 's1',
    fingerprint: 'SHA256:alice',
    origin: service,
    digest: 'e'.repeat(64),
    sheet: 'november.csv',
    statement: `payouts approval revoked v1\ndigest: ${'e'.repeat(64)}\n`,
    signature: '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n',
    recordedAt: '2026-11-26T10:00:00.000Z',
  };
  return { proposal, signatures, versions, withdrawal };
}

/** The policy records and withdrawals among a register's entries, in its export order. */
async function policyEntries(register: Register): Promise<RegisterEntry[]> {
  const kept: RegisterEntry[] = [];
  for await (const entry of register.entries())
    if (['withdrawal', 'policyProposal', 'policySignature', 'policy'].includes(entry.type)) kept.push(entry);
  return kept;
}

describe('register copy of policies and withdrawals', () => {
  it('carries them from SQLite to PostgreSQL and back, and a copy again changes nothing', async () => {
    const [sqliteStore, pgStore] = stores as [Store, Store];
    const first = await openRegister(await sqliteStore.fresh(), { create: true });
    const middle = await openRegister(await pgStore.fresh(), { create: true });
    const last = await openRegister(await sqliteStore.fresh(), { create: true });
    try {
      const { proposal, signatures, versions, withdrawal } = policyRecords('https://copied.pay.example');
      await first.recordPolicyProposal(proposal);
      for (const signature of signatures) await first.recordPolicySignature(signature);
      for (const version of versions) await first.enactPolicy(version);
      await first.recordWithdrawal(withdrawal);
      const original = await policyEntries(first);
      expect(original.map((e) => e.type)).toEqual([
        'withdrawal',
        'policyProposal',
        'policySignature',
        'policySignature',
        'policy',
        'policy',
      ]);

      const there = await copyRegister(first, middle);
      expect(there.conflicts).toEqual([]);
      expect(there.added).toMatchObject({ withdrawal: 1, policyProposal: 1, policySignature: 2, policy: 2 });
      expect(await policyEntries(middle)).toEqual(original);
      expect(await middle.policy(proposal.service)).toEqual(versions[1]);

      const back = await copyRegister(middle, last);
      expect(back.conflicts).toEqual([]);
      expect(await policyEntries(last)).toEqual(original);
      expect(await last.policyHistory(proposal.service)).toEqual(versions);
      expect(await last.policySignatures(proposal)).toEqual(signatures);
      expect(await last.withdrawals({ digest: withdrawal.digest })).toEqual([withdrawal]);

      const again = await copyRegister(middle, last);
      expect(again.added).toMatchObject({ withdrawal: 0, policyProposal: 0, policySignature: 0, policy: 0 });
      expect(again.same).toMatchObject({ withdrawal: 1, policyProposal: 1, policySignature: 2, policy: 2 });

      // Another policy under a version number the target holds is a conflict, never merged.
      const other = await openRegister(await pgStore.fresh(), { create: true });
      try {
        await other.enactPolicy({ ...versions[0]!, digest: 'c'.repeat(64) });
        const clash = await copyRegister(first, other);
        expect(clash.conflicts).toEqual([
          expect.stringMatching(/^policy version 1 of https:\/\/copied\.pay\.example: policy digest/),
        ]);
        // The version the target held stands as it was.
        expect((await other.policyHistory(proposal.service))[0]?.digest).toBe('c'.repeat(64));
      } finally {
        await other.close();
      }
    } finally {
      await Promise.all([first.close(), middle.close(), last.close()]);
    }
  });
});

describe.each(stores)('the $name register', (kind) => {
  let location: string;
  const open = (options: OpenOptions = {}) =>
    openRegister(location, { leaseMs: TEST_LEASE_MS, create: true, ...options });

  beforeAll(async () => {
    location = await kind.fresh();
  });

  it('opens one scope per service and integrator, with one secret, from two connections', async () => {
    const [a, b] = [await open(), await open()];
    try {
      const sa = await a.openScope(scope, 'integrator@example.com');
      const sb = await b.openScope(scope);
      expect(sb.scope.id).toBe(sa.scope.id);
      expect(sb.fingerprint('rail:ACH\naccountNumber:123456789')).toBe(
        sa.fingerprint('rail:ACH\naccountNumber:123456789'),
      );
      expect(sa.fingerprint('x')).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const other = await a.openScope({ ...scope, service: 'http://127.0.0.1:8787' });
      expect(other.scope.id).not.toBe(sa.scope.id);
      expect(other.fingerprint('x')).not.toBe(sa.fingerprint('x'));
      expect((await b.scopes()).find((s) => s.id === sa.scope.id)?.login).toBe('integrator@example.com');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('hands each reference to one run when two claim overlapping references at once', async () => {
    const [one, two] = [await open(), await open()];
    const first = remote('overlap-1');
    const second = remote('overlap-2');
    try {
      const [s1, s2] = [await begin(one, first), await begin(two, second)];
      const [a, b] = await Promise.all([
        claimAs(s1, first, ['O1', 'O2', 'O3']),
        claimAs(s2, second, ['O2', 'O3', 'O4']),
      ]);
      expect(a['O1']).toBe('send');
      expect(b['O4']).toBe('send');
      for (const reference of ['O2', 'O3']) {
        expect([a[reference], b[reference]].sort()).toEqual(['busy', 'send']);
      }
      const records = await s1.lookup(['O1', 'O2', 'O3', 'O4']);
      expect([...records.values()].every((r) => r.state === 'claimed')).toBe(true);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('abandons the claims of a run whose lease expired, whatever its pid, and its sends become unknown', async () => {
    const register = await open({ leaseMs: LEASE_MS });
    try {
      const dead = remote('lease-dead');
      const store = await begin(register, dead);
      await claimAs(store, dead, ['L-CLAIMED', 'L-SENDING']);
      await store.update(dead.runId, 'L-SENDING', { state: 'sending', simulationId: 'sim-1' });

      const next = remote('lease-next');
      await begin(register, next);
      // While the lease lasts, a run with the same host name and pid is alive.
      expect(await claimAs(store, next, ['L-CLAIMED', 'L-SENDING'])).toEqual({
        'L-CLAIMED': 'busy',
        'L-SENDING': 'busy',
      });
      await sleep(LEASE_MS + 150);
      await store.heartbeat(next.runId);
      expect(await claimAs(store, next, ['L-CLAIMED', 'L-SENDING'])).toEqual({
        'L-CLAIMED': 'send',
        'L-SENDING': 'unknown',
      });
      const records = await store.lookup(['L-CLAIMED', 'L-SENDING']);
      expect(records.get('L-CLAIMED')).toMatchObject({ state: 'claimed', runId: 'lease-next' });
      expect(records.get('L-SENDING')).toMatchObject({
        state: 'unknown',
        runId: 'lease-dead',
        simulationId: 'sim-1',
        error: 'the run of lease-dead.csv stopped while this transaction request was being sent',
      });

      // --retry-unknown takes it over still in doubt: were that run to die before its request,
      // the next one must see a payout that may have been paid, not a fresh claim.
      const retrying = remote('lease-retrying');
      await begin(register, retrying);
      expect(await claimAs(store, retrying, ['L-SENDING'], true)).toEqual({ 'L-SENDING': 'resend' });
      expect((await store.lookup(['L-SENDING'])).get('L-SENDING')).toMatchObject({
        state: 'sending',
        runId: 'lease-retrying',
        simulationId: 'sim-1',
      });
      await sleep(LEASE_MS + 150);
      const after = remote('lease-after');
      await begin(register, after);
      expect(await claimAs(store, after, ['L-SENDING'])).toEqual({ 'L-SENDING': 'unknown' });
    } finally {
      await register.close();
    }
  });

  it('fences the writes of a run that lost its claim: no intent to send, but an answer still lands', async () => {
    const register = await open({ leaseMs: LEASE_MS });
    try {
      const slow = remote('fence-slow');
      const store = await begin(register, slow);
      await claimAs(store, slow, ['F-1', 'F-2', 'F-3']);
      await store.update(slow.runId, 'F-2', { state: 'sending', simulationId: 'sim-2' });
      await sleep(LEASE_MS + 150);

      // Its lease ran out and nobody took over: the intent to send is refused all the same.
      const lapsed = await store
        .update(slow.runId, 'F-3', { state: 'sending', simulationId: 'x' })
        .catch((e) => e);
      expect(lapsed).toBeInstanceOf(ClaimLostError);
      expect(lapsed.exitCode).toBe(6);
      expect(lapsed.message).toContain("this run's lease ran out");

      const taker = remote('fence-taker');
      await begin(register, taker);
      expect(await claimAs(store, taker, ['F-1', 'F-2'])).toEqual({ 'F-1': 'send', 'F-2': 'unknown' });
      const lost = await store
        .update(slow.runId, 'F-1', { state: 'sending', simulationId: 'sim-1' })
        .catch((e) => e);
      expect(lost).toBeInstanceOf(ClaimLostError);
      expect(lost.message).toMatch(
        /^the register no longer lets this run send payout "F-1": the run of fence-taker\.csv on same-name started .* holds it now/,
      );
      expect((await store.lookup(['F-1'])).get('F-1')).toMatchObject({
        state: 'claimed',
        runId: 'fence-taker',
      });

      // The answer to a request that did leave is the truth about money: it is recorded.
      await store.update(slow.runId, 'F-2', { state: 'submitted', transactionId: 'tx-2', error: null });
      expect((await store.lookup(['F-2'])).get('F-2')).toMatchObject({
        state: 'submitted',
        transactionId: 'tx-2',
      });
    } finally {
      await register.close();
    }
  });

  it('counts the live runs of a scope at each heartbeat, and lists runs with their outcome', async () => {
    const register = await open();
    try {
      const store = await register.openScope({ ...scope, integratorId: 'int-runs' });
      const start = (id: string) =>
        store.beginRun({
          id,
          sheet: `${id}.csv`,
          digest: 'd',
          host: 'h',
          pid: 1,
          startedAt: new Date().toISOString(),
        });
      await start('hb-1');
      await start('hb-2');
      expect(await store.heartbeat('hb-1')).toEqual({ liveRuns: 2 });
      await store.finishRun('hb-2', { rows: 3, statuses: { submitted: 2, failed: 1 }, exitCode: 1 });
      expect(await store.heartbeat('hb-1')).toEqual({ liveRuns: 1 });
      const runs = await store.runs(10);
      expect(runs.find((r) => r.id === 'hb-2')).toMatchObject({
        rows: 3,
        statuses: { submitted: 2, failed: 1 },
        exitCode: 1,
        finishedAt: expect.any(String),
        leaseExpired: false,
      });
      expect(runs.find((r) => r.id === 'hb-1')?.finishedAt).toBeUndefined();
    } finally {
      await register.close();
    }
  });

  it('remembers payees per scope, releases bare claims, keeps refusals (masked), settles and records events once', async () => {
    const register = await open();
    try {
      const self = remote('misc');
      const store = await begin(register, self);
      await store.rememberPayee('recipient', 'fp-1', 'rcp_1');
      await store.rememberPayee('recipient', 'fp-1', 'rcp_2');
      await store.rememberPayee('recipient', 'fp-2', 'rcp_3');
      expect(await store.payees('recipient', ['fp-1', 'fp-2', 'fp-none'])).toEqual(
        new Map([
          ['fp-1', 'rcp_2'],
          ['fp-2', 'rcp_3'],
        ]),
      );
      expect(await store.payees('beneficiary', ['fp-1'])).toEqual(new Map());

      await claimAs(store, self, ['M-A', 'M-B', 'M-C']);
      await store.update(self.runId, 'M-B', { state: 'refused', error: 'account 123456789012 was refused' });
      await store.update(self.runId, 'M-C', {
        state: 'sending',
        simulationId: 'sim-c',
        recipientId: 'rcp_2',
      });
      await store.update(self.runId, 'M-C', { state: 'submitted', transactionId: 'tx-c', error: null });
      await store.release(self.runId);
      const records = await store.lookup(['M-A', 'M-B', 'M-C', 'M-NONE']);
      expect(records.has('M-A')).toBe(false);
      expect(records.get('M-B')).toMatchObject({ state: 'refused', error: 'account ****9012 was refused' });
      const paid = records.get('M-C')!;
      expect(paid).toMatchObject({
        reference: 'M-C',
        details: request('M-C').details,
        state: 'submitted',
        idempotencyKey: 'key-M-C',
        recipientId: 'rcp_2',
        simulationId: 'sim-c',
        transactionId: 'tx-c',
        runId: 'misc',
        sheet: 'misc.csv',
        paidAt: expect.any(String),
        run: { id: 'misc', sheet: 'misc.csv', host: 'same-name', pid: 1 },
      });
      expect(Object.keys(paid)).not.toContain('error');
      expect(Object.keys(paid)).not.toContain('beneficiaryId');

      const event = {
        integratorId: scope.integratorId,
        resourceId: 'tx-c',
        operation: 'TRANSACTION_COMPLETED',
        success: true,
        message: null,
        occurredAt: '2026-11-20T10:00:00.000',
        receivedAt: '2026-11-20T10:00:01.000Z',
        payload: '{"operation":"TRANSACTION_COMPLETED","resourceId":"tx-c"}',
      };
      const settles = { transactionId: 'tx-c', state: 'completed' as const, error: null };
      expect(await register.recordEvent(event, settles)).toBe(true);
      expect(await register.recordEvent(event, settles)).toBe(false);
      expect((await store.lookup(['M-C'])).get('M-C')?.state).toBe('completed');
      expect(await store.settledEvents(['tx-c', 'tx-none'])).toEqual(new Map([['tx-c', event]]));
      await store.settle('M-C', 'tx-c', 'failed', 'the bank returned it');
      expect((await store.lookup(['M-C'])).get('M-C')).toMatchObject({
        state: 'failed',
        error: 'the bank returned it',
      });
      expect((await store.recentPayouts(10)).map((r) => r.reference)).toEqual(
        expect.arrayContaining(['M-B', 'M-C']),
      );
    } finally {
      await register.close();
    }
  });

  it('marks unknown, for reconcile, a send whose run died, and leaves a live run its sends and claims', async () => {
    const register = await open({ leaseMs: LEASE_MS });
    try {
      const dead = remote('abandon-dead');
      const store = await begin(register, dead);
      await claimAs(store, dead, ['A-SENDING', 'A-CLAIMED']);
      await store.update(dead.runId, 'A-SENDING', { state: 'sending', simulationId: 'sim-1' });
      const reconciling = remote('abandon-reconcile');
      // While the lease lasts, the run may still be waiting for its answer.
      expect(await store.abandonSend('A-SENDING', reconciling)).toBe(false);
      await sleep(LEASE_MS + 150);
      expect(await store.abandonSend('A-CLAIMED', reconciling)).toBe(false);
      expect(await store.abandonSend('A-NONE', reconciling)).toBe(false);
      expect(await store.abandonSend('A-SENDING', reconciling)).toBe(true);
      expect(await store.abandonSend('A-SENDING', reconciling)).toBe(false);
      const records = await store.lookup(['A-SENDING', 'A-CLAIMED']);
      expect(records.get('A-SENDING')).toMatchObject({
        state: 'unknown',
        runId: 'abandon-dead',
        simulationId: 'sim-1',
        error: 'the run of abandon-dead.csv stopped while this transaction request was being sent',
      });
      expect(records.get('A-CLAIMED')?.state).toBe('claimed');
    } finally {
      await register.close();
    }
  });

  it('lists the payouts to reconcile by state and time, a page at a time, and settles one in doubt once', async () => {
    const register = await open();
    try {
      const self = remote('reconcile');
      const store = await begin(register, self);
      await claimAs(store, self, ['R-SENT', 'R-LOST', 'R-GONE', 'R-DONE', 'R-HELD']);
      await store.update(self.runId, 'R-SENT', { state: 'sending' });
      await store.update(self.runId, 'R-SENT', { state: 'submitted', transactionId: 'tx-sent' });
      for (const reference of ['R-LOST', 'R-GONE']) {
        await store.update(self.runId, reference, { state: 'sending' });
        await store.update(self.runId, reference, { state: 'unknown', error: 'the connection was lost' });
      }
      await store.update(self.runId, 'R-DONE', { state: 'sending' });
      await store.update(self.runId, 'R-DONE', { state: 'submitted', transactionId: 'tx-done' });
      await store.settle('R-DONE', 'tx-done', 'completed');
      await store.update(self.runId, 'R-HELD', { state: 'sending' });

      const states = ['submitted', 'unknown'] as const;
      // Other tests of this file share the register: their references sort before 'R-'.
      const all = await store.payoutsIn({ states, after: 'R-', limit: 10 });
      expect(all.map((p) => p.reference)).toEqual(['R-GONE', 'R-LOST', 'R-SENT']);
      const first = await store.payoutsIn({ states, after: 'R-', limit: 2 });
      const rest = await store.payoutsIn({ states, after: first.at(-1)!.reference, limit: 2 });
      expect([...first, ...rest].map((p) => p.reference)).toEqual(['R-GONE', 'R-LOST', 'R-SENT']);
      expect(
        await store.payoutsIn({ states, after: 'R-', since: '2999-01-01T00:00:00.000Z', limit: 10 }),
      ).toEqual([]);

      expect(await store.resolveUnknown('R-LOST', { transactionId: 'tx-lost', state: 'completed' })).toBe(
        true,
      );
      expect(
        await store.resolveUnknown('R-GONE', { absent: true, reason: 'no transaction for 123456789012' }),
      ).toBe(true);
      // Once settled, never again; and a payout a run holds (sending) is that run's.
      expect(await store.resolveUnknown('R-LOST', { absent: true, reason: 'late' })).toBe(false);
      expect(await store.resolveUnknown('R-HELD', { absent: true, reason: 'held' })).toBe(false);
      const records = await store.lookup(['R-LOST', 'R-GONE', 'R-HELD']);
      expect(records.get('R-LOST')).toMatchObject({
        state: 'completed',
        transactionId: 'tx-lost',
        paidAt: expect.any(String),
      });
      expect(records.get('R-GONE')).toMatchObject({ state: 'refused', error: 'no transaction for ****9012' });
      expect(records.get('R-HELD')?.state).toBe('sending');
      expect((await store.payoutsIn({ states, after: 'R-', limit: 10 })).map((p) => p.reference)).toEqual([
        'R-SENT',
      ]);
    } finally {
      await register.close();
    }
  });

  it("keeps each payee's history: last payout, largest per currency, and what stood before", async () => {
    const [a, b] = [await open(), await open()];
    try {
      // A scope of its own: other tests of this file record payments too, in any order.
      const own = { ...scope, integratorId: `${scope.integratorId}-history` };
      const sa = await a.openScope(own);
      const sb = await b.openScope(own);
      const payment = payeePayment;
      expect(await sa.payeeHistory(['payee-h'])).toEqual(new Map());
      const before = await sa.hasPayeeHistory();
      await sa.recordPayment('payee-h', payment('H-1', '900.00'), 'october');
      // From another connection, one after the other: both count.
      await sb.recordPayment('payee-h', payment('H-2', '120.50', 'acct-2'), 'november');
      await sa.recordPayment('payee-h', payment('H-3', '31.00', 'acct-2', 'MXN'), 'november');
      const history = (await sb.payeeHistory(['payee-h', 'payee-none'])).get('payee-h');
      expect(history && plainHistory(history)).toEqual({
        accounts: [payment('H-3', '31.00', 'acct-2', 'MXN'), payment('H-1', '900.00')],
        // Every payout, to any account, newest first: the payee's rhythm for possibleDuplicate.
        payments: [
          payment('H-3', '31.00', 'acct-2', 'MXN'),
          payment('H-2', '120.50', 'acct-2'),
          payment('H-1', '900.00'),
        ].map(day),
        largest: { USD: '900.00', MXN: '31.00' },
        batch: 'november',
        before: {
          accounts: [payment('H-1', '900.00')],
          payments: [
            {
              reference: 'H-1',
              paidAt: payment('H-1', '900.00').paidAt,
              amount: '900.00',
              currency: 'USD',
              accountTag: 'acct-1',
            },
          ],
          largest: { USD: '900.00' },
        },
      });
      expect((await sb.payeeHistory(['payee-none'])).size).toBe(0);
      expect(await sb.hasPayeeHistory()).toBe(true);
      expect(before).toBe(false);
      expect(await (await a.openScope({ ...own, service: 'https://other.example' })).hasPayeeHistory()).toBe(
        false,
      );
      const entries = [];
      for await (const entry of a.entries())
        if (entry.type === 'history' && entry.integratorId === own.integratorId) entries.push(entry);
      expect(entries).toEqual([
        {
          type: 'history',
          service: own.service,
          integratorId: own.integratorId,
          payee: 'payee-h',
          history,
        },
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('learns outcomes after the run: completed joins the payee history, failed leaves it', async () => {
    const register = await open();
    try {
      const self = remote('learn');
      const store = await begin(register, self);
      await claimAs(store, self, ['L-LATE', 'L-FAIL', 'L-EVENT', 'L-OLD']);
      const payee = (reference: string) => (reference === 'L-FAIL' ? 'payee-fail' : 'payee-late');
      for (const reference of ['L-LATE', 'L-FAIL', 'L-EVENT']) {
        await store.update(self.runId, reference, {
          state: 'sending',
          payeeKey: payee(reference),
          payeeName: reference === 'L-FAIL' ? 'Fay Fail' : 'Lena Late',
        });
      }
      // Cut while sending: unknown, and no history yet; reconcile then finds it completed.
      await store.update(self.runId, 'L-LATE', { state: 'unknown', error: 'the connection was lost' });
      expect((await store.payeeHistory(['payee-late'])).size).toBe(0);
      await store.resolveUnknown('L-LATE', { transactionId: 'tx-late', state: 'completed' });
      const learnt = (await store.payeeHistory(['payee-late'])).get('payee-late');
      expect(learnt).toMatchObject({
        name: 'Lena Late',
        accounts: [{ reference: 'L-LATE', account: 'p', amount: '10.00', currency: 'USD', rail: 'ACH' }],
        payments: [{ reference: 'L-LATE' }],
        largest: { USD: '10.00' },
      });
      expect((await store.lookup(['L-LATE'])).get('L-LATE')).toMatchObject({
        payeeKey: 'payee-late',
        payeeName: 'Lena Late',
      });

      // A webhook settles another payout of the same payee: it joins too.
      await store.update(self.runId, 'L-EVENT', { state: 'submitted', transactionId: 'tx-event' });
      await register.recordEvent(
        {
          integratorId: TEST_SCOPE.integratorId,
          resourceId: 'tx-event',
          operation: 'TRANSACTION_COMPLETED',
          success: true,
          message: null,
          occurredAt: '2026-11-20T10:00:00.000',
          receivedAt: '2026-11-20T10:00:01.000Z',
          payload: '{}',
        },
        { transactionId: 'tx-event', state: 'completed', error: null },
      );
      const both = (await store.payeeHistory(['payee-late'])).get('payee-late')!;
      expect(both.payments!.map((p) => p.reference).sort()).toEqual(['L-EVENT', 'L-LATE']);

      // Recorded when its transaction was created, then returned by the bank: it leaves the history.
      await store.update(self.runId, 'L-FAIL', { state: 'submitted', transactionId: 'tx-fail' });
      await store.recordPayment('payee-fail', payeePayment('L-FAIL', '10.00', 'p'), 'b', 'Fay Fail');
      expect((await store.payeeHistory(['payee-fail'])).get('payee-fail')!.accounts).toHaveLength(1);
      await store.settle('L-FAIL', 'tx-fail', 'failed', 'the bank returned it');
      expect((await store.payeeHistory(['payee-fail'])).get('payee-fail')).toMatchObject({
        accounts: [],
        payments: [],
        largest: {},
        name: 'Fay Fail',
      });

      // A payout recorded before payees were kept with it: its outcome changes no history.
      await store.update(self.runId, 'L-OLD', { state: 'sending' });
      await store.update(self.runId, 'L-OLD', { state: 'submitted', transactionId: 'tx-old' });
      await store.settle('L-OLD', 'tx-old', 'completed');
      expect((await store.lookup(['L-OLD'])).get('L-OLD')?.payeeKey).toBeUndefined();
    } finally {
      await register.close();
    }
  });

  it('keeps payee histories by date: a failed payout takes only its own part, one found late its own date', async () => {
    const register = await open();
    try {
      const store = await register.openScope({ ...scope, integratorId: `${scope.integratorId}-dates` });
      const runId = 'dates';
      await store.beginRun({
        id: runId,
        sheet: 'd.csv',
        digest: 'd',
        host: 'h',
        pid: 1,
        startedAt: '2026-01-01T00:00:00.000Z',
      });
      // Account A (acct-A) and B (acct-B), each payout 10.00 USD by ACH.
      const to = (reference: string, account: string): ClaimRequest => ({
        reference,
        details: {
          ...request(reference).details,
          payee: account,
          payeeHint: `account ****${account.slice(-4)}`,
        },
        idempotencyKey: `key-${reference}`,
      });
      const paid = (reference: string, account: string, paidAt: string): PayeePayment => ({
        account,
        accountHint: `account ****${account.slice(-4)}`,
        reference,
        rail: 'ACH',
        paidAt,
        amount: '10.00',
        currency: 'USD',
      });
      const requests = [
        to('G-1', 'acct-A'),
        to('G-2', 'acct-A'),
        to('H-1', 'acct-A'),
        to('H-2', 'acct-B'),
        to('U-1', 'acct-C'),
        to('U-2', 'acct-C'),
      ];
      await store.claim(runId, requests, () => 'claim');
      for (const { reference } of requests) {
        const payee = reference.startsWith('G') ? 'gus' : reference.startsWith('H') ? 'hal' : 'una';
        await store.heartbeat(runId);
        await store.update(runId, reference, {
          state: 'sending',
          payeeKey: payee,
          payeeName: `Name of ${payee}`,
        });
      }

      // Gus: G-1 paid to A, then G-2 to A too, which the bank returns. A stays known through G-1.
      const g1 = paid('G-1', 'acct-A', '2025-11-02T10:00:00.000Z');
      for (const [payment, batch] of [
        [g1, 'g1'],
        [paid('G-2', 'acct-A', '2025-11-10T10:00:00.000Z'), 'g2'],
      ] as const) {
        await store.update(runId, payment.reference, {
          state: 'submitted',
          transactionId: `tx-${payment.reference}`,
        });
        await store.recordPayment('gus', payment, batch, 'Name of gus');
      }
      await store.settle('G-2', 'tx-G-2', 'failed', 'the bank returned it');
      const g1Layer = { accounts: [g1], payments: [day(g1)], largest: { USD: '10.00' } };
      expect(await heldHistory(store, 'gus')).toEqual({
        ...g1Layer,
        batch: 'g2',
        before: g1Layer,
        name: 'Name of gus',
      });

      // Hal: H-1 to A and H-2 to B both left in doubt; reconcile finds H-2 first, then H-1. Each is
      // dated when the service created its transaction, and the history stays newest first.
      for (const reference of ['H-1', 'H-2'])
        await store.update(runId, reference, { state: 'unknown', error: 'the connection was lost' });
      await store.resolveUnknown('H-2', {
        transactionId: 'tx-H-2',
        state: 'completed',
        createdAt: '2025-12-01T10:00:00Z',
      });
      await store.resolveUnknown('H-1', {
        transactionId: 'tx-H-1',
        state: 'submitted',
        createdAt: '2025-11-02T05:00:00-05:00',
      });
      const found = await store.lookup(['H-1', 'H-2']);
      expect([found.get('H-1')?.paidAt, found.get('H-2')?.paidAt]).toEqual([
        '2025-11-02T10:00:00.000Z',
        '2025-12-01T10:00:00.000Z',
      ]);
      const [h1, h2] = [
        paid('H-1', 'acct-A', '2025-11-02T10:00:00.000Z'),
        paid('H-2', 'acct-B', '2025-12-01T10:00:00.000Z'),
      ];
      expect(await heldHistory(store, 'hal')).toEqual({
        accounts: [h2, h1],
        payments: [day(h2), day(h1)],
        largest: { USD: '10.00' },
        batch: 'learnt',
        name: 'Name of hal',
      });

      // Una: found without a creation time, or with one later than now: dated when the register
      // last heard of the send (when it became unknown), not when reconcile found it.
      for (const reference of ['U-1', 'U-2'])
        await store.update(runId, reference, { state: 'unknown', error: 'the connection was lost' });
      const doubt = await store.lookup(['U-1', 'U-2']);
      await sleep(20);
      await store.resolveUnknown('U-1', { transactionId: 'tx-U-1', state: 'completed' });
      await store.resolveUnknown('U-2', {
        transactionId: 'tx-U-2',
        state: 'completed',
        createdAt: '2999-01-01T00:00:00Z',
      });
      const settled = await store.lookup(['U-1', 'U-2']);
      for (const reference of ['U-1', 'U-2']) {
        expect(settled.get(reference)?.paidAt).toBe(doubt.get(reference)!.updatedAt);
        expect(settled.get(reference)!.updatedAt > doubt.get(reference)!.updatedAt).toBe(true);
      }
      expect((await heldHistory(store, 'una'))!.payments).toEqual([
        day(paid('U-2', 'acct-C', doubt.get('U-2')!.updatedAt)),
        day(paid('U-1', 'acct-C', doubt.get('U-1')!.updatedAt)),
      ]);
    } finally {
      await register.close();
    }
  });

  it('lists the batches paid, latest first, and reads their payouts with payees by reference, a page at a time', async () => {
    const register = await open();
    try {
      const store = await register.openScope({ ...scope, integratorId: 'int-since' });
      const run = async (id: string, digest: string, startedAt: string, paid: Record<string, string>) => {
        await store.beginRun({ id, sheet: `${digest}.csv`, digest, host: 'h', pid: 1, startedAt });
        const self = remote(id);
        await claimAs(store, self, Object.keys(paid));
        for (const [reference, payee] of Object.entries(paid)) {
          await store.update(id, reference, {
            state: 'sending',
            payeeKey: payee,
            payeeName: `Name of ${payee}`,
          });
          await store.update(id, reference, { state: 'submitted', transactionId: `tx-${reference}` });
        }
      };
      // October: a run, then its resumed run (the same digest) that never finished.
      await run('oct-1', 'october', '2026-10-25T09:00:00.000Z', {
        'S-05': 'ana',
        'S-02': 'bo',
        'S-09': 'ana',
      });
      await store.finishRun('oct-1', { rows: 7, statuses: { submitted: 3 }, exitCode: 1 });
      await run('oct-2', 'october', '2026-10-25T10:00:00.000Z', { 'S-01': 'cy', 'S-07': 'bo' });
      await store.settle('S-01', 'tx-S-01', 'completed');
      await store.settle('S-07', 'tx-S-07', 'failed', 'the bank returned it');
      // Neither sent nor with a payee: not what the batch paid anyone.
      await claimAs(store, remote('oct-2'), ['S-03', 'S-04']);
      await store.update('oct-2', 'S-04', { state: 'sending' });
      await store.update('oct-2', 'S-04', { state: 'submitted', transactionId: 'tx-S-04' });
      // While October is the scope's only batch its payouts are walked by reference; once
      // another exists each of its runs is read through the index by run: the same pages.
      const alone: string[][] = [];
      for await (const page of store.batchPayouts('october', 2)) alone.push(page.map((p) => p.reference));
      expect(alone).toEqual([
        ['S-01', 'S-02'],
        ['S-05', 'S-09'],
      ]);
      await run('nov-1', 'november', '2026-11-25T09:00:00.000Z', { 'S-10': 'ana' });
      await store.finishRun('nov-1', { rows: 1, statuses: { submitted: 1 }, exitCode: 0 });

      expect(await store.paidBatches(5)).toEqual([
        { digest: 'november', sheet: 'november.csv', at: '2026-11-25T09:00:00.000Z', rows: 1 },
        // Its latest run never said how many rows it read.
        { digest: 'october', sheet: 'october.csv', at: '2026-10-25T10:00:00.000Z', rows: null },
      ]);
      const pages: string[][] = [];
      for await (const page of store.batchPayouts('october', 2)) pages.push(page.map((p) => p.reference));
      expect(pages).toEqual([
        ['S-01', 'S-02'],
        ['S-05', 'S-09'],
      ]);
      const read: unknown[] = [];
      for (let again = 0; again < 2; again++) {
        for await (const page of store.batchPayouts('october')) read.push(...page);
      }
      const october = [
        { payee: 'cy', name: 'Name of cy', reference: 'S-01', amount: '10.00', currency: 'USD' },
        { payee: 'bo', name: 'Name of bo', reference: 'S-02', amount: '10.00', currency: 'USD' },
        { payee: 'ana', name: 'Name of ana', reference: 'S-05', amount: '10.00', currency: 'USD' },
        { payee: 'ana', name: 'Name of ana', reference: 'S-09', amount: '10.00', currency: 'USD' },
      ];
      // Each iteration reads the batch anew.
      expect(read).toEqual([...october, ...october]);
      for await (const _ of store.batchPayouts('never-paid')) expect.unreachable();

      // Names as a sheet may give them, with the ASCII separators a store may pack pages with,
      // and a payout whose name was never given: read exactly.
      await store.beginRun({
        id: 'dec-1',
        sheet: 'd.csv',
        digest: 'december',
        host: 'h',
        pid: 1,
        startedAt: '2026-12-25T09:00:00.000Z',
      });
      await claimAs(store, remote('dec-1'), ['D-1', 'D-2']);
      await store.update('dec-1', 'D-1', {
        state: 'sending',
        payeeKey: 'ana',
        payeeName: 'Ana\u001fLopez\u001e',
        warnings: '[["possibleDuplicate","possible duplicate: Ana; again"]]',
      });
      await store.update('dec-1', 'D-2', { state: 'sending', payeeKey: 'bo', warnings: '0' });
      for (const reference of ['D-1', 'D-2'])
        await store.update('dec-1', reference, { state: 'submitted', transactionId: `tx-${reference}` });
      const december: unknown[] = [];
      for await (const page of store.batchPayouts('december')) december.push(...page);
      expect(december).toEqual([
        { payee: 'ana', name: 'Ana\u001fLopez\u001e', reference: 'D-1', amount: '10.00', currency: 'USD' },
        { payee: 'bo', name: '', reference: 'D-2', amount: '10.00', currency: 'USD' },
      ]);
      // The warnings each was sent with, as the run wrote them; none kept for a payout without.
      const kept = await store.lookup(['D-1', 'D-2', 'S-01']);
      expect(kept.get('D-1')?.warnings).toBe('[["possibleDuplicate","possible duplicate: Ana; again"]]');
      expect(kept.get('D-2')?.warnings).toBe('0');
      expect(kept.get('S-01')).toBeDefined();
      expect(kept.get('S-01')?.warnings).toBeUndefined();

      // References past U+FFFF, which JavaScript orders before U+FFFD and a store by their
      // bytes after it: pages follow one another in the store's order, none read twice.
      await store.beginRun({
        id: 'jan-1',
        sheet: 'j.csv',
        digest: 'january',
        host: 'h',
        pid: 1,
        startedAt: '2027-01-25T09:00:00.000Z',
      });
      const unusual = ['J-\u{1F600}', 'J-\uFFFD', 'J-z', 'J-a', 'J-\u{1F601}'];
      await claimAs(store, remote('jan-1'), unusual);
      for (const reference of unusual) {
        await store.update('jan-1', reference, { state: 'sending', payeeKey: 'cy' });
        await store.update('jan-1', reference, { state: 'submitted', transactionId: `tx-${reference}` });
      }
      const january: string[][] = [];
      for await (const page of store.batchPayouts('january', 2)) january.push(page.map((p) => p.reference));
      expect(january).toEqual([['J-a', 'J-z'], ['J-\uFFFD', 'J-\u{1F600}'], ['J-\u{1F601}']]);
    } finally {
      await register.close();
    }
  });

  it('counts every payment to one payee made at once from two connections', async () => {
    const [a, b] = [await open(), await open()];
    try {
      const stores = [await a.openScope(scope), await b.openScope(scope)];
      // Eight payments at once, each to its own account, half from each connection: a write
      // that replaced the history without seeing another's payment would drop an account.
      const payments = Array.from({ length: 8 }, (_, i) =>
        payeePayment(`C-${i}`, `${i + 1}.00`, `acct-c${i}`),
      );
      await Promise.all(payments.map((p, i) => stores[i % 2]!.recordPayment('payee-c', p, 'december')));
      const history = (await stores[0]!.payeeHistory(['payee-c'])).get('payee-c');
      expect(history?.accounts.map((p) => p.reference).sort()).toEqual(payments.map((p) => p.reference));
      expect(history?.largest).toEqual({ USD: '8.00' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('remembers what was declared of an origin, and lists it among its entries', async () => {
    const register = await open();
    try {
      const key = { service: 'http://localhost:8787', integratorId: 'int-origin' };
      expect(await register.origin(key)).toBeUndefined();
      await register.declareOrigin(key, { sameAs: 'http://127.0.0.1:8787' });
      expect(await register.origin(key)).toEqual({ sameAs: 'http://127.0.0.1:8787' });
      await register.declareOrigin(key, { separate: true });
      expect(await register.origin(key)).toEqual({ separate: true });
      expect(await register.origin({ ...key, integratorId: 'other' })).toBeUndefined();
      const entries = [];
      for await (const entry of register.entries()) if (entry.type === 'origin') entries.push(entry);
      expect(entries).toEqual([
        { type: 'origin', ...key, declaration: { separate: true }, declaredAt: expect.any(String) },
      ]);
    } finally {
      await register.close();
    }
  });

  it('keeps every signed approval once, finds those of a digest or a sheet, and the approvals a run relied on', async () => {
    const register = await open();
    const copy = await openRegister(await kind.fresh(), { create: true });
    try {
      const approval = (statementDigest: string, fingerprint: string, digest: string, sheet: string) => ({
        statementDigest,
        fingerprint,
        origin: 'https://approvals.pay.example',
        digest,
        sheet,
        statement: `payouts approval v1\ndigest: ${digest}\n`,
        signature: '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n',
        principals: ['alice@example.com'],
        recordedAt: '2026-11-26T09:00:00.000Z',
      });
      const now = approval('s1', 'SHA256:alice', 'd'.repeat(64), 'november.csv');
      const earlier = { ...approval('s0', 'SHA256:bob', 'e'.repeat(64), 'november.csv'), principals: [] };
      const other = approval('s2', 'SHA256:alice', 'f'.repeat(64), 'december.csv');
      expect(await register.recordApproval(now)).toBe(true);
      expect(await register.recordApproval({ ...now, signature: 'another ECDSA signature' })).toBe(false);
      expect(await register.recordApproval(earlier)).toBe(true);
      expect(await register.recordApproval(other)).toBe(true);
      const query = { digest: now.digest };
      expect(await register.approvals(query)).toEqual([now]);
      expect(await register.approvals({ ...query, sheet: 'november.csv' })).toEqual([earlier, now]);
      expect(await register.approvals({ digest: 'a'.repeat(64), sheet: 'october.csv' })).toEqual([]);

      const self = remote('approved-run');
      const store = await begin(register, self);
      const relied = { principal: 'alice@example.com', fingerprint: 'SHA256:alice', statementDigest: 's1' };
      await store.recordRunApprovals(self.runId, [{ ...relied, recordedAt: now.recordedAt }]);
      await store.recordRunApprovals(self.runId, [{ ...relied, recordedAt: now.recordedAt }]);
      expect(await store.runApprovals([self.runId, 'no-such-run'])).toEqual(
        new Map([[self.runId, [{ ...relied, recordedAt: now.recordedAt }]]]),
      );

      // What `register copy` moves: every approval and every run's, into another register.
      const entries = [];
      for await (const entry of register.entries()) entries.push(entry);
      const approvals = entries.filter((e) => e.type === 'approval' || e.type === 'runApproval');
      expect(approvals.filter((e) => e.type === 'approval')).toHaveLength(3);
      expect(await copy.putAll(entries)).toEqual(entries.map(() => undefined));
      expect(await copy.putAll(approvals)).toEqual(approvals);
      expect(await copy.approvals({ ...query, sheet: 'november.csv' })).toEqual([earlier, now]);
      const copied = await copy.scopeStore((await copy.scopes()).find((s) => s.service === scope.service)!);
      expect((await copied.runApprovals([self.runId])).get(self.runId)).toEqual([
        { ...relied, recordedAt: now.recordedAt },
      ]);
    } finally {
      await copy.close();
      await register.close();
    }
  });

  it("keeps a service's policy proposals, their signatures, its versions and withdrawals of approvals", async () => {
    const register = await open();
    try {
      const { proposal, signatures, versions, withdrawal } = policyRecords('https://policy.pay.example');
      expect(await register.policy(proposal.service)).toBeUndefined();
      expect(await register.policyHistory(proposal.service)).toEqual([]);
      expect(await register.recordPolicyProposal(proposal)).toBe(true);
      expect(
        await register.recordPolicyProposal({ ...proposal, proposedAt: '2026-11-27T00:00:00.000Z' }),
      ).toBe(false);
      const which = { service: proposal.service, digest: proposal.digest, replaces: 0 };
      expect(await register.policyProposal(which)).toEqual(proposal);
      expect(await register.policyProposal({ ...which, replaces: 1 })).toBeUndefined();
      for (const signature of signatures) expect(await register.recordPolicySignature(signature)).toBe(true);
      expect(await register.recordPolicySignature({ ...signatures[0]!, signature: 'other bytes' })).toBe(
        false,
      );
      expect(await register.policySignatures(which)).toEqual(signatures);
      expect(await register.policySignatures({ ...which, digest: 'f'.repeat(64) })).toEqual([]);

      // A version is taken once: a second proposal replacing the same version comes too late.
      expect(await register.enactPolicy(versions[0]!)).toBe(true);
      expect(await register.enactPolicy({ ...versions[0]!, digest: 'c'.repeat(64) })).toBe(false);
      expect(await register.enactPolicy(versions[1]!)).toBe(true);
      expect(await register.policy(proposal.service)).toEqual(versions[1]);
      expect(await register.policyHistory(proposal.service)).toEqual(versions);
      expect(await register.policy('https://other.pay.example')).toBeUndefined();

      expect(await register.recordWithdrawal(withdrawal)).toBe(true);
      expect(await register.recordWithdrawal({ ...withdrawal, signature: 'other bytes' })).toBe(false);
      expect(await register.withdrawals({ digest: withdrawal.digest })).toEqual([withdrawal]);
      expect(await register.withdrawals({ digest: 'a'.repeat(64), sheet: withdrawal.sheet })).toEqual([
        withdrawal,
      ]);
      expect(await register.withdrawals({ digest: 'a'.repeat(64), sheet: 'other.csv' })).toEqual([]);
    } finally {
      await register.close();
    }
  });

  it('opens read-only for reading: looks up the same records, and never writes', async () => {
    const writer = await open();
    const reader = await openExistingRegister(location);
    try {
      expect(reader).toBeDefined();
      const self = remote('reader');
      const store = await begin(writer, self);
      const references = Array.from({ length: 1200 }, (_, i) => `RO-${i}`);
      await claimAs(store, self, references);
      const readStore = await reader!.scopeStore(store.scope);
      const [written, read] = [await store.lookup(references), await readStore.lookup(references)];
      expect(read.size).toBe(1200);
      // Whether the (short) test lease has run out is judged at each look-up, a moment apart.
      const timeless = (records: typeof read) =>
        new Map(
          [...records].map(([reference, record]) => [
            reference,
            { ...record, run: record.run ? { ...record.run, leaseExpired: undefined } : record.run },
          ]),
        );
      expect(timeless(read)).toEqual(timeless(written));
      await expect(readStore.rememberPayee('recipient', 'fp', 'id')).rejects.toThrow(/read-only/);
    } finally {
      await reader?.close();
      await writer.close();
    }
  });

  it('creates a register only when asked: a missing one is refused and left missing', async () => {
    const empty = await kind.fresh();
    for (const from of ['flag', 'environment', 'default'] as const) {
      const error = await openRegister(empty, { from }).catch((e) => e);
      expect(error).toBeInstanceOf(RegisterError);
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain(`there is no payouts register at ${shownLocation(empty)}`);
      expect(error.message).toContain(sourceInWords(from));
    }
    expect(await openExistingRegister(empty)).toBeUndefined();
    expect(await kind.tables(empty)).toEqual([]);
    expect(await initRegister(empty)).toEqual({ created: true });
    const tables = await kind.tables(empty);
    expect(tables.length).toBeGreaterThan(5);
    expect(await initRegister(empty)).toEqual({ created: false });
    expect(await kind.tables(empty)).toEqual(tables);
    await (await openRegister(empty)).close();
  });

  it('reads a register that does not exist yet as none, and refuses a newer schema (exit 2)', async () => {
    const empty = await kind.fresh();
    expect(await openExistingRegister(empty)).toBeUndefined();
    await (await openRegister(empty, { create: true })).close();
    await kind.makeNewer(empty);
    const error = await openRegister(empty).catch((e) => e);
    expect(error).toBeInstanceOf(RegisterError);
    expect(error.message).toMatch(
      /was written by a newer payouts \(schema version 99, this payouts knows \d+\): upgrade payouts to use it$/,
    );
    expect(error.exitCode).toBe(2);
    expect((await openExistingRegister(empty).catch((e) => e)).message).toContain('schema version 99');
  });
});
