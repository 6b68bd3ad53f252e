/**
 * A real restart of the PostgreSQL server under a run (docs/register.md "When the register
 * fails"): the server is shut down mid-run (every backend ended, 57P01, then connections
 * refused) and started again on the same port a few seconds later. A restart shorter than
 * --max-outage costs nothing but time: exit 0, every reference paid once, every row `submitted`.
 *
 * The server is one of this file's own, not the suite's shared one: stopping that would fail
 * every other file running at the same time.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { initRegister } from '../../src/register/open.js';
import {
  expectOnePaymentPerRow,
  paymentsOf,
  SANDBOX_ENV,
  spawnCli,
  testDir,
  testSandbox,
  whenPaid,
} from '../helpers/payouts.js';
import { asAdmin } from '../helpers/postgres.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres-server.js';
import { generateRows, readCsv, writeSheet } from '../helpers/sheets.js';

/** How long the server stays down: long enough for every connection to fail, well below --max-outage. */

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
}, 90_000);

afterAll(async () => {
  await server?.remove();
});

describe('payouts run while its PostgreSQL server restarts', () => {
  it('waits through a restart mid-run: exit 0, each reference paid once, every row submitted', {
    timeout: 120_000,
  }, async () => {
    // Latency keeps the run going long enough to meet the restart mid-way.
    const sb = await testSandbox({ latencyMs: 15 });
    await asAdmin(server.url, 'CREATE DATABASE payouts_restart');
    const register = server.url.replace(/\/postgres$/, '/payouts_restart');
    await initRegister(register);
    const dir = await testDir();
    const sheet = path.join(dir, 'restart.csv');
    const out = path.join(dir, 'results.csv');
    const rows = generateRows(80, { prefix: 'RESTART' });
    await writeSheet(sheet, rows);

    const child = spawnCli(
      ['run', sheet, '--base-url', sb.url, '--out', out, '--json', '--concurrency', '4'],
      { ...SANDBOX_ENV, PAYOUTS_REGISTER: register },
    );
    await whenPaid(sb, child, 10);
    const paidBefore = paymentsOf(sb).length;
    try {
      await server.stop();
      // Down until the run has met the outage and said so: the event, not a guessed time.
      expect(await child.whenLines('the register does not answer', 1)).toBe(true);
    } finally {
      await server.start();
    }
    // The restart met the run mid-way: it had not finished while the server was down.
    expect(paidBefore).toBeLessThan(rows.length);
    expect(child.child.exitCode).toBeNull();

    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(sb, rows);
    const results = await readCsv(out);
    expect(results).toHaveLength(rows.length);
    expect(new Set(results.map((r) => r['result.status']))).toEqual(new Set(['submitted']));
    // The outage was said in words, never as a bare code or a stack.
    expect(exit.stderr).toMatch(/the register does not answer \(/);
    expect(exit.stdout + exit.stderr).not.toMatch(/PG_\w{5}|internal error|\n\s+at /);
  });
});
