/**
 * An SQLite register locked by another process mid-run (docs/register.md "When the register
 * fails"): the lock is waited through off the event loop (a short busy timeout, then
 * asynchronous retries), so a lock shorter than --max-outage costs only time, a longer one ends
 * the run with exit 6 and true results, and a stop meanwhile ends it within 10 s. Opening waits
 * the same way, so a stop while the register is locked before it opened ends the run too.
 */
import { readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { openSqliteRegister } from '../../src/register/sqlite.js';
import {
  type ChildExit,
  expectOnePaymentPerRow,
  paymentsOf,
  SANDBOX_ENV,
  sleep,
  spawnCli,
  testDir,
  testSandbox,
  whenPaid,
} from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { generateRows, readCsv, type SheetRow, writeSheet } from '../helpers/sheets.js';

async function setup(count: number, prefix: string) {
  const sb = await testSandbox({ latencyMs: 15 });
  const dir = await testDir();
  const sheet = path.join(dir, `${prefix.toLowerCase()}.csv`);
  const rows = generateRows(count, { prefix });
  await writeSheet(sheet, rows);
  return {
    sb,
    sheet,
    rows,
    out: path.join(dir, 'results.csv'),
    register: initTestRegister(path.join(dir, 'register.db')),
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function start(s: Setup, args: readonly string[] = []) {
  return spawnCli(
    ['run', s.sheet, '--base-url', s.sb.url, '--out', s.out, '--json', '--concurrency', '4', ...args],
    { ...SANDBOX_ENV, PAYOUTS_REGISTER: s.register },
  );
}

/** Whether process `pid` has `file` open (its /proc/PID/fd links). */
async function holdsOpen(pid: number, file: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const fd of fds) {
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === file) return true;
  }
  return false;
}

/** Takes the register's write lock in this process (another process than the run's) until released. */
function lock(register: string): () => void {
  const holder = new Database(register);
  holder.pragma('busy_timeout = 10000');
  holder.exec('BEGIN EXCLUSIVE');
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    holder.exec('ROLLBACK');
    holder.close();
  };
  onTestFinished(release);
  return release;
}

/** Results true to the ledger: paid rows submitted (with their id) or unknown, unpaid rows never submitted. */
async function expectTrueResults(s: Setup, exit: ChildExit): Promise<SheetRow[]> {
  const results = await readCsv(s.out);
  expect(results).toHaveLength(s.rows.length);
  const ledger = new Map(paymentsOf(s.sb).map((t) => [t.reference, t]));
  for (const row of results) {
    const payment = ledger.get(row['reference']!);
    if (payment === undefined) expect(row['result.status'], row['reference']).not.toBe('submitted');
    else {
      expect(['submitted', 'unknown']).toContain(row['result.status']);
      if (row['result.status'] === 'submitted') expect(row['result.transactionId']).toBe(payment.id);
    }
  }
  // The JSON summary is printed as for any run that ended early, naming the results file.
  const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as { results: string; exitCode: number };
  expect(summary).toMatchObject({ results: s.out, exitCode: exit.code });
  return results;
}

describe('payouts run with an SQLite register another process locks', () => {
  it('waits through a lock another process holds for a while: exit 0, each paid once', {
    timeout: 60_000,
  }, async () => {
    const s = await setup(80, 'SHORT');
    const child = start(s);
    await whenPaid(s.sb, child, 10);
    const release = lock(s.register);
    // Released once the run has met the lock and said so: the event, not a guessed time.
    expect(await child.whenLines('it is locked by another process', 1)).toBe(true);
    release();
    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(s.sb, s.rows);
    expect(exit.stderr).toMatch(/the register does not answer \(it is locked by another process/);
  });

  it('ends with exit 6 within --max-outage 4 plus the deadline when the lock stays', {
    timeout: 60_000,
  }, async () => {
    const s = await setup(120, 'HELD');
    const child = start(s, ['--max-outage', '4']);
    await whenPaid(s.sb, child, 10);
    lock(s.register);
    const lockedAt = Date.now();
    const exit = await child.exited;
    // 4 s of outage, a deadline of 2 s, and the time to write the results.
    expect(Date.now() - lockedAt).toBeLessThan(9_000);
    expect(exit.code, exit.stderr).toBe(EXIT.unavailable);
    await expectTrueResults(s, exit);
  });

  it('ends with exit 5 within 10 s of SIGTERM while the lock is held, results written', {
    timeout: 60_000,
  }, async () => {
    const s = await setup(120, 'SIG');
    const child = start(s);
    await whenPaid(s.sb, child, 10);
    lock(s.register);
    // Stopped once the run waits on the lock, which it says.
    expect(await child.whenLines('it is locked by another process', 1)).toBe(true);
    const stoppedAt = Date.now();
    child.child.kill('SIGTERM');
    const exit = await child.exited;
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(exit.code, exit.stderr).toBe(EXIT.interrupted);
    await expectTrueResults(s, exit);
  });

  it('ends with exit 5 within seconds of SIGTERM while the lock keeps it from opening, nothing sent', {
    timeout: 60_000,
  }, async () => {
    const s = await setup(20, 'OPEN');
    // The register exists, and another process holds its write lock before the run starts.
    const created = openSqliteRegister(s.register);
    await created.openScope({ service: 'http://127.0.0.1:9', integratorId: 'x' });
    await created.close();
    lock(s.register);
    const child = start(s);
    // Stopped once it waits on the lock: the register file is among its open files (Linux).
    await expect
      .poll(() => holdsOpen(child.child.pid!, s.register), { timeout: 20_000, interval: 20 })
      .toBe(true);
    await sleep(200);
    const stoppedAt = Date.now();
    child.child.kill('SIGTERM');
    const exit = await child.exited;
    const took = Date.now() - stoppedAt;
    expect(took).toBeLessThan(10_000);
    expect(exit.code, exit.stderr).toBe(EXIT.interrupted);
    // The stop met the wait for the lock, not a later step.
    expect(exit.stderr).toContain(
      `stopped while the register ${s.register} was locked by another process, before anything was sent`,
    );
    expect(paymentsOf(s.sb)).toEqual([]);
    expect(s.sb.ledger().requests.total).toBe(0);
    const results = await readCsv(s.out);
    expect(results).toHaveLength(s.rows.length);
    expect(new Set(results.map((r) => r['result.status']))).toEqual(new Set(['skipped']));
    const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as {
      results: string;
      exitCode: number;
    };
    expect(summary).toMatchObject({ results: s.out, exitCode: EXIT.interrupted });
  });
});
