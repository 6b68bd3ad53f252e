/**
 * Unattended runs against a service that goes away: the run stops taking rows, lets
 * the rows under way settle, writes the results and exits 6 ("retry later"); run again, it
 * pays the rest, each reference exactly once. Spawned runs need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { runCli } from '../helpers/cli.js';
import { removableService } from '../helpers/outage.js';
import {
  expectOnePaymentPerRow,
  groupBy,
  paymentsOf,
  type RunSummary,
  runAgainst,
  spawnCli,
  summaryOf,
  testSandbox,
  testSheet,
} from '../helpers/payouts.js';
import { FORWARD, scriptedProxy } from '../helpers/proxy.js';
import { readCsv, type SheetRow } from '../helpers/sheets.js';

const outageOf = (seconds: number) =>
  `the service stayed unreachable or unavailable for more than ${seconds} s (--max-outage) - run again later to resume`;
const notSentFor = (seconds: number) => `not sent: ${outageOf(seconds)}`;
const ANSWER_LINE = '"msg":"service answered"';

/** The results of a run stopped by the outage: nothing failed, nothing paid is left unsaid. */
async function expectStoppedByOutage(
  summary: RunSummary & { unavailable?: boolean },
  rows: SheetRow[],
  paid: Set<string | null>,
  maxOutage: number,
) {
  expect(summary.exitCode).toBe(EXIT.unavailable);
  expect(summary.unavailable).toBe(true);
  const results = await readCsv(summary.results);
  expect(results).toHaveLength(rows.length);
  const byStatus = groupBy(results, (r) => r['result.status']);
  expect([...byStatus.keys()].filter((s) => !['submitted', 'skipped', 'unknown'].includes(s))).toEqual([]);
  const notSent = byStatus.get('skipped') ?? [];
  expect(notSent.length).toBeGreaterThan(0);
  for (const row of notSent) {
    expect(row['result.errors']).toBe(notSentFor(maxOutage));
    expect(paid.has(row['reference']!)).toBe(false);
  }
  for (const row of byStatus.get('submitted') ?? []) expect(paid.has(row['reference']!)).toBe(true);
  return results;
}

describe('slow: the service goes away mid-run', { timeout: 120_000 }, () => {
  it('removed: exit 6 within --max-outage plus one deadline, results written; the next run pays the rest once', async () => {
    const sb = await testSandbox({ latencyMs: 2 });
    const service = await removableService(sb.url);
    const { sheet, rows } = await testSheet(300, 'GONE');
    const args = [
      'run',
      sheet,
      '--base-url',
      service.url,
      '--concurrency',
      '8',
      '--rate',
      '400',
      '--json',
      '--max-outage',
      '3',
    ];
    const run = spawnCli([...args, '--log-format', 'json', '--log-level', 'debug']);
    expect(await run.whenLines(ANSWER_LINE, 150)).toBe(true);
    await service.takeAway();
    const removedAt = Date.now();
    const exit = await run.exited;
    const took = Date.now() - removedAt;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.unavailable);
    // The outage is measured in time: 3 s, plus one request deadline (1.5 s), plus writing up.
    expect(took).toBeLessThan(10_000);
    expect(exit.stderr).toContain(`payouts: stopped early: ${outageOf(3)}`);
    const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
    const paid = new Set(paymentsOf(sb).map((t) => t.reference));
    await expectStoppedByOutage(summary, rows, paid, 3);

    await service.bringBack();
    const again = await runAgainst(service, sheet, [
      '--json',
      '--retry-unknown',
      '--concurrency',
      '8',
      '--rate',
      '400',
    ]);
    expect(again.code, again.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(sb, rows, service);
  });

  it('503 for everything: exit 6 after --max-outage, not five tries per row; then the rest is paid once', async () => {
    const sb = await testSandbox({ latencyMs: 1 });
    let down = false;
    let seen = 0;
    const proxy = await scriptedProxy(sb.url, () => {
      seen += 1;
      if (!down && seen > 120) down = true;
      return down
        ? {
            kind: 'answer',
            status: 503,
            body: { status: 503, error: 'Service Unavailable', message: 'down' },
          }
        : FORWARD;
    });
    const { sheet, rows } = await testSheet(200, 'DOWN');
    const started = Date.now();
    const first = await runAgainst(proxy, sheet, [
      '--json',
      '--max-outage',
      '2',
      '--concurrency',
      '4',
      '--rate',
      '400',
    ]);
    expect(first.code, first.stderr).toBe(EXIT.unavailable);
    expect(Date.now() - started).toBeLessThan(30_000);
    const paid = new Set(paymentsOf(sb).map((t) => t.reference));
    await expectStoppedByOutage(summaryOf(first) as RunSummary & { unavailable?: boolean }, rows, paid, 2);
    // The breaker stopped the sending: far fewer than five attempts per remaining row.
    const remaining = rows.length - paid.size;
    expect(seen - 120).toBeLessThan(remaining);

    down = false;
    seen = Number.NEGATIVE_INFINITY;
    const again = await runAgainst(proxy, sheet, ['--json', '--retry-unknown', '--rate', '400']);
    expect(again.code, again.stderr).toBe(EXIT.ok);
    await expectOnePaymentPerRow(sb, rows, proxy);
  });

  it('down from the start: exit 6 with every row skipped in the results file', async () => {
    const sb = await testSandbox();
    const service = await removableService(sb.url);
    await service.takeAway();
    const { sheet, rows } = await testSheet(5, 'NEVER');
    const result = await runAgainst(service, sheet, ['--json', '--max-outage', '1']);
    expect(result.code, result.stderr).toBe(EXIT.unavailable);
    const results = await readCsv(summaryOf(result).results);
    expect(results.map((r) => [r['reference'], r['result.status'], r['result.errors']])).toEqual(
      rows.map((r) => [r['reference'], 'skipped', notSentFor(1)]),
    );
    expect(paymentsOf(sb)).toEqual([]);
    // The summary's batch digest, warnings and totals to send are the ones validate gave for the
    // same sheet and register, not a digest of the rows alone that nobody approved.
    const validated = await runCli(['validate', sheet, '--base-url', service.url, '--json', '--no-report']);
    expect(validated.code, validated.stderr).toBe(EXIT.ok);
    const offline = JSON.parse(validated.stdout) as {
      digest: string;
      warnings: Record<string, string[]>;
      sendTotals: Record<string, string>;
    };
    const summary = JSON.parse(result.stdout) as typeof offline;
    expect(summary.digest).toBe(offline.digest);
    expect(summary.warnings).toEqual(offline.warnings);
    expect(summary.warnings['newPayee']).toHaveLength(rows.length);
    expect(summary.sendTotals).toEqual(offline.sendTotals);
  });
});
