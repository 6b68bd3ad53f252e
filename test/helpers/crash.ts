/**
 * The crash tests' loop: a child `payouts run` stopped at seeded random moments, then resumed
 * until it finishes, against one sandbox that lives in the test process (so its ledger
 * outlives every child). "Never pay twice" is checked after every stop.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import {
  type ChildExit,
  CLI_ENTRY,
  duplicates,
  expectOnePaymentPerRow,
  paymentsOf,
  type RunSummary,
  sleep,
  spawnCli,
  testDir,
  testSandbox,
} from './payouts.js';
import { generateRows, readCsv, type SheetRow, writeSheet } from './sheets.js';

/** One line per answer the client got (logged at debug): the child's progress, for timing stops. */
export const ANSWER_LINE = '"msg":"service answered"';

export interface CrashSetup {
  sb: SandboxHandle;
  sheet: string;
  rows: SheetRow[];
  /** Arguments of every run; re-runs add --retry-unknown. */
  args: string[];
  /** Seeded: every moment of every stop comes from it. */
  random: () => number;
}

/** A sandbox, a sheet of `count` valid rows, and the arguments of a fast run against them. */
export async function crashSetup(seed: number, count: number): Promise<CrashSetup> {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing: run "npm run build" first`);
  const sb = await testSandbox({ seed, latencyMs: 1 });
  const dir = await testDir();
  const sheet = path.join(dir, 'crash.csv');
  const rows = generateRows(count, { prefix: `CRASH${seed}` });
  await writeSheet(sheet, rows);
  const args = [
    'run',
    sheet,
    '--base-url',
    sb.url,
    '--concurrency',
    '16',
    '--rate',
    '5000',
    '--json',
    '--log-format',
    'json',
    '--log-level',
    'debug',
  ];
  return { sb, sheet, rows, args, random: mulberry32(seed) };
}

/** How a stopped run ended, and how it was stopped. */
export interface Stop {
  exit: ChildExit;
  /** The child's pid. */
  pid: number;
  /** The signals sent, in order (none when the run finished first). */
  sent: NodeJS.Signals[];
}

/**
 * Runs `payouts run` once and stops it at a seeded moment: after a random number of answers
 * (1 to `maxAnswers`) plus a few milliseconds, or now and then while it is still starting up.
 * `signals` are sent in order, a few milliseconds apart.
 */
export async function runAndStop(
  setup: CrashSetup,
  resume: boolean,
  signals: NodeJS.Signals[],
  maxAnswers: number,
): Promise<Stop> {
  const { random } = setup;
  const run = spawnCli(resume ? [...setup.args, '--retry-unknown'] : setup.args);
  const duringStartup = random() < 0.15;
  const answers = 1 + Math.floor(random() * maxAnswers);
  const delayMs = Math.floor(random() * (duringStartup ? 250 : 15));
  const reached = duringStartup ? true : await run.whenLines(ANSWER_LINE, answers);
  const sent: NodeJS.Signals[] = [];
  if (reached) {
    await sleep(delayMs);
    for (const signal of signals) {
      if (run.child.exitCode !== null || run.child.signalCode !== null) break;
      run.child.kill(signal);
      sent.push(signal);
      await sleep(2 + Math.floor(random() * 20));
    }
  }
  return { exit: await run.exited, sent, pid: run.child.pid! };
}

/** Never twice, at any moment: no Idempotency-Key and no reference paid more than once. */
export function expectNothingPaidTwice(sb: SandboxHandle): void {
  const payments = paymentsOf(sb);
  expect(duplicates(payments, (t) => t.idempotencyKey)).toEqual([]);
  expect(duplicates(payments, (t) => t.reference)).toEqual([]);
}

/**
 * Resumes with --retry-unknown until a run exits 0 or 1 with no unknown row (a few tries at
 * most), then checks the end state: one payment per row, every row paid in the results file
 * with the ledger's transaction, and every beneficiary and recipient created once.
 */
export async function finishAndCheck(setup: CrashSetup): Promise<{ runs: number }> {
  const { sb, rows } = setup;
  let runs = 0;
  let last: { exit: ChildExit; summary: RunSummary; unknown: number } | undefined;
  while (runs < 3 && !(last && [0, 1].includes(last.exit.code ?? -1) && last.unknown === 0)) {
    runs += 1;
    const exit = await spawnCli([...setup.args, '--retry-unknown']).exited;
    const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
    last = { exit, summary, unknown: summary.statuses?.['unknown'] ?? -1 };
  }
  expect(last?.exit.code, last?.exit.stderr.slice(-2000)).toBe(0);
  expect(last?.unknown).toBe(0);

  const payments = await expectOnePaymentPerRow(sb, rows);
  const results = await readCsv(last!.summary.results);
  expect(results).toHaveLength(rows.length);
  for (const row of results) {
    expect(['submitted', 'skipped']).toContain(row['result.status']);
    expect(row['result.transactionId']).toBe(payments.get(row['reference']!)!.id);
  }
  const ledger = sb.ledger();
  const payees = new Set(rows.map((r) => `${r['beneficiaryName']}|${r['businessName']}|${r['type']}`));
  const beneficiaries = new Set(rows.map((r) => r['beneficiaryName']).filter((name) => name !== ''));
  expect(ledger.recipients).toHaveLength(payees.size);
  expect(ledger.beneficiaries).toHaveLength(beneficiaries.size);
  return { runs };
}
