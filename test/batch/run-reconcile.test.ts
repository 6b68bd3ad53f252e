/**
 * `payouts reconcile` against the sandbox (docs/register.md "Month-end"): the final state of
 * payouts whose webhooks were missed, the transaction each `unknown` payout's reference created
 * after the register was lost, and proof that none exists for one whose request never left. Each
 * case checks the ledger: nothing is ever paid twice.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  paymentsOf,
  runAgainst,
  SANDBOX_ENV,
  spawnCli,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE, readCsv, sampleRows, writeSheet } from '../helpers/sheets.js';

interface Reconciled {
  counts: Record<string, number>;
  totals: Record<string, Record<string, string>>;
  attention: { reference: string; outcome: string; transactionId?: string; message?: string }[];
  exitCode: number;
}

async function statesOf(
  references: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Map<string, { state: string; transactionId?: string; when: string }>> {
  const status = await runCli(['status', ...references, '--json'], { env });
  const { references: found } = JSON.parse(status.stdout) as {
    references: { reference: string; state: string; transactionId?: string; when: string }[];
  };
  return new Map(found.map((r) => [r.reference, r]));
}

const REFERENCES = sampleRows().map((r) => r['reference']!);

/** The sample sheet paid, Hans Weber's payment failing: the sandbox fails a recipient named FAIL... */
async function hansFails() {
  const sb = await testSandbox();
  const dir = await testDir();
  const sheet = path.join(dir, 'november.csv');
  const rows = sampleRows();
  rows[3] = { ...rows[3]!, individualName: 'FAIL Hans Weber' };
  await writeSheet(sheet, rows);
  const paid = await runAgainst(sb, sheet, ['--json', '--rate', '200']);
  expect(paid.code, paid.stderr).toBe(0);
  return { sb, dir, sheet, paid };
}

/**
 * The sample sheet paid, then its volume lost: a new register re-sends each reference under its
 * own key, with a new quote; the service refuses the key, and each payout is unknown there.
 */
async function lostRegister() {
  const sb = await testSandbox();
  const dir = await testDir();
  const sheet = path.join(dir, 'november.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  expect((await runAgainst(sb, sheet, ['--json', '--rate', '200'])).code).toBe(0);
  // A new register, made by whoever set the job up again (payouts register init).
  const fresh = { ...SANDBOX_ENV, PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'new-register.db')) };
  const lost = await runAgainst(sb, sheet, ['--json', '--rate', '200'], fresh);
  expect(lost.code, lost.stderr).toBe(1);
  expect(summaryOf(lost).statuses).toMatchObject({ unknown: 12 });
  await sb.whenIdle();
  return { sb, dir, sheet, fresh };
}

