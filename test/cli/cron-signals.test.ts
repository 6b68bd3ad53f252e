/**
 * Signals for cron (docs/container.md "Signals for cron"), with real processes on 127.0.0.1:
 * Debian's Pushgateway and promtool, a local incoming webhook, the compiled CLI against the
 * sandbox. Every run that read its options pushes and notifies, exit 2 included; a failed run
 * leaves the last success standing and nothing of the run before it; a refused or stalled
 * endpoint is one warning, the same exit code, and at most 5 s more.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { JWT_PATTERN, SANDBOX_ENV, spawnCli, testDir, testSandbox } from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import {
  freePort,
  HAS_PUSHGATEWAY,
  sampleOf,
  testPushgateway,
  testReceiver,
} from '../helpers/pushgateway.js';
import { ACCOUNT_COLUMNS, generateRows, type SheetRow, writeSheet } from '../helpers/sheets.js';

const HAS_PROMTOOL = existsSync('/usr/bin/promtool');
const ROW_STATUSES = ['valid', 'invalid', 'submitted', 'completed', 'failed', 'unknown', 'skipped'];

/** A sheet of `count` generated rows in `dir`, and its rows. */
async function sheetOf(dir: string, name: string, rows: SheetRow[]): Promise<string> {
  const sheet = path.join(dir, name);
  await writeSheet(sheet, rows);
  return sheet;
}

/** The sum per currency of rows' amounts, as decimal text ("12.30"). */
function totalsOf(rows: readonly SheetRow[]): Record<string, number> {
  const cents = new Map<string, bigint>();
  for (const row of rows) {
    const [whole, part = '00'] = row['amount']!.split('.');
    const minor = BigInt(whole!) * 100n + BigInt(part.padEnd(2, '0'));
    cents.set(row['currency']!, (cents.get(row['currency']!) ?? 0n) + minor);
  }
  return Object.fromEntries([...cents].map(([c, m]) => [c, Number(m) / 100]));
}

/** `payouts run` as a child process (JSON logs), and how it ended, with how long it took. */
async function runChild(args: readonly string[], env: NodeJS.ProcessEnv = SANDBOX_ENV) {
  const started = Date.now();
  const exited = await spawnCli(['run', ...args, '--log-format', 'json'], env).exited;
  return { ...exited, ms: Date.now() - started, records: recordsOf(exited.stderr) };
}

