/**
 * A PostgreSQL register that fails mid-run (docs/register.md "When the register fails"): the
 * compiled CLI reaches the suite's PostgreSQL through a TCP fault proxy on 127.0.0.1 that cuts,
 * refuses or stalls its connections, or has its backends terminated. An outage shorter than
 * --max-outage costs nothing but time; a longer one ends the run with exit 6 and a results file
 * true to what was sent; a stop during a stall ends it with exit 5 within 10 s.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { eventually } from '../helpers/eventually.js';
import {
  type ChildExit,
  expectOnePaymentPerRow,
  paymentsOf,
  SANDBOX_ENV,
  spawnCli,
  testDir,
  testSandbox,
  whenPaid,
} from '../helpers/payouts.js';
import { asAdmin, testRegisterDatabase } from '../helpers/postgres.js';
import { generateRows, readCsv, type SheetRow, writeSheet } from '../helpers/sheets.js';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.js';

interface Setup {
  sb: Awaited<ReturnType<typeof testSandbox>>;
  proxy: TcpProxy;
  url: string;
  sheet: string;
  out: string;
  rows: SheetRow[];
}

async function setup(count: number, prefix: string): Promise<Setup> {
  // Latency keeps the run going long enough to meet the fault mid-way.
  const sb = await testSandbox({ latencyMs: 15 });
  const database = await testRegisterDatabase();
  const target = new URL(database);
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
  const dir = await testDir();
  const sheet = path.join(dir, `${prefix.toLowerCase()}.csv`);
  const rows = generateRows(count, { prefix });
  await writeSheet(sheet, rows);
  return { sb, proxy, url: proxy.through(database), sheet, out: path.join(dir, 'results.csv'), rows };
}

function start(s: Setup, args: readonly string[] = []) {
  return spawnCli(
    ['run', s.sheet, '--base-url', s.sb.url, '--out', s.out, '--json', '--concurrency', '4', ...args],
    { ...SANDBOX_ENV, PAYOUTS_REGISTER: s.url },
  );
}

/**
 * The results file is true to what was sent: a reference the ledger paid is `submitted` with its
 * transaction id, or `unknown`; one it did not pay is never `submitted`; "not sent" is said only
 * of rows never sent.
 */
async function expectTrueResults(s: Setup, exit: ChildExit): Promise<SheetRow[]> {
  const results = await readCsv(s.out);
  expect(results).toHaveLength(s.rows.length);
  const ledger = new Map(paymentsOf(s.sb).map((t) => [t.reference, t]));
  for (const row of results) {
    const payment = ledger.get(row['reference']!);
    const status = row['result.status'];
    if (payment !== undefined) {
      expect(['submitted', 'unknown'], `${row['reference']}: ${row['result.errors']}`).toContain(status);
      if (status === 'submitted') expect(row['result.transactionId']).toBe(payment.id);
    } else {
      expect(status, row['reference']).not.toBe('submitted');
    }
    if (/not sent/i.test(row['result.errors'] ?? '')) expect(payment, row['reference']).toBeUndefined();
  }
  expect(exit.stdout + exit.stderr).not.toMatch(/PG_\w{5}|internal error|\n\s+at /);
  // The JSON summary is printed as for any run that ended early, naming the results file.
  const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as { results: string; exitCode: number };
  expect(summary).toMatchObject({ results: s.out, exitCode: exit.code });
  return results;
}

describe('payouts run with a PostgreSQL register that fails', () => {
  it('waits through connections cut and refused mid-run: exit 0, each paid once', {
    timeout: 90_000,
  }, async () => {
    const s = await setup(80, 'CUT');
    const child = start(s);
    await whenPaid(s.sb, child, 10);
    s.proxy.set('refuse');
    // The outage lasts until the run has said so and tried again a few times while refused:
    // the event, not a guessed time.
    expect(await child.whenLines('the register does not answer', 1)).toBe(true);
    await eventually(() => s.proxy.counts().refused >= 3, 30_000);
    s.proxy.set('pass');
    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(s.sb, s.rows);
    const results = await readCsv(s.out);
    expect(new Set(results.map((r) => r['result.status']))).toEqual(new Set(['submitted']));
    expect(exit.stderr).toMatch(/the register does not answer \(/);
  });

  it('finishes when its backends are terminated mid-run: exit 0, each paid once', {
    timeout: 60_000,
  }, async () => {
    const s = await setup(80, 'TERM');
    const child = start(s);
    await whenPaid(s.sb, child, 10);
    const terminated = await asAdmin(
      s.url,
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'payouts' AND pid <> pg_backend_pid()`,
    );
    expect(terminated.rows.length).toBeGreaterThan(0);
    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(s.sb, s.rows);
  });

  it('ends with exit 6 when refused past --max-outage 8, results true; a rerun pays the rest once', {
    timeout: 120_000,
  }, async () => {
    const s = await setup(120, 'LONG');
    const child = start(s, ['--max-outage', '8']);
    await whenPaid(s.sb, child, 10);
    s.proxy.set('refuse');
    const cutAt = Date.now();
    const exit = await child.exited;
    expect(Date.now() - cutAt).toBeLessThan(25_000);
    expect(exit.code, exit.stderr).toBe(EXIT.unavailable);
    expect(exit.stderr).toMatch(
      /stayed unreachable for \d+ s \(the connection was refused|connection to the database broke|reset/,
    );
    await expectTrueResults(s, exit);
    expect(paymentsOf(s.sb).length).toBeLessThan(s.rows.length);

    s.proxy.set('pass');
    const rerun = start(s, ['--retry-unknown']);
    const again = await rerun.exited;
    expect(again.code, again.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(s.sb, s.rows);
  });

  it('ends with exit 6 within 30 s when its connections stall past --max-outage 8', {
    timeout: 90_000,
  }, async () => {
    const s = await setup(120, 'STALL');
    const child = start(s, ['--max-outage', '8']);
    await whenPaid(s.sb, child, 10);
    s.proxy.set('stall');
    const stalledAt = Date.now();
    const exit = await child.exited;
    expect(Date.now() - stalledAt).toBeLessThan(30_000);
    expect(exit.code, exit.stderr).toBe(EXIT.unavailable);
    await expectTrueResults(s, exit);
  });

  it('ends with exit 5 within 10 s of SIGTERM during a stall, results written', {
    timeout: 90_000,
  }, async () => {
    const s = await setup(120, 'STOP');
    const child = start(s);
    await whenPaid(s.sb, child, 10);
    s.proxy.set('stall');
    // Stopped once the stall has held a query past its deadline, which the run says.
    expect(await child.whenLines('the register does not answer', 1)).toBe(true);
    const stoppedAt = Date.now();
    child.child.kill('SIGTERM');
    const exit = await child.exited;
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(exit.code, exit.stderr).toBe(EXIT.interrupted);
    await expectTrueResults(s, exit);
  });
});