describe('payouts reconcile', () => {
  it('records the final state of payouts whose webhooks were missed, lists the failure, and has nothing left to do after', async () => {
    const { sb, paid } = await hansFails();
    expect(summaryOf(paid).statuses).toMatchObject({ submitted: 12 });
    await sb.whenIdle();
    expect([...(await statesOf(REFERENCES)).values()].every((r) => r.state === 'submitted')).toBe(true);

    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: SANDBOX_ENV });
    expect(settled.code, settled.stderr).toBe(1);
    const report = JSON.parse(settled.stdout) as Reconciled;
    expect(report.counts).toMatchObject({ completed: 11, failed: 1, pending: 0, unknown: 0, absent: 0 });
    expect(report.totals['failed']).toEqual({ USD: '3200.00' });
    expect(report.attention).toEqual([
      {
        reference: 'PAY-2026-11-0004',
        outcome: 'failed',
        amount: '3200.00',
        currency: 'USD',
        transactionId: paymentsOf(sb).find((t) => t.reference === 'PAY-2026-11-0004')!.id,
        message: expect.stringContaining('The receiving bank rejected the payment'),
      },
    ]);
    expect(settled.stderr).toMatch(
      /11 completed - BRL 2,490\.90, COP 3,150,000\.00, MXN 19,200\.00, USD 21,705\.74/,
    );
    expect(settled.stderr).toContain('PAY-2026-11-0004 (failed transaction');

    // status now knows every outcome, the ledger's.
    const states = await statesOf(REFERENCES);
    for (const t of paymentsOf(sb)) {
      expect(states.get(t.reference!)).toMatchObject({
        state: t.status === 'COMPLETED' ? 'completed' : 'failed',
        transactionId: t.id,
      });
    }
    // Nothing is left to ask about.
    const again = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: SANDBOX_ENV });
    expect(again.code, again.stderr).toBe(0);
    const nothing = JSON.parse(again.stdout) as Reconciled & { alreadyFinal?: number };
    expect(Object.values(nothing.counts).every((n) => n === 0)).toBe(true);
    expect(nothing.alreadyFinal).toBe(12);
    expect(again.stderr).toContain('nothing to reconcile: 12 payouts already final');
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('settles every unknown payout of a register that was lost, so nothing is paid twice', async () => {
    const { sb, sheet, fresh } = await lostRegister();
    expect(paymentsOf(sb)).toHaveLength(12);

    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: fresh });
    expect(settled.code, settled.stderr).toBe(0);
    expect((JSON.parse(settled.stdout) as Reconciled).counts).toMatchObject({ completed: 12, unknown: 0 });
    const states = await statesOf(REFERENCES, fresh);
    for (const t of paymentsOf(sb))
      expect(states.get(t.reference!)).toMatchObject({ state: 'completed', transactionId: t.id });

    const rerun = await runAgainst(sb, sheet, ['--json', '--rate', '200'], fresh);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun).statuses).toMatchObject({ skipped: 12 });
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('settles the payouts a register restored from an older copy forgot, so nothing is paid twice', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const restoredAt = path.join(dir, 'restored.db');
    const before = { ...SANDBOX_ENV, PAYOUTS_REGISTER: register };
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: restoredAt };
    const rows = sampleRows();
    // The first half is paid and backed up; the second half is paid after the backup.
    const first = path.join(dir, 'first.csv');
    await writeSheet(first, rows.slice(0, 6));
    expect((await runAgainst(sb, first, ['--json', '--rate', '200'], before)).code).toBe(0);
    const backup = path.join(dir, 'backup.db');
    const copied = await runCli(['register', 'copy', '--from', register, '--to', backup], { env: {} });
    expect(copied.code, copied.stderr).toBe(0);
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, rows);
    const paid = await runAgainst(sb, sheet, ['--json', '--rate', '200'], before);
    expect(summaryOf(paid).statuses).toMatchObject({ skipped: 6, submitted: 6 });
    expect(paymentsOf(sb)).toHaveLength(12);
    await sb.whenIdle();

    // The register is restored from the backup: it knows the first six, not the last six.
    const back = await runCli(['register', 'copy', '--from', backup, '--to', restoredAt], { env: {} });
    expect(back.code, back.stderr).toBe(0);
    const restored = await runAgainst(sb, sheet, ['--json', '--rate', '200'], env);
    expect(restored.code, restored.stderr).toBe(1);
    expect(summaryOf(restored).statuses).toMatchObject({ skipped: 6, unknown: 6 });
    expect(paymentsOf(sb)).toHaveLength(12);

    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env });
    expect(settled.code, settled.stderr).toBe(0);
    // The six it held as submitted and the six in doubt: every one completed.
    expect((JSON.parse(settled.stdout) as Reconciled).counts).toMatchObject({ completed: 12, unknown: 0 });
    const states = await statesOf(REFERENCES, env);
    for (const t of paymentsOf(sb))
      expect(states.get(t.reference!)).toMatchObject({ state: 'completed', transactionId: t.id });
    const rerun = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--retry-unknown'], env);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun).statuses).toMatchObject({ skipped: 12 });
    expect(paymentsOf(sb)).toHaveLength(12);
  });

  it('proves a payout in doubt was never created, and the next run pays it once', async () => {
    const sb = await testSandbox();
    const LOST = 'PAY-2026-11-0005';
    // Every attempt at this row's transaction dies before it reaches the service.
    let drop = true;
    const proxy = await scriptedProxy(sb.url, ({ method, path: url, body }) =>
      drop && method === 'POST' && url === '/v1/transactions' && body.includes(`"reference":"${LOST}"`)
        ? { kind: 'drop' }
        : FORWARD,
    );
    const dir = await testDir();
    const sheet = path.join(dir, 'november.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const first = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(first.code, first.stderr).toBe(1);
    expect(summaryOf(first).statuses).toMatchObject({ submitted: 11, unknown: 1 });
    expect(paymentsOf(sb).filter((t) => t.reference === LOST)).toHaveLength(0);

    drop = false;
    const settled = await runCli(['reconcile', LOST, '--base-url', proxy.url, '--json'], {
      env: SANDBOX_ENV,
    });
    expect(settled.code, settled.stderr).toBe(0);
    const report = JSON.parse(settled.stdout) as Reconciled;
    expect(report.counts).toMatchObject({ absent: 1 });
    expect((await statesOf([LOST])).get(LOST)).toMatchObject({ state: 'refused' });

    // Without --retry-unknown: it is no longer in doubt.
    const rerun = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun).statuses).toMatchObject({ submitted: 1, skipped: 11 });
    expect(paymentsOf(sb).filter((t) => t.reference === LOST)).toHaveLength(1);
    expect(paymentsOf(sb)).toHaveLength(12);
  });
});