function recordsOf(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The warn records of the signals for cron. */
function cronWarnings(records: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return records.filter((r) => r['level'] === 40 && r['cron'] !== undefined);
}

describe.skipIf(!HAS_PUSHGATEWAY)('--push-metrics: the Pushgateway', () => {
  it('holds each run as it ended, and the last success across failed runs', async () => {
    const sb = await testSandbox();
    const gateway = await testPushgateway();
    const hook = await testReceiver();
    const dir = await testDir();
    const origin = new URL(sb.url).origin;
    const push = ['--base-url', sb.url, '--push-metrics', gateway.url, '--notify', hook.url];
    const of = async (name: string, labels: Record<string, string> = {}) =>
      sampleOf(await gateway.metrics(), name, { job: 'payouts', command: 'run', origin, ...labels });

    // A success: every status, the amounts per status and currency, the exit code, the times.
    // Four currencies: USD, MXN, BRL, COP.
    const firstRows = [0, 5, 7, 8].map((i) => generateRows(12, { prefix: 'CRONA', rowsPerPayee: 1 })[i]!);
    const first = await runChild([await sheetOf(dir, 'first.csv', firstRows), ...push]);
    expect(first.code, first.stderr).toBe(0);
    const totals = totalsOf(firstRows);
    expect(Object.keys(totals).sort()).toEqual(['BRL', 'COP', 'MXN', 'USD']);
    for (const status of ROW_STATUSES)
      expect(await of('payouts_rows', { status })).toBe(status === 'submitted' ? 4 : 0);
    for (const [currency, amount] of Object.entries(totals)) {
      expect(await of('payouts_amount', { status: 'submitted', currency })).toBe(amount);
      expect(await of('payouts_amount', { status: 'failed', currency })).toBe(0);
    }
    expect(await of('payouts_exit_code')).toBe(0);
    const duration = (await of('payouts_duration_seconds'))!;
    expect(duration).toBeGreaterThan(0);
    expect(duration * 1000).toBeLessThanOrEqual(first.ms);
    const firstRun = (await of('payouts_last_run_timestamp_seconds'))!;
    expect(Math.abs(firstRun * 1000 - Date.now())).toBeLessThan(60_000);
    expect(await of('payouts_last_success_timestamp_seconds')).toBe(firstRun);

    // A run whose register is missing (exit 2): its code, every row and amount 0, the last
    // success as it was; and it notifies.
    const missing = await runChild(
      [await sheetOf(dir, 'second.csv', generateRows(2, { prefix: 'CRONB' })), ...push],
      {
        ...SANDBOX_ENV,
        PAYOUTS_REGISTER: path.join(dir, 'not-mounted', 'register.db'),
      },
    );
    expect(missing.code, missing.stderr).toBe(2);
    expect(await of('payouts_exit_code')).toBe(2);
    for (const status of ROW_STATUSES) expect(await of('payouts_rows', { status })).toBe(0);
    for (const currency of Object.keys(totals))
      for (const status of ROW_STATUSES) expect(await of('payouts_amount', { status, currency })).toBe(0);
    const failedRun = (await of('payouts_last_run_timestamp_seconds'))!;
    expect(failedRun).toBeGreaterThan(firstRun);
    expect(await of('payouts_last_success_timestamp_seconds')).toBe(firstRun);
    expect(hook.bodies().map((b) => (b as { exitCode: number }).exitCode)).toEqual([0, 2]);

    // A run with an invalid row (exit 1): its rows and amounts only, the last success still.
    const thirdRows = generateRows(2, { prefix: 'CRONC' });
    thirdRows[1]!['amount'] = 'twelve';
    const third = await runChild([await sheetOf(dir, 'third.csv', thirdRows), ...push]);
    expect(third.code, third.stderr).toBe(1);
    expect(await of('payouts_exit_code')).toBe(1);
    expect(await of('payouts_rows', { status: 'invalid' })).toBe(1);
    expect(await of('payouts_rows', { status: 'submitted' })).toBe(1);
    const sent = thirdRows[0]!;
    for (const currency of Object.keys(totals))
      expect(await of('payouts_amount', { status: 'submitted', currency })).toBe(
        currency === sent['currency'] ? Number(sent['amount']) : 0,
      );
    expect(await of('payouts_last_success_timestamp_seconds')).toBe(firstRun);

    // A second success moves the last success on.
    const fourth = await runChild([
      await sheetOf(dir, 'fourth.csv', generateRows(1, { prefix: 'CROND' })),
      ...push,
    ]);
    expect(fourth.code, fourth.stderr).toBe(0);
    const secondSuccess = (await of('payouts_last_success_timestamp_seconds'))!;
    expect(secondSuccess).toBeGreaterThan(failedRun);
    expect(secondSuccess).toBe(await of('payouts_last_run_timestamp_seconds'));
    expect(await of('payouts_exit_code')).toBe(0);
    expect(hook.requests()).toHaveLength(4);
  }, 120_000);
});

describe.skipIf(!HAS_PROMTOOL)('--metrics-file', () => {
  /** What `promtool check metrics` says of a file, read from its standard input. */
  function promtoolSays(text: string): string {
    try {
      return execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      return `${failed.stdout ?? ''}${failed.stderr ?? ''}` || String(error);
    }
  }

  it('is a file promtool finds nothing to say of, for a run, a failed run and a reconcile', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const file = path.join(dir, 'payouts.prom');
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(3, { prefix: 'PROM' }));

    const ok = await runChild([sheet, '--base-url', sb.url, '--metrics-file', file]);
    expect(ok.code, ok.stderr).toBe(0);
    const afterSuccess = await readFile(file, 'utf8');
    expect(promtoolSays(afterSuccess)).toBe('');
    expect(afterSuccess).toMatch(/^payouts_rows\{command="run",status="submitted"\} 3$/m);
    expect(afterSuccess).not.toMatch(/ \d+ \d+$/m);
    const success = /^payouts_last_success_timestamp_seconds\{command="run"\} (\S+)$/m.exec(
      afterSuccess,
    )?.[1];
    expect(success).toBeDefined();

    const failed = await runChild([sheet, '--base-url', sb.url, '--metrics-file', file], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: path.join(dir, 'missing.db'),
    });
    expect(failed.code, failed.stderr).toBe(2);
    const afterFailure = await readFile(file, 'utf8');
    expect(promtoolSays(afterFailure)).toBe('');
    expect(afterFailure).toMatch(/^payouts_exit_code\{command="run"\} 2$/m);
    expect(afterFailure).toMatch(/^payouts_rows\{command="run",status="submitted"\} 0$/m);
    expect(afterFailure).toContain(`payouts_last_success_timestamp_seconds{command="run"} ${success}\n`);

    const reconcileFile = path.join(dir, 'reconcile.prom');
    const reconciled = await spawnCli(['reconcile', '--base-url', sb.url, '--log-format', 'json'], {
      ...SANDBOX_ENV,
      PAYOUTS_METRICS_FILE: reconcileFile,
    }).exited;
    expect(reconciled.code, reconciled.stderr).toBe(0);
    const reconcileText = await readFile(reconcileFile, 'utf8');
    expect(promtoolSays(reconcileText)).toBe('');
    expect(reconcileText).toMatch(/^payouts_exit_code\{command="reconcile"\} 0$/m);
    expect(reconcileText).toMatch(/^payouts_last_success_timestamp_seconds\{command="reconcile"\} \S+$/m);
  }, 60_000);
});

