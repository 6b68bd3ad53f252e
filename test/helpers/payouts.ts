/**
 * `payouts run` against a real sandbox on a free loopback port (a real server, not a mock):
 * starting it, running the CLI in-process or as a child process, and checking the sandbox
 * ledger against the sheet ("Never pay twice": one transaction per valid row).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { serviceOf, transactionKey } from '../../src/register/identity.js';
import { openRegister } from '../../src/register/open.js';
import type { PayoutRecord } from '../../src/register/types.js';
import {
  type LedgerTransaction,
  type SandboxHandle,
  type SandboxLedger,
  type SandboxOptions,
  startSandbox,
} from '../../src/sandbox/index.js';
import { type CliResult, runCli, usesRegister } from './cli.js';
import { withTestRegister } from './register.js';
import { generateRows, readCsv, type SheetRow, writeSheet } from './sheets.js';

/**
 * The sandbox credentials (docs/sandbox.md "Credentials"), as the environment a run reads them
 * from.
 */
export const SANDBOX_ENV: NodeJS.ProcessEnv = {
  PAYOUTS_CLIENT_ID: 'sandbox-client',
  PAYOUTS_CLIENT_SECRET: 'sandbox-secret',
  PAYOUTS_USERNAME: 'integrator@example.com',
  PAYOUTS_PASSWORD: 'sandbox-password',
};

/** The compiled CLI that child-process tests run (`npm run build` first). */
export const CLI_ENTRY = path.resolve(import.meta.dirname, '../../dist/cli/main.js');

/**
 * Starts a sandbox on 127.0.0.1 port 0, closed when the current test ends. Settlement is quick
 * (so `--wait` is short) and the seed fixed, unless the options say otherwise.
 */
export async function testSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const handle = await startSandbox({ port: 0, seed: 20_261_121, settleDelayMs: 20, ...options });
  onTestFinished(() => handle.close());
  return handle;
}

/** A temporary directory removed when the current test ends. */
export async function testDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-run-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A sheet of `count` generated valid rows (references `<prefix>-000001`...) in a test folder. */
export async function testSheet(count: number, prefix: string): Promise<{ sheet: string; rows: SheetRow[] }> {
  const dir = await testDir();
  const sheet = path.join(dir, `${prefix.toLowerCase()}.csv`);
  const rows = generateRows(count, { prefix });
  await writeSheet(sheet, rows);
  return { sheet, rows };
}

/** `payouts run <sheet> --base-url <sandbox> ...args` in-process, with the sandbox credentials. */
export function runAgainst(
  sb: { url: string },
  sheet: string,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = SANDBOX_ENV,
): Promise<CliResult> {
  return runCli(['run', sheet, '--base-url', sb.url, ...args], { env });
}

/** The `--json` summary a run printed on stdout. */
export function summaryOf(result: CliResult): RunSummary {
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as RunSummary;
  } catch {
    throw new Error(`no JSON summary on stdout (exit ${result.code}); stderr:\n${result.stderr}`);
  }
}

export interface RunSummary {
  rows: number;
  statuses: Record<string, number>;
  totals: Record<string, string>;
  digest: string;
  results: string;
  register: string | null;
  runId: string;
  interrupted: boolean;
  exitCode: number;
}

/** Transactions of the primary integrator (the one the sandbox credentials log in as). */
export function paymentsOf(sb: SandboxHandle, ledger: SandboxLedger = sb.ledger()): LedgerTransaction[] {
  return ledger.transactions.filter((t) => t.integratorId === sb.integratorIds.primary);
}

/** Groups items by a key; items without one are grouped under ''. */
export function groupBy<T>(
  items: readonly T[],
  key: (item: T) => string | null | undefined,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item) ?? '';
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Keys that occur more than once, with how often: what "paid twice" looks like. */
export function duplicates<T>(items: readonly T[], key: (item: T) => string | null | undefined): string[] {
  return [...groupBy(items, key)]
    .filter(([, group]) => group.length > 1)
    .map(([k, g]) => `${k} ×${g.length}`);
}

/**
 * The ledger holds exactly one transaction per row: none missing, none twice (by
 * Idempotency-Key and by reference), each with the row's amount and currency and the key
 * derived from the service, the integrator and the reference (register/identity.ts). Returns the transactions by reference.
 */
export async function expectOnePaymentPerRow(
  sb: SandboxHandle,
  rows: readonly SheetRow[],
  /** The base URL the runs used (a proxy in front of the sandbox is another service). */
  via: { url: string } = sb,
): Promise<Map<string, LedgerTransaction>> {
  const payments = paymentsOf(sb);
  expect(duplicates(payments, (t) => t.idempotencyKey)).toEqual([]);
  expect(duplicates(payments, (t) => t.reference)).toEqual([]);
  const byReference = new Map(payments.map((t) => [t.reference ?? '', t]));
  const missing = rows.filter((r) => !byReference.has(r['reference']!)).map((r) => r['reference']);
  expect(missing).toEqual([]);
  expect(payments).toHaveLength(rows.length);
  const scope = { service: serviceOf(via.url), integratorId: sb.integratorIds.primary };
  for (const row of rows) {
    const reference = row['reference']!;
    const payment = byReference.get(reference)!;
    expect({
      reference,
      amount: payment.amount,
      currency: payment.currency,
      key: payment.idempotencyKey,
    }).toEqual({
      reference,
      amount: row['amount'],
      currency: row['currency'],
      key: transactionKey(scope, reference),
    });
  }
  return byReference;
}

