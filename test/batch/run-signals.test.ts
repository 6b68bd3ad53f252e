/**
 * Signals while the service throttles: SIGTERM, SIGINT and SIGHUP end every wait
 * (rate limiter, backoff, Retry-After, breaker), so the run writes its results and exits 5
 * within seconds even under `Retry-After: 100`; a second signal stops at once; stdout or stderr
 * closed by its reader does not end a paying run. Spawned runs need `npm run build`.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import {
  expectOnePaymentPerRow,
  paymentsOf,
  type RunSummary,
  runAgainst,
  sleep,
  spawnCli,
  testSandbox,
  testSheet,
} from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { readCsv } from '../helpers/sheets.js';

const THROTTLED_LINE = 'service throttled - pausing all requests';
const NOT_SENT = 'not sent: the run was interrupted before this row was paid - run again to send it';

/** A sandbox behind a proxy that answers 429 with Retry-After: 100 after `after` requests. */
async function throttledService(after: number) {
  const sb = await testSandbox({ latencyMs: 1 });
  const state = { seen: 0, throttling: true };
  const proxy = await scriptedProxy(sb.url, () => {
    state.seen += 1;
    if (!state.throttling || state.seen <= after) return FORWARD;
    return {
      kind: 'answer',
      status: 429,
      body: { status: 429, error: 'Too Many Requests', message: 'slow down' },
      headers: { 'retry-after': '100' },
    };
  });
  return { sb, proxy, state };
}

// A Retry-After of 100 s is waited for only under a longer --max-outage (else it is exit 6).
const RUN_ARGS = [
  '--concurrency',
  '4',
  '--rate',
  '400',
  '--json',
  '--log-format',
  'json',
  '--max-outage',
  '300',
];

describe('slow: signals under hard throttling', { timeout: 90_000 }, () => {
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    it(`${signal}: results written and exit 5 within 10 s; the next run pays the rest once`, async () => {
      const { sb, proxy, state } = await throttledService(60);
      const { sheet, rows } = await testSheet(60, `SIG${signal.slice(3)}`);
      const run = spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN_ARGS]);
      expect(await run.whenLines(THROTTLED_LINE, 1)).toBe(true);
      // Let the throttled requests settle into their waits.
      await sleep(300);
      const sentAt = Date.now();
      run.child.kill(signal);
      const exit = await run.exited;
      expect(Date.now() - sentAt).toBeLessThan(10_000);
      expect(exit.signal).toBeNull();
      expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.interrupted);
      expect(exit.stderr).toContain('payouts: interrupted');
      const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
      expect(summary.interrupted).toBe(true);
      const results = await readCsv(summary.results);
      expect(results).toHaveLength(rows.length);
      const paid = new Set(paymentsOf(sb).map((t) => t.reference));
      const notSent = results.filter((r) => r['result.status'] === 'skipped');
      expect(notSent.length).toBeGreaterThan(0);
      for (const row of notSent) {
        expect(row['result.errors']).toBe(NOT_SENT);
        expect(paid.has(row['reference']!)).toBe(false);
      }
      for (const row of results)
        expect(['submitted', 'skipped', 'unknown'], row['result.errors']).toContain(row['result.status']);

      state.throttling = false;
      const again = await runAgainst(proxy, sheet, ['--json', '--retry-unknown', '--rate', '400']);
      expect(again.code, again.stderr).toBe(EXIT.ok);
      await expectOnePaymentPerRow(sb, rows, proxy);
    });
  }

  it('a second signal stops at once', async () => {
    const { proxy } = await throttledService(30);
    const { sheet } = await testSheet(40, 'TWICE');
    const run = spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN_ARGS]);
    expect(await run.whenLines(THROTTLED_LINE, 1)).toBe(true);
    run.child.kill('SIGTERM');
    // The second at once: the first alone ends this run within milliseconds (its waits end),
    // and a signal that finds the process already exiting is the kernel's to deliver.
    await sleep(1);
    const sentAt = Date.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    expect(exit.code).toBe(EXIT.interrupted);
    // Cut at once, yet the results and the summary were written in the moment left.
    const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
    expect(summary.interrupted).toBe(true);
    expect(await readCsv(summary.results)).toHaveLength(40);
  });
});

describe('slow: output closed by its reader', { timeout: 60_000 }, () => {
  for (const stream of ['stdout', 'stderr'] as const) {
    it(`${stream} closed early: the run pays every row, writes its results and exits 0`, async () => {
      const sb = await testSandbox({ latencyMs: 1 });
      const { sheet, rows } = await testSheet(30, `PIPE${stream.toUpperCase()}`);
      const run = spawnCli(['run', sheet, '--base-url', sb.url, ...RUN_ARGS, '--log-level', 'debug']);
      // `payouts run --json | head -c 1`: the reader goes away before the run has written.
      run.child[stream]!.destroy();
      const exit = await run.exited;
      expect(exit.signal).toBeNull();
      expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.ok);
      if (stream === 'stdout') expect(exit.stderr).not.toMatch(/EPIPE|internal error|Unhandled/);
      const results = await readCsv(path.join(path.dirname(sheet), `pipe${stream}.results.csv`));
      expect(results.map((r) => r['result.status'])).toEqual(rows.map(() => 'submitted'));
      await expectOnePaymentPerRow(sb, rows);
    });
  }
});

describe('slow: the sandbox and a closed session', { timeout: 30_000 }, () => {
  it('payouts sandbox stops cleanly on SIGHUP (exit 0), not killed by it', async () => {
    const run = spawnCli(['sandbox', '--json', '--port', '0']);
    const started = await new Promise<boolean>((resolve) => {
      run.child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('"url"')) resolve(true);
      });
      run.child.on('close', () => resolve(false));
    });
    expect(started, run.stderr()).toBe(true);
    run.child.kill('SIGHUP');
    const exit = await run.exited;
    expect(exit.signal).toBeNull();
    expect(exit.code).toBe(0);
  });
});