describe('--notify', () => {
  it('POSTs once: the --json summary with a text a person reads, and nothing secret', async () => {
    const sb = await testSandbox();
    const hook = await testReceiver();
    const dir = await testDir();
    const rows = generateRows(5, { prefix: 'NOTE' });
    rows[4]!['amount'] = '-3';
    const sheet = await sheetOf(dir, 'payroll-2026-11.csv', rows);
    const result = await runChild([sheet, '--base-url', sb.url, '--json', '--notify', hook.url]);
    expect(result.code, result.stderr).toBe(1);

    expect(hook.requests()).toEqual([
      { method: 'POST', path: new URL(hook.url).pathname, contentType: 'application/json' },
    ]);
    const [body] = hook.bodies() as Record<string, unknown>[];
    const { text, ...summary } = body!;
    expect(summary).toEqual(JSON.parse(result.stdout.trim()));
    expect(summary['exitCode']).toBe(1);
    const lines = String(text).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('payroll-2026-11.csv');
    expect(lines[0]).toContain('failed: rows need attention (exit 1)');
    expect(lines[0]).toContain('5 rows: 1 invalid, 4 submitted');
    expect(lines[0]).toMatch(/sent [A-Z]{3} [\d,]+\.\d\d/);
    expect(lines[1]).toBe('1 row needs attention (1 invalid)');

    const bytes = hook.bytes();
    for (const secret of ['sandbox-secret', 'sandbox-password']) expect(bytes).not.toContain(secret);
    expect(bytes).not.toMatch(JWT_PATTERN);
    const accounts = rows
      .flatMap((row) => ACCOUNT_COLUMNS.map((c) => row[c] ?? ''))
      .filter((a) => a.length >= 6);
    expect(accounts.length).toBeGreaterThan(0);
    for (const account of accounts) expect(bytes).not.toContain(account);
  }, 60_000);

  it('notifies a run that could not open its register (exit 2), without its password', async () => {
    const hook = await testReceiver();
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(1, { prefix: 'PGPW' }));
    const port = await freePort();
    const result = await runChild(['--base-url', 'http://127.0.0.1:1', sheet], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: `postgres://payouts:Planted-Register-Pw@127.0.0.1:${port}/payouts`,
      PAYOUTS_NOTIFY: hook.url,
    });
    expect(result.code, result.stderr).toBe(2);
    const [body] = hook.bodies() as Record<string, unknown>[];
    expect(hook.bodies()).toHaveLength(1);
    expect(body!['exitCode']).toBe(2);
    expect(body!['command']).toBe('run');
    expect(String(body!['text'])).toMatch(
      /^payouts run of payroll\.csv: failed before sending anything: .*\(exit 2\)/,
    );
    expect(String(body!['text'])).toContain('cannot be opened');
    expect(hook.bytes()).not.toContain('Planted-Register-Pw');
    expect(hook.bytes()).not.toContain('sandbox-secret');
  }, 60_000);

  it.each([
    [['--notify', 'http://chat.example.com/hooks/x'], '--notify http://chat.example.com must use https://'],
    [['--push-metrics', 'ftp://gateway.example.com'], '--push-metrics ftp:// is not a web address'],
    [['--notify', 'https://user:pw@chat.example.com/x'], '--notify must not carry credentials'],
  ])('%j is exit 2 like any bad option value', async (args, said) => {
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(1, { prefix: 'BAD' }));
    const result = await runCli(
      ['run', sheet, '--base-url', 'http://127.0.0.1:1', '--log-format', 'text', ...args],
      {
        env: SANDBOX_ENV,
      },
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(said);
    expect(result.stderr).not.toContain('pw@');
  });

  it('PAYOUTS_NOTIFY to a plain http:// host that is not loopback is exit 2, without its path', async () => {
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(1, { prefix: 'BADENV' }));
    const result = await runCli(['run', sheet, '--base-url', 'http://127.0.0.1:1', '--log-format', 'text'], {
      env: { ...SANDBOX_ENV, PAYOUTS_NOTIFY: 'http://chat.example.com/hooks/planted-token' },
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('PAYOUTS_NOTIFY http://chat.example.com must use https://');
    expect(result.stderr).not.toContain('planted-token');
  });
});