describe('payouts reconcile after a run was killed while sending', () => {
  it('asks about the payouts in flight when the run died: one the service made is completed, one it never saw is sent once by the next run', async () => {
    const sb = await testSandbox();
    const MADE = 'PAY-2026-11-0003';
    const NEVER = 'PAY-2026-11-0007';
    // The service makes MADE's transaction and its answer never comes; NEVER's request never
    // reaches it. The run is killed while it waits for both.
    let hold = true;
    const held = new Set<string>();
    let bothHeld: () => void = () => {};
    const whenBothHeld = new Promise<void>((resolve) => (bothHeld = resolve));
    const proxy = await scriptedProxy(sb.url, ({ method, path: url, body }) => {
      if (!hold || method !== 'POST' || url !== '/v1/transactions') return FORWARD;
      for (const reference of [MADE, NEVER]) {
        if (!body.includes(`"reference":"${reference}"`)) continue;
        held.add(reference);
        if (held.size === 2) bothHeld();
        return { kind: 'stall', forwardFirst: reference === MADE };
      }
      return FORWARD;
    });
    const dir = await testDir();
    const sheet = path.join(dir, 'november.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const run = spawnCli(['run', sheet, '--base-url', proxy.url, '--json', '--rate', '200']);
    await whenBothHeld;
    run.child.kill('SIGKILL');
    await run.exited;
    hold = false;
    expect(paymentsOf(sb).filter((t) => t.reference === MADE)).toHaveLength(1);
    expect(paymentsOf(sb).filter((t) => t.reference === NEVER)).toHaveLength(0);

    // In flight when the run died: unknown, whatever the register's own word for it.
    const before = await statesOf([MADE, NEVER], SANDBOX_ENV);
    expect(before.get(MADE)).toMatchObject({ state: 'unknown' });
    expect(before.get(NEVER)).toMatchObject({ state: 'unknown' });

    const settled = await runCli(['reconcile', '--base-url', proxy.url, '--json'], { env: SANDBOX_ENV });
    expect(settled.code, settled.stderr).toBe(0);
    const report = JSON.parse(settled.stdout) as Reconciled;
    expect(report.counts).toMatchObject({ absent: 1, unknown: 0, skipped: 0 });
    expect(report.counts['completed']).toBeGreaterThanOrEqual(1);
    const after = await statesOf([MADE, NEVER], SANDBOX_ENV);
    expect(after.get(MADE)).toMatchObject({
      state: 'completed',
      transactionId: paymentsOf(sb).find((t) => t.reference === MADE)!.id,
    });
    expect(after.get(NEVER)).toMatchObject({ state: 'refused' });

    // The next run, without --retry-unknown, pays NEVER once and MADE not again.
    const rerun = await runAgainst(proxy, sheet, ['--json', '--rate', '200']);
    expect(rerun.code, rerun.stderr).toBe(0);
    const results = new Map((await readCsv(summaryOf(rerun).results)).map((row) => [row['reference'], row]));
    expect(results.get(NEVER)?.['result.status']).toBe('submitted');
    expect(results.get(MADE)?.['result.status']).toBe('skipped');
    for (const reference of REFERENCES)
      expect(paymentsOf(sb).filter((t) => t.reference === reference)).toHaveLength(1);
  });
});

describe('outcomes learnt after the run, in the approver signals of the next month', () => {
  it('payouts left unknown and settled by reconcile are known payees next month', async () => {
    // No payee joins a history while its payout is unknown.
    const { sb, dir, fresh } = await lostRegister();
    const december = path.join(dir, 'december.csv');
    await writeSheet(
      december,
      sampleRows().map((row) => ({ ...row, reference: row['reference']!.replace('2026-11', '2026-12') })),
    );
    const before = JSON.parse(
      (await runCli(['validate', december, '--json', '--base-url', sb.url], { env: fresh })).stdout,
    );
    expect(before.warnings.newPayee).toHaveLength(12);

    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: fresh });
    expect((JSON.parse(settled.stdout) as Reconciled).counts).toMatchObject({ completed: 12 });
    // Each dated when the service created its transaction (the first run), not when found.
    expect(paymentsOf(sb)).toHaveLength(12);
    const states = await statesOf(REFERENCES, fresh);
    for (const t of paymentsOf(sb))
      expect(states.get(t.reference!)?.when).toBe(new Date(t.createdAt).toISOString());
    const after = JSON.parse(
      (await runCli(['validate', december, '--json', '--base-url', sb.url], { env: fresh })).stdout,
    );
    expect(after.warnings.newPayee).toEqual([]);
    expect(after.sincePrevious.batch.sheet).toBe('november.csv');
  });

  it('a transaction that failed leaves its payee unknown: new again next month', async () => {
    const { sb, dir } = await hansFails();
    await sb.whenIdle();
    const december = path.join(dir, 'december.csv');
    await writeSheet(
      december,
      sampleRows().map((row) => ({ ...row, reference: row['reference']!.replace('2026-11', '2026-12') })),
    );
    // Submitted: counted as paid until its outcome is known.
    const submitted = JSON.parse(
      (await runCli(['validate', december, '--json', '--base-url', sb.url], { env: SANDBOX_ENV })).stdout,
    );
    expect(submitted.warnings.newPayee).toEqual([]);

    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: SANDBOX_ENV });
    expect((JSON.parse(settled.stdout) as Reconciled).counts).toMatchObject({ completed: 11, failed: 1 });
    const after = JSON.parse(
      (await runCli(['validate', december, '--json', '--base-url', sb.url], { env: SANDBOX_ENV })).stdout,
    );
    expect(after.warnings.newPayee).toEqual(['PAY-2026-12-0004']);
    const rowsAfter = new Map((await readCsv(after.results)).map((r) => [r['reference'], r]));
    expect(rowsAfter.get('PAY-2026-12-0004')!['result.warnings']).toBe(
      'new payee: the register has no earlier payout to Hans Weber',
    );
  });

  it('a failed payout to an account paid before takes only itself out: the payee and account stay known', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    /** The sample sheet of a month; Hans Weber's row (the 4th) named as given. */
    const month = async (tag: string, hans = 'Hans Weber') => {
      const sheet = path.join(dir, `${tag}.csv`);
      await writeSheet(
        sheet,
        sampleRows().map((row, i) => ({
          ...row,
          reference: row['reference']!.replace('2026-11', tag),
          ...(i === 3 ? { individualName: hans } : {}),
        })),
      );
      return sheet;
    };
    // November pays everyone, settled; December pays Hans Weber's same account again, and that
    // one fails. Reconcile after each month: the November payout is not learnt again after it.
    const settle = async () => {
      await sb.whenIdle();
      const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: SANDBOX_ENV });
      return (JSON.parse(settled.stdout) as Reconciled).counts;
    };
    expect((await runAgainst(sb, await month('2026-11'), ['--json', '--rate', '200'])).code).toBe(0);
    expect(await settle()).toMatchObject({ completed: 12, failed: 0 });
    const december = await runAgainst(sb, await month('2026-12', 'FAIL Hans Weber'), [
      '--json',
      '--rate',
      '200',
    ]);
    expect(december.code, december.stderr).toBe(0);
    expect(await settle()).toMatchObject({ completed: 11, failed: 1 });

    const january = JSON.parse(
      (
        await runCli(['validate', await month('2027-01'), '--json', '--base-url', sb.url], {
          env: SANDBOX_ENV,
        })
      ).stdout,
    );
    expect(january.warnings.newPayee).toEqual([]);
    expect(january.warnings.changedBankDetails).toEqual([]);
    const hans = (await readCsv(january.results)).find((r) => r['reference'] === 'PAY-2027-01-0004')!;
    expect(hans['result.warnings']).not.toMatch(/new payee|bank details changed/);
  });

  it('an older payout reconcile learns last stays behind the newer: a changed account is compared with the last paid', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const ana = async (reference: string, accountNumber: string) => {
      const sheet = path.join(dir, `${reference}.csv`);
      await writeSheet(sheet, [{ ...sampleRows()[0]!, reference, accountNumber }]);
      return sheet;
    };
    // Ana paid to one account, then to another; reconcile, one at a time by reference, learns
    // the newer payout (PAY-A-0002) first and the older one (PAY-Z-0001) after it.
    for (const [reference, account] of [
      ['PAY-Z-0001', '000111222444'],
      ['PAY-A-0002', '000111222333'],
    ] as const) {
      const paid = await runAgainst(sb, await ana(reference, account), ['--json']);
      expect(paid.code, paid.stderr).toBe(0);
    }
    await sb.whenIdle();
    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json', '--concurrency', '1'], {
      env: SANDBOX_ENV,
    });
    expect((JSON.parse(settled.stdout) as Reconciled).counts).toMatchObject({ completed: 2 });

    const third = JSON.parse(
      (
        await runCli(['validate', await ana('PAY-C-0003', '000444555666'), '--json', '--base-url', sb.url], {
          env: SANDBOX_ENV,
        })
      ).stdout,
    );
    expect(third.warnings.changedBankDetails).toEqual(['PAY-C-0003']);
    const [row] = await readCsv(third.results);
    // The possible duplicate (the same amount within days) is compared with the latest payday too.
    expect(row!['result.warnings']).toMatch(
      /^bank details changed: Ana Lopez was last paid to account \*{4}2333 on (\d{4}-\d{2}-\d{2}) \(reference PAY-A-0002\), this row pays account \*{4}5666; possible duplicate: Ana Lopez was paid 2500\.00 USD on \1 under reference PAY-A-0002$/,
    );
  });
});
