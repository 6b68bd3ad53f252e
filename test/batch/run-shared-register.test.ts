/**
 * Many processes, one register (docs/register.md "Runs, claims and
 * leases"): runs of overlapping sheets and of the same sheet at once, some killed with
 * SIGKILL and resumed, pay every reference exactly once; and a live run keeps its claims against
 * a neighbour that shares its host name and pid (another PID namespace) and whose clock is a day
 * ahead (faketime), on SQLite and on PostgreSQL. Needs `npm run build`, and `unshare` and
 * `faketime` (Debian's util-linux and faketime packages; .ci/run installs them).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegister } from '../../src/register/open.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { ANSWER_LINE, expectNothingPaidTwice } from '../helpers/crash.js';
import {
  type ChildExit,
  expectOnePaymentPerRow,
  paymentsOf,
  type RunSummary,
  SANDBOX_ENV,
  sleep,
  spawnCli,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { testRegisterDatabase } from '../helpers/postgres.js';
import { initTestRegister } from '../helpers/register.js';
import { generateRows, readCsv, writeSheet } from '../helpers/sheets.js';

function summary(exit: ChildExit): RunSummary {
  return JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
}

const runArgs = (sheet: string, url: string, extra: string[] = []) => [
  'run',
  sheet,
  '--base-url',
  url,
  '--json',
  '--log-format',
  'json',
  '--log-level',
  'debug',
  ...extra,
];

describe('slow: eight processes share one PostgreSQL register', { timeout: 240_000 }, () => {
  it('pays every reference of three overlapping sheets exactly once, through SIGKILLs and resumes', async () => {
    const seed = 16_016;
    const sb = await testSandbox({ seed, latencyMs: 2 });
    const dir = await testDir();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: await testRegisterDatabase() };
    const rows = generateRows(400, { prefix: `SHARED${seed}` });
    const sheets = { a: path.join(dir, 'a.csv'), b: path.join(dir, 'b.csv'), c: path.join(dir, 'c.csv') };
    // a: 1-200, b: 101-300, c: 201-400: every reference is in two sheets, 100 in a and b.
    await writeSheet(sheets.a, rows.slice(0, 200));
    await writeSheet(sheets.b, rows.slice(100, 300));
    await writeSheet(sheets.c, rows.slice(200));
    const plan = [sheets.a, sheets.a, sheets.b, sheets.b, sheets.c, sheets.c, sheets.a, sheets.b];
    const extra = (resume: boolean) => [
      '--concurrency',
      '4',
      '--rate',
      '2000',
      ...(resume ? ['--retry-unknown'] : []),
    ];
    const random = mulberry32(seed);

    // Round one: eight at once; four of them killed at seeded moments.
    const runs = plan.map((sheet) => spawnCli(runArgs(sheet, sb.url, extra(false)), env));
    let kills = 0;
    await Promise.all(
      runs.map(async (run, i) => {
        if (i % 2 === 1) return;
        const reached = await run.whenLines(ANSWER_LINE, 1 + Math.floor(random() * 40));
        await sleep(Math.floor(random() * 10));
        if (reached && run.child.exitCode === null && run.child.signalCode === null) {
          run.child.kill('SIGKILL');
          kills += 1;
        }
      }),
    );
    const first = await Promise.all(runs.map((run) => run.exited));
    expectNothingPaidTwice(sb);
    expect(kills).toBeGreaterThanOrEqual(2);
    // Nobody was told its claims were lost: each held them until it died or finished.
    for (const exit of first) expect(exit.stderr).not.toContain('no longer lets this run send');

    // Then all three sheets side by side, with --retry-unknown, until they end clean.
    let last: ChildExit[] = [];
    for (let round = 0; round < 4; round += 1) {
      last = await Promise.all(
        Object.values(sheets).map((sheet) => spawnCli(runArgs(sheet, sb.url, extra(true)), env).exited),
      );
      expectNothingPaidTwice(sb);
      if (last.every((exit) => exit.code === 0 && (summary(exit).statuses?.['unknown'] ?? 0) === 0)) break;
    }
    expect(
      last.map((exit) => exit.code),
      last.map((exit) => exit.stderr.slice(-2000)).join('\n----\n'),
    ).toEqual([0, 0, 0]);
    const payments = await expectOnePaymentPerRow(sb, rows);
    // The last results files show every row paid with the ledger's transaction, or being paid
    // by another of the last runs right then, named.
    for (const exit of last) {
      for (const row of await readCsv(summary(exit).results)) {
        expect(['submitted', 'skipped']).toContain(row['result.status']);
        if (row['result.errors']?.startsWith('not sent: another payouts run is paying this reference')) {
          expect(row['result.errors']).toMatch(/sheet [abc]\.csv, started /);
        } else {
          expect(row['result.transactionId']).toBe(payments.get(row['reference']!)!.id);
        }
      }
    }
  });
});

/** Whether this machine can make PID and UTS namespaces and fake a clock (root, util-linux, faketime). */
function canIsolate(): boolean {
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', '--uts', 'true'], { stdio: 'ignore' });
    execFileSync('faketime', ['-f', '+1d', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs the CLI as pid 1 of a PID namespace of its own, with the host name `twin`, its clock `offset` ahead. */
function isolated(offset?: string): string[] {
  // faketime outside: its library, preloaded, stays with every program down to node, pid 1.
  return [
    ...(offset ? ['faketime', '-f', offset] : []),
    'unshare',
    '--pid',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--uts',
    'sh',
    '-c',
    'hostname twin && exec "$@"',
    'sh',
  ];
}

// CI installs what this needs (.ci/run): there it runs or fails, never skips.
describe.skipIf(!canIsolate() && process.env['CI'] === undefined).each([
  { store: 'SQLite', register: async (dir: string) => initTestRegister(path.join(dir, 'register.db')) },
  { store: 'PostgreSQL', register: async () => testRegisterDatabase() },
])('slow: neighbours on one host, $store register', { timeout: 120_000 }, ({ register }) => {
  it('keeps a live run its claims against a twin (same host name, pid 1) whose clock is a day ahead', async () => {
    const sb = await testSandbox({ seed: 7, latencyMs: 40 });
    const dir = await testDir();
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: await register(dir) };
    // Long enough (about 8 s) that the twin, started under a loaded machine, still meets live claims.
    const rows = generateRows(100, { prefix: 'TWIN' });
    const sheet = path.join(dir, 'twin.csv');
    await writeSheet(sheet, rows);
    const extra = ['--concurrency', '2', '--rate', '1000'];
    const live = spawnCli(runArgs(sheet, sb.url, extra), env, isolated());
    expect(await live.whenLines(ANSWER_LINE, 12)).toBe(true);
    const ahead = spawnCli(runArgs(sheet, sb.url, extra), env, isolated('+1d'));
    const [liveExit, aheadExit] = await Promise.all([live.exited, ahead.exited]);

    // Neither took the other's claims.
    for (const exit of [liveExit, aheadExit]) {
      expect(exit.code, exit.stderr.slice(-2000)).toBe(0);
      expect(exit.stderr).not.toContain('no longer lets this run send');
    }
    // Both ran as pid 1 of host "twin", as the register recorded them.
    const registered = await openRegister(env.PAYOUTS_REGISTER, { readonly: true });
    try {
      const [scope] = await registered.scopes();
      const runs = await (await registered.scopeStore(scope!)).runs(5);
      expect(runs.map((run) => [run.host, run.pid, run.exitCode])).toEqual([
        ['twin', 1, 0],
        ['twin', 1, 0],
      ]);
      expect(new Set(runs.map((run) => run.machine)).size).toBe(2);
    } finally {
      await registered.close();
    }
    expect(paymentsOf(sb)).toHaveLength(rows.length);
    await expectOnePaymentPerRow(sb, rows);
    const results = await readCsv(summary(aheadExit).results);
    const busy = results.filter((row) => row['result.errors']?.startsWith('not sent: another payouts run'));
    for (const row of busy) expect(row['result.errors']).toContain('pid 1 on twin');
    // The twin met claims of the live run, and left them to it.
    expect(busy.length).toBeGreaterThan(0);
  });
});