describe('a signal that fails', () => {
  it('a refused gateway and a hook that never answers: one warning each, same exit code, at most 5 s more', async () => {
    const sb = await testSandbox();
    const stalled = await testReceiver({ never: true });
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(2, { prefix: 'STALL' }));
    const refused = `http://127.0.0.1:${await freePort()}`;

    const without = await runChild([sheet, '--base-url', sb.url]);
    expect(without.code, without.stderr).toBe(0);
    const withSignals = await runChild([
      sheet,
      '--base-url',
      sb.url,
      '--push-metrics',
      refused,
      '--notify',
      stalled.url,
    ]);
    expect(withSignals.code, withSignals.stderr).toBe(without.code);
    expect(withSignals.ms).toBeLessThan(without.ms + 5_000 + 3_000);
    expect(stalled.requests()).toHaveLength(1);

    const warnings = cronWarnings(withSignals.records);
    expect(warnings.map((w) => [w['cron'], w['target'], w['reason']]).sort()).toEqual([
      ['the metrics push', refused, 'connection refused'],
      ['the notification', new URL(stalled.url).origin, 'no answer in time'],
    ]);
    // A chat webhook's path is its secret: a warning names its origin only.
    expect(withSignals.stderr).not.toContain('planted-hook-token');
    // The log still ends with the run's last record.
    expect(withSignals.records.at(-1)?.['msg']).toBe('run finished');
  }, 60_000);

  it('an unwritable metrics file and a hook that answers 500: one warning each, the exit code as without', async () => {
    const sb = await testSandbox();
    const failing = await testReceiver({ status: 500 });
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(1, { prefix: 'UNWR' }));
    const result = await runChild([
      sheet,
      '--base-url',
      sb.url,
      '--metrics-file',
      path.join(dir, 'no-such-folder', 'payouts.prom'),
      '--notify',
      failing.url,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const warnings = cronWarnings(result.records);
    expect(warnings.map((w) => w['cron']).sort()).toEqual(['the metrics file', 'the notification']);
    expect(warnings.find((w) => w['cron'] === 'the notification')?.['reason']).toContain(
      'the hook answered 500',
    );
  }, 60_000);

  it('after SIGTERM, a hook that never answers still lets the run end within the 10 s', async () => {
    // Every answer of the service takes 20 s: only the stop ends this run, after its grace.
    const sb = await testSandbox({ latencyMs: 20_000 });
    const stalled = await testReceiver({ never: true });
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(2, { prefix: 'TERM' }));
    const run = spawnCli([
      'run',
      sheet,
      '--base-url',
      sb.url,
      '--notify',
      stalled.url,
      '--log-format',
      'json',
    ]);
    // Stopped while its first request (the token's) waits for its answer.
    while (sb.ledger().requests.total === 0 && run.child.exitCode === null)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const stoppedAt = Date.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(Date.now() - stoppedAt).toBeLessThan(10_500);
    expect(exit.code, exit.stderr).toBe(5);
    expect(stalled.requests()).toHaveLength(1);
    expect(cronWarnings(recordsOf(exit.stderr)).map((w) => w['reason'])).toEqual(['no answer in time']);
  }, 60_000);

  it('after SIGTERM with rows held through their grace, a stalled hook gets only what is left of the 10 s', async () => {
    const sb = await testSandbox({ latencyMs: 1 });
    let transactions = 0;
    // Every transaction request after the second never answers: those rows hold the stop's 7 s grace.
    const proxy = await scriptedProxy(sb.url, (request) => {
      if (request.method !== 'POST' || request.path !== '/v1/transactions') return FORWARD;
      transactions += 1;
      return transactions > 2 ? { kind: 'stall' } : FORWARD;
    });
    const stalled = await testReceiver({ never: true });
    const dir = await testDir();
    const sheet = await sheetOf(dir, 'payroll.csv', generateRows(12, { prefix: 'GRACE' }));
    const run = spawnCli([
      'run',
      sheet,
      '--base-url',
      proxy.url,
      '--notify',
      stalled.url,
      '--log-format',
      'json',
      '--max-outage',
      '300',
      '--concurrency',
      '4',
    ]);
    while (transactions < 5 && run.child.exitCode === null)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const stoppedAt = Date.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(exit.code, exit.stderr).toBe(5);
    // 7 s of grace, then the hook's wait, and still within the 10 s (not 7 s + 5 s).
    expect(Date.now() - stoppedAt).toBeLessThan(10_500);
    expect(stalled.requests()).toHaveLength(1);
    expect(cronWarnings(recordsOf(exit.stderr)).map((w) => w['reason'])).toEqual(['no answer in time']);
  }, 60_000);
});