/** The register's records of the sandbox's primary integrator, by reference (read-only). */
export async function registerRecords(
  registerPath: string,
  sb: SandboxHandle,
  via: { url: string } = sb,
): Promise<Map<string, PayoutRecord>> {
  const register = await openRegister(registerPath, { readonly: true });
  try {
    const scope = (await register.scopes()).find(
      (s) => s.service === serviceOf(via.url) && s.integratorId === sb.integratorIds.primary,
    );
    if (!scope) return new Map();
    const store = await register.scopeStore(scope);
    return new Map((await store.recentPayouts(1_000_000)).map((r) => [r.reference, r]));
  } finally {
    await register.close();
  }
}

/** Every byte of a register (its file and write-ahead log) as text, to search for what must not be there. */
export async function registerBytes(registerPath: string): Promise<string> {
  const parts: string[] = [];
  for (const file of [registerPath, `${registerPath}-wal`]) {
    parts.push(await readFile(file, 'latin1').catch(() => ''));
  }
  return parts.join('\n');
}

/** What a row that was not paid must say: the service's own words, or what happened and what to do. */
export const CLEAR_MESSAGE =
  /run again|not found|belongs to another integrator|must|does not match|has been deleted|rejected/;

/**
 * A first run under faults: every row ends submitted, or failed or unknown with a clear
 * message, and a refused row was not paid. Returns the results rows.
 */
export async function expectClearOutcomes(sb: SandboxHandle, result: CliResult): Promise<SheetRow[]> {
  expect([0, 1], result.stderr).toContain(result.code);
  const results = await readCsv(summaryOf(result).results);
  const paid = new Map(paymentsOf(sb).map((t) => [t.reference, t]));
  for (const row of results) {
    const status = row['result.status']!;
    expect(['submitted', 'failed', 'unknown']).toContain(status);
    if (status === 'submitted') expect(row['result.transactionId']).toBe(paid.get(row['reference']!)?.id);
    else expect(row['result.errors']).toMatch(CLEAR_MESSAGE);
    // Only an unknown row may have been paid without the run knowing.
    if (status === 'failed') expect(paid.has(row['reference']!)).toBe(false);
  }
  return results;
}

/** Re-runs with --retry-unknown until a run exits 0 (three tries at most); returns the exit codes. */
export async function resumeUntilDone(
  sb: { url: string },
  sheet: string,
  args: readonly string[],
): Promise<number[]> {
  const codes: number[] = [];
  while (codes.length < 3 && codes.at(-1) !== 0) {
    codes.push((await runAgainst(sb, sheet, [...args, '--retry-unknown'])).code);
  }
  expect(codes.at(-1)).toBe(0);
  return codes;
}

/** A child `node dist/cli/main.js ...` with its output collected. */
export interface ChildRun {
  child: ChildProcess;
  /** Resolves when it has exited, with how, and everything it printed. */
  exited: Promise<ChildExit>;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** Resolves once stderr holds `count` lines matching `pattern` (false if it exits first). */
  whenLines(pattern: string, count: number): Promise<boolean>;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns the compiled CLI under the running Node (process.execPath, so CI's Node runs it) with
 * the sandbox credentials and nothing else from the environment.
 */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = SANDBOX_ENV,
  /** A command that runs the CLI (`unshare ...`, `faketime ...`), before node and its arguments. */
  wrap: readonly string[] = [],
  /** Node and the command's entry point (reachable.ts gives ones another user can run). */
  program: { node: string; entry: string } = { node: process.execPath, entry: CLI_ENTRY },
): ChildRun {
  const command = [...wrap, program.node, program.entry, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    env: { PATH: process.env['PATH'], ...(usesRegister(args) ? withTestRegister(env) : env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  // Complete stderr lines matching each pattern once watched: counted as lines arrive.
  let partial = '';
  const seen = new Map<string, number>();
  const watchers: Array<{ pattern: string; count: number; resolve: (hit: boolean) => void }> = [];
  const countLines = (lines: string[]) => {
    for (const [pattern, n] of seen)
      seen.set(pattern, n + lines.filter((line) => line.includes(pattern)).length);
    for (const w of [...watchers]) {
      if ((seen.get(w.pattern) ?? 0) >= w.count) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve(true);
      }
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stderr += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    countLines(lines);
  });
  const exited = new Promise<ChildExit>((resolve) => {
    child.on('close', (code, signal) => {
      for (const w of watchers.splice(0)) w.resolve(false);
      resolve({ code, signal, stdout, stderr });
    });
  });
  // A test that fails half-way must not leave a child paying in the background.
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    whenLines(pattern, n) {
      // The last piece of the split is the line still being written.
      if (!seen.has(pattern))
        seen.set(
          pattern,
          stderr
            .split('\n')
            .slice(0, -1)
            .filter((l) => l.includes(pattern)).length,
        );
      if ((seen.get(pattern) ?? 0) >= n) return Promise.resolve(true);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(false);
      return new Promise((resolve) => watchers.push({ pattern, count: n, resolve }));
    },
  };
}

/**
 * Resolves once the sandbox's ledger holds `count` payments while `run` is still going. A run
 * that ends first, or never gets there, fails the test with what it printed: a slow start on a
 * busy machine then reads differently from a run that broke.
 */
export async function whenPaid(
  sb: SandboxHandle,
  run: ChildRun,
  count: number,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (paymentsOf(sb).length >= count) return;
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      const exit = await run.exited;
      throw new Error(
        `the run ended (${exit.code ?? exit.signal}) after ${paymentsOf(sb).length} of the ${count} payments waited for:\n${exit.stderr}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(
        `${paymentsOf(sb).length} of the ${count} payments waited for after ${timeoutMs} ms:\n${run.stderr()}`,
      );
    await sleep(20);
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A JWT (header and payload are base64url JSON, so both start with "eyJ"). */
export const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.?[A-Za-z0-9_-]*/;
