/**
 * `payouts register copy` (docs/register.md "Moving and copying"): a team moving its register
 * from SQLite to PostgreSQL (and back) keeps its history: every scope, run, payout, payee and
 * event, idempotently, and a record that conflicts with the target's is refused and listed.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegister } from '../../src/register/open.js';
import type { RegisterEntry } from '../../src/register/types.js';
import { runCli } from '../helpers/cli.js';
import { runAgainst, SANDBOX_ENV, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { testDatabase } from '../helpers/postgres.js';
import { initTestRegister } from '../helpers/register.js';
import { readCsv, writeSheet } from '../helpers/sheets.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

/** Every entry of a register, comparable across stores. */
async function entriesOf(location: string): Promise<RegisterEntry[]> {
  const register = await openRegister(location, { readonly: true });
  try {
    const all: RegisterEntry[] = [];
    for await (const entry of register.entries()) all.push(entry);
    return all;
  } finally {
    await register.close();
  }
}

describe('payouts register copy', () => {
  it('moves a register from SQLite to PostgreSQL and back, record for record, and the copy knows what was paid', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const file = initTestRegister(path.join(dir, 'register.db'));
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, await readCsv(SAMPLE));
    const paid = await runAgainst(sb, sheet, ['--json'], { ...SANDBOX_ENV, PAYOUTS_REGISTER: file });
    expect(paid.code, paid.stderr).toBe(0);
    // A webhook event in the register too.
    const register = await openRegister(file);
    const [scope] = await register.scopes();
    const store = await register.scopeStore(scope!);
    const [payout] = await store.recentPayouts(1);
    await register.recordEvent(
      {
        integratorId: scope!.integratorId,
        resourceId: payout!.transactionId!,
        operation: 'TRANSACTION_COMPLETED',
        success: true,
        message: null,
        occurredAt: '2026-11-25T10:00:00.000',
        receivedAt: '2026-11-25T10:00:01.000Z',
        payload: '{}',
      },
      { transactionId: payout!.transactionId!, state: 'completed', error: null },
    );
    await register.close();

    const url = await testDatabase();
    const copy = await runCli(['register', 'copy', '--from', file, '--to', url, '--json'], { env: {} });
    expect(copy.code, copy.stderr).toBe(0);
    const report = JSON.parse(copy.stdout);
    expect(report.added).toEqual({
      origin: 0,
      scope: 1,
      run: 1,
      payout: 12,
      payee: expect.any(Number),
      history: 7,
      event: 1,
      approval: 0,
      runApproval: 0,
      withdrawal: 0,
      policyProposal: 0,
      policySignature: 0,
      policy: 0,
    });
    expect(report.added.payee).toBeGreaterThanOrEqual(12);
    expect(report.to).not.toContain('payouts-test');
    expect(await entriesOf(url)).toEqual(await entriesOf(file));

    // Again: nothing new, nothing conflicting.
    const again = await runCli(['register', 'copy', '--from', file, '--to', url, '--json'], { env: {} });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      added: {
        origin: 0,
        scope: 0,
        run: 0,
        payout: 0,
        payee: 0,
        history: 0,
        event: 0,
        approval: 0,
        runApproval: 0,
      },
      same: { scope: 1, run: 1, payout: 12, history: 7 },
      conflicts: [],
    });

    // The PostgreSQL copy knows every payout: the same sheet is skipped, nothing is paid again.
    const rerun = await runAgainst(sb, sheet, ['--json'], { ...SANDBOX_ENV, PAYOUTS_REGISTER: url });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun).statuses).toMatchObject({ skipped: 12, submitted: 0 });
    expect(sb.ledger().transactions).toHaveLength(12);

    // And back into a new file: the same records again (the rerun added a run).
    const back = path.join(dir, 'back.db');
    const home = await runCli(['register', 'copy', '--from', url, '--to', back], { env: {} });
    expect(home.code, home.stderr).toBe(0);
    expect(home.stdout).toMatch(/payouts\s+12 added\s+0 already there/);
    expect(await entriesOf(back)).toEqual(await entriesOf(url));
  });

  it('refuses a payout the target holds with other details, lists it, and copies the rest (exit 1)', async () => {
    const dir = await testDir();
    const [a, b] = [path.join(dir, 'a.db'), path.join(dir, 'b.db')];
    const scope = { service: 'https://api.pay.example', integratorId: 'int-1' };
    const seed = async (file: string, amount: string) => {
      const register = await openRegister(file, { create: true });
      const store = await register.openScope(scope);
      await store.beginRun({
        id: `run-${amount}`,
        sheet: 's.csv',
        digest: 'd',
        host: 'h',
        pid: 1,
        startedAt: '2026-11-01T00:00:00.000Z',
      });
      await store.claim(
        `run-${amount}`,
        ['SAME', 'OTHER'].map((reference) => ({
          reference,
          idempotencyKey: `key-${reference}`,
          details: {
            amount: reference === 'SAME' ? '1.00' : amount,
            currency: 'USD',
            rail: 'ACH',
            payee: 'p',
            payeeHint: 'h',
          },
        })),
        () => 'claim',
      );
      await register.close();
    };
    await seed(a, '10.00');
    await seed(b, '20.00');
    // Both were created on their own: their fingerprint secrets differ, which is a conflict too.
    const result = await runCli(['register', 'copy', '--from', a, '--to', b], { env: {} });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'scope https://api.pay.example integrator int-1: the target has its own fingerprint secret',
    );
    expect(result.stdout).toContain(
      'payout "OTHER" of https://api.pay.example integrator int-1: details: {"amount":"10.00"',
    );
    expect(result.stdout).not.toContain('payout "SAME"');
    const held = await entriesOf(b);
    expect(held.find((e) => e.type === 'payout' && e.payout.reference === 'OTHER')).toMatchObject({
      payout: { details: { amount: '20.00' } },
    });
    // The other run was copied.
    expect(held.filter((e) => e.type === 'run').map((e) => (e.type === 'run' ? e.run.id : ''))).toEqual(
      expect.arrayContaining(['run-10.00', 'run-20.00']),
    );
  });

  it('says so when there is nothing to copy (exit 2)', async () => {
    const dir = await testDir();
    const result = await runCli(
      ['register', 'copy', '--from', path.join(dir, 'none.db'), '--to', path.join(dir, 'x.db')],
      {
        env: {},
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`there is no register at ${path.join(dir, 'none.db')} to copy`);
  });
});
