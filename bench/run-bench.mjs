// `npm run bench -- run`: `payouts run` against `payouts sandbox`, and the same sheet through
// newman, each program in its own child process (the sandbox in one, the client in another),
// all on 127.0.0.1. A fresh sandbox per case, so its request counts belong to that case.
//
// (a)  sandbox --rate-limit 200; payouts --rate 200 --concurrency 16: the request rate the
//      sandbox accepted, against the limit. Target ≥ 0.95.
// (a') the same limit, payouts told twice as much (--rate 400): it has to find the limit from
//      the 429s (pause on Retry-After, adaptive rate). Same target, shown for the adaptation.
//      The sandbox's bucket starts full (a second's worth), so a client that takes that burst
//      can average a little above the limit over a run of ~20 s.
// (b)  sandbox --latency 50, no rate limit; payouts --concurrency 16 (--rate 100000, i.e. no
//      client limit): rows/s against the bound 16 / (requests per row × 0.05 s). Target ≥ 0.8.
// (c)  sandbox --latency 50, no rate limit: newman with bench/newman/collection.json and the
//      sheet as CSV iteration data (the first BENCH_NEWMAN_ROWS rows: newman sends one request
//      at a time, so the whole sheet would take minutes), rows/s; reported as the ratio of
//      payouts (b) to newman. Also payouts --concurrency 1 on the same rows, as a second ratio:
//      the part of the gap that is not concurrency.
//
// The sheet: generate.mjs's rows (the seven rails in turn) with one payee per row, so each row
// is 4 requests (beneficiary, recipient, simulation, transaction) plus one token per run. Rows
// that share a payee and run at the same time wait on one creation, which saves a request but
// not a round trip, so sharing would lower requests per row without shortening a row.
//
// Rates are measured by the sandbox: requests it accepted (429s excluded) and rows (transactions
// in its ledger) over the window from its first record created to its last transaction, so
// process start-up, reading the sheet and writing the results are outside it; the wall-clock
// time of each client process is reported beside it. Requests per row are counted by the
// sandbox too (token and shared beneficiaries included).
//
// (d)  recurring payees: sandbox --rate-limit 200; month 1 pays the sheet, month 2
//      pays the same payees under new references with the same register, which remembers the
//      beneficiaries and recipients it created: requests per row and rows/s of each month.
//      Target: month 2 at ≤ 2.2 requests per row (a simulation and a transaction).
//
// Knobs: BENCH_RUN_ROWS (default 1,000), BENCH_NEWMAN_ROWS (default 100).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchRow, COLUMNS } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const outDir = path.join(here, 'out');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const newmanBin = path.join(root, 'node_modules', 'newman', 'bin', 'newman.js');
const collection = path.join(here, 'newman', 'collection.json');

const RATE_LIMIT = 200;
const RATE_TARGET = 0.95;
const LATENCY_MS = 50;
const CONCURRENCY = 16;
const LATENCY_TARGET = 0.8;
const RECURRING_TARGET = 2.2;
/** `--rate` must be a positive number: this one never binds (the client bucket holds 10,000). */
const NO_CLIENT_LIMIT = 100_000;
const SEED = 1;

export const CREDENTIALS = {
  PAYOUTS_CLIENT_ID: 'sandbox-client',
  PAYOUTS_CLIENT_SECRET: 'sandbox-secret',
  PAYOUTS_USERNAME: 'integrator@example.com',
  PAYOUTS_PASSWORD: 'sandbox-password',
};

/** Time the sandbox has to print its URL, and to stop after SIGTERM. */
const CHILD_START_MS = 15_000;
const CHILD_STOP_MS = 5_000;
/** A client run that takes longer than this is hung: it is killed and the section fails. */
const CLIENT_TIMEOUT_MS = 10 * 60_000;
const KEEP_OUTPUT = 16 * 1024;

/** Every child still running; killed if the bench fails or exits. */
const live = new Set();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const verdict = (ok) => (ok ? 'OK' : 'BELOW TARGET');

function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Keeps the last `limit` characters of a stream (for error messages: KEEP_OUTPUT). */
function tail(stream, limit = KEEP_OUTPUT) {
  const kept = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (d) => {
    kept.text = (kept.text + d).slice(-limit);
  });
  return kept;
}

/**
 * Starts `payouts sandbox --port 0 --json` with `flags` in a child; resolves to { url, stop }.
 * `nodeArgs` go to node itself (run-scale.mjs preloads its RSS reporter), `env` is added to its
 * environment.
 */
export async function startSandbox(flags, { nodeArgs = [], env = {} } = {}) {
  const child = track(
    spawn(
      process.execPath,
      [...nodeArgs, cli, 'sandbox', '--port', '0', '--json', '--seed', String(SEED), ...flags],
      {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  const stderr = tail(child.stderr);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    const url = await new Promise((resolve, reject) => {
      let buffered = '';
      const timer = setTimeout(
        () => reject(new Error('the sandbox did not print its URL in time')),
        CHILD_START_MS,
      );
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d) => {
        buffered += d;
        const newline = buffered.indexOf('\n');
        if (newline < 0) return;
        clearTimeout(timer);
        try {
          resolve(JSON.parse(buffered.slice(0, newline)).url);
        } catch (error) {
          reject(error);
        }
      });
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`the sandbox exited (${code ?? signal}) before printing its URL: ${stderr.text}`));
      });
    });
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`the sandbox is not on loopback: ${url}`);
    return {
      url,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_MS);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/**
 * Runs `node args` to the end; resolves to { code, seconds, stdout, stderr }: stdout whole (a
 * run's JSON summary lists every warned reference: 1,000 rows make 20 KB), stderr's tail.
 */
async function runClient(args, env = {}) {
  const started = performance.now();
  const child = track(
    spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stdout = tail(child.stdout, Number.POSITIVE_INFINITY);
  const stderr = tail(child.stderr);
  const timer = setTimeout(() => child.kill('SIGKILL'), CLIENT_TIMEOUT_MS);
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, signal) => resolve(c ?? signal));
  });
  clearTimeout(timer);
  return { code, seconds: (performance.now() - started) / 1000, stdout: stdout.text, stderr: stderr.text };
}

/** What the sandbox saw: accepted requests, 429s and rows over the window of its records. */
async function ledgerFigures(url, rows, before = { total: 0, rateLimited: 0, transactions: 0, since: 0 }) {
  const response = await fetch(`${url}/_sandbox/ledger`);
  if (!response.ok) throw new Error(`GET /_sandbox/ledger answered ${response.status}`);
  const ledger = await response.json();
  const { requests } = ledger;
  const transactions = ledger.transactions.filter((t) => t.status !== 'FAILED').length;
  if (
    ledger.transactions.length !== before.transactions + rows ||
    transactions !== before.transactions + rows
  ) {
    throw new Error(
      `the ledger holds ${ledger.transactions.length} transactions (${transactions} not failed), expected ${before.transactions + rows}`,
    );
  }
  // Records of this case only: those created since `before.since` (an earlier month's are older).
  const created = (record) => Date.parse(record.createdAt);
  let first = Number.POSITIVE_INFINITY;
  for (const kind of ['beneficiaries', 'recipients', 'simulations', 'transactions']) {
    for (const record of ledger[kind])
      if (created(record) >= before.since) first = Math.min(first, created(record));
  }
  let last = Number.NEGATIVE_INFINITY;
  for (const t of ledger.transactions) last = Math.max(last, created(t));
  const windowSeconds = (last - first) / 1000;
  const rateLimited = requests.injected.rateLimited - before.rateLimited;
  const accepted = requests.total - before.total - rateLimited;
  const unexpected = Object.entries(requests.byStatus).filter(([status]) => !/^(200|201|429)$/.test(status));
  if (unexpected.length > 0) throw new Error(`unexpected answers: ${JSON.stringify(requests.byStatus)}`);
  return {
    rows,
    windowSeconds: Number(windowSeconds.toFixed(3)),
    acceptedRequests: accepted,
    rateLimited,
    requestsPerRow: Number((accepted / rows).toFixed(3)),
    acceptedPerSecond: Number((accepted / windowSeconds).toFixed(1)),
    rowsPerSecond: Number((rows / windowSeconds).toFixed(2)),
    byRoute: requests.byRoute,
    totals: {
      total: requests.total,
      rateLimited: requests.injected.rateLimited,
      transactions: ledger.transactions.length,
      since: last + 1,
    },
  };
}

/** One `payouts run` of `sheet` against a fresh sandbox started with `sandboxFlags`. */
async function payoutsCase(name, sheet, rows, sandboxFlags, runFlags) {
  const register = path.join(outDir, `run-bench-${name}.register.db`);
  await removeRegister(register);
  const sandbox = await startSandbox(sandboxFlags);
  try {
    return {
      sandbox: sandboxFlags.join(' '),
      ...(await payoutsRun(name, sheet, rows, sandbox, runFlags, register)),
    };
  } finally {
    await sandbox.stop();
    await removeRegister(register);
  }
}

/** One `payouts run` of `sheet` against a running sandbox, with the given register. */
async function payoutsRun(name, sheet, rows, sandbox, runFlags, register, before) {
  const out = path.join(outDir, `run-bench-${name}.results.csv`);
  await rm(out, { force: true });
  try {
    const args = [cli, 'run', sheet, '--base-url', sandbox.url, '--json', '--log-format', 'json'];
    const run = await runClient([...args, '--register', register, '--out', out, ...runFlags], CREDENTIALS);
    if (run.code !== 0) throw new Error(`payouts run (${name}) exited ${run.code}: ${run.stderr}`);
    const { statuses } = JSON.parse(run.stdout.trim().split('\n').at(-1));
    const sent = (statuses.submitted ?? 0) + (statuses.completed ?? 0);
    if (sent !== rows)
      throw new Error(`payouts run (${name}) sent ${sent} of ${rows} rows: ${JSON.stringify(statuses)}`);
    const figures = await ledgerFigures(sandbox.url, rows, before);
    return {
      sandboxUrl: sandbox.url,
      payouts: runFlags.join(' '),
      ...figures,
      wallSeconds: Number(run.seconds.toFixed(2)),
      rowsPerSecondWall: Number((rows / run.seconds).toFixed(2)),
      statuses,
    };
  } finally {
    await rm(out, { force: true });
  }
}

async function removeRegister(register) {
  for (const suffix of ['', '-wal', '-shm']) await rm(`${register}${suffix}`, { force: true });
}

/**
 * (d) The same payees two months running against one sandbox and one register: the second
 * month reuses the beneficiaries and recipients the first created.
 */
async function recurringCase(rows) {
  const register = path.join(outDir, 'run-bench-recurring.register.db');
  const months = ['2026-10', '2026-11'].map((month) => path.join(outDir, `run-bench-${month}.csv`));
  await removeRegister(register);
  await writeSheet(months[0], rows, { prefix: 'OCT' });
  await writeSheet(months[1], rows, { prefix: 'NOV' });
  const sandbox = await startSandbox(['--rate-limit', String(RATE_LIMIT)]);
  const flags = ['--rate', String(RATE_LIMIT), '--concurrency', String(CONCURRENCY)];
  try {
    const first = await payoutsRun('recurring-1', months[0], rows, sandbox, flags, register);
    const second = await payoutsRun('recurring-2', months[1], rows, sandbox, flags, register, first.totals);
    return { first, second };
  } finally {
    await sandbox.stop();
    await removeRegister(register);
    for (const file of months) await rm(file, { force: true });
  }
}

/** The same rows through newman against a fresh sandbox started with `sandboxFlags`. */
async function newmanCase(csv, rows, sandboxFlags) {
  const sandbox = await startSandbox(sandboxFlags);
  try {
    const env = {
      baseUrl: sandbox.url,
      authUrl: sandbox.url,
      clientId: CREDENTIALS.PAYOUTS_CLIENT_ID,
      clientSecret: CREDENTIALS.PAYOUTS_CLIENT_SECRET,
      username: CREDENTIALS.PAYOUTS_USERNAME,
      password: CREDENTIALS.PAYOUTS_PASSWORD,
    };
    const run = await runClient([
      newmanBin,
      'run',
      collection,
      '--iteration-data',
      csv,
      ...Object.entries(env).flatMap(([k, v]) => ['--env-var', `${k}=${v}`]),
      '--color',
      'off',
      '--disable-unicode',
    ]);
    if (run.code !== 0)
      throw new Error(`newman exited ${run.code}: ${run.stdout.slice(-4000)} ${run.stderr}`);
    const figures = await ledgerFigures(sandbox.url, rows);
    return {
      sandbox: sandboxFlags.join(' '),
      newman: `newman run bench/newman/collection.json --iteration-data <sheet, every cell quoted>`,
      ...figures,
      wallSeconds: Number(run.seconds.toFixed(2)),
      rowsPerSecondWall: Number((rows / run.seconds).toFixed(2)),
    };
  } finally {
    await sandbox.stop();
  }
}

/** Columns that name the payee: made distinct per row (generate.mjs shares a payee by 3 rows). */
const PAYEE_COLUMNS = new Map([
  ['beneficiaryName', (i) => `Person ${i}`],
  ['beneficiaryEmail', (i) => `person${i}@example.com`],
  ['individualName', (i) => `Person ${i}`],
  ['nickname', (i) => `Payroll ${i}`],
]);

/**
 * Writes the bench sheet: generate.mjs's rows (all seven rails in turn), one payee per row, as a
 * monthly payroll has. With `quoted`, every cell is quoted: that copy is for newman, which turns
 * an unquoted cell that looks like a number into a number (routing 021000021 becomes 21000021,
 * amount 10.00 becomes 10) and leaves a quoted one as text.
 */
async function writeSheet(file, rows, { quoted = false, prefix } = {}) {
  const cell = (c) => (quoted || /[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c);
  const line = (cells) => `${cells.map(cell).join(',')}\r\n`;
  const out = createWriteStream(file);
  let buffer = line(COLUMNS);
  for (let i = 0; i < rows; i += 1) {
    const cells = benchRow(i);
    for (const [column, value] of PAYEE_COLUMNS) cells[COLUMNS.indexOf(column)] = value(i);
    if (prefix) cells[COLUMNS.indexOf('reference')] = `${prefix}-${String(i).padStart(8, '0')}`;
    buffer += line(cells);
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}

export async function runSection(results) {
  const rows = Number(process.env.BENCH_RUN_ROWS ?? 1000);
  const newmanRows = Math.min(rows, Number(process.env.BENCH_NEWMAN_ROWS ?? 100));
  const sheet = path.join(outDir, `run-bench-${rows}.csv`);
  const prefix = path.join(outDir, `run-bench-${newmanRows}.csv`);
  const prefixQuoted = path.join(outDir, `run-bench-${newmanRows}-quoted.csv`);
  console.log(`generating a ${fmt(rows)}-row CSV (and its first ${fmt(newmanRows)} rows for newman) ...`);
  await writeSheet(sheet, rows);
  await writeSheet(prefix, newmanRows);
  await writeSheet(prefixQuoted, newmanRows, { quoted: true });
  const run = { rows, newmanRows, seed: SEED };
  results.run = run;
  try {
    const rateFlags = ['--rate-limit', String(RATE_LIMIT)];
    for (const [key, label, rate] of [
      ['rateLimit', '(a) ', RATE_LIMIT],
      ['rateLimitOvershoot', "(a')", 2 * RATE_LIMIT],
    ]) {
      const c = await payoutsCase(key, sheet, rows, rateFlags, [
        '--rate',
        String(rate),
        '--concurrency',
        String(CONCURRENCY),
      ]);
      const ratio = c.acceptedPerSecond / RATE_LIMIT;
      run[key] = { ...c, limit: RATE_LIMIT, ratio: Number(ratio.toFixed(3)), target: RATE_TARGET };
      console.log(
        `${label} sandbox --rate-limit ${RATE_LIMIT}, payouts --rate ${rate} --concurrency ${CONCURRENCY}, ${fmt(rows)} rows: ` +
          `${fmt(c.acceptedPerSecond, 1)} requests/s accepted (${fmt(c.rateLimited)} answered 429), ` +
          `${fmt(c.requestsPerRow, 2)} requests/row, ${fmt(c.windowSeconds, 1)} s (wall ${fmt(c.wallSeconds, 1)} s): ` +
          `ratio ${ratio.toFixed(3)} of the limit (target ≥ ${RATE_TARGET}) ${verdict(ratio >= RATE_TARGET)}`,
      );
    }

    const latencyFlags = ['--latency', String(LATENCY_MS)];
    const b = await payoutsCase('latency', sheet, rows, latencyFlags, [
      '--concurrency',
      String(CONCURRENCY),
      '--rate',
      String(NO_CLIENT_LIMIT),
    ]);
    const bound = CONCURRENCY / (b.requestsPerRow * (LATENCY_MS / 1000));
    const bRatio = b.rowsPerSecond / bound;
    run.latency = {
      ...b,
      boundRowsPerSecond: Number(bound.toFixed(2)),
      ratio: Number(bRatio.toFixed(3)),
      target: LATENCY_TARGET,
    };
    console.log(
      `(b)  sandbox --latency ${LATENCY_MS}, payouts --concurrency ${CONCURRENCY} (no rate limit), ${fmt(rows)} rows: ` +
        `${fmt(b.rowsPerSecond, 1)} rows/s (wall ${fmt(b.rowsPerSecondWall, 1)}), ${fmt(b.requestsPerRow, 2)} requests/row, ` +
        `bound ${CONCURRENCY} / (${b.requestsPerRow.toFixed(2)} × ${LATENCY_MS / 1000} s) = ${fmt(bound, 1)} rows/s: ` +
        `ratio ${bRatio.toFixed(3)} (target ≥ ${LATENCY_TARGET}) ${verdict(bRatio >= LATENCY_TARGET)}`,
    );

    const n = await newmanCase(prefixQuoted, newmanRows, latencyFlags);
    const seq = await payoutsCase('sequential', prefix, newmanRows, latencyFlags, [
      '--concurrency',
      '1',
      '--rate',
      String(NO_CLIENT_LIMIT),
    ]);
    const ratio = b.rowsPerSecond / n.rowsPerSecond;
    const seqRatio = seq.rowsPerSecond / n.rowsPerSecond;
    run.newman = {
      ...n,
      payoutsRowsPerSecond: b.rowsPerSecond,
      ratio: Number(ratio.toFixed(2)),
      sequential: { ...seq, ratio: Number(seqRatio.toFixed(2)) },
    };
    console.log(
      `(c)  sandbox --latency ${LATENCY_MS}, newman (one request at a time), first ${fmt(newmanRows)} rows: ` +
        `${fmt(n.rowsPerSecond, 2)} rows/s (wall ${fmt(n.rowsPerSecondWall, 2)}), ${fmt(n.requestsPerRow, 2)} requests/row; ` +
        `payouts (b) ÷ newman = ${ratio.toFixed(1)}×`,
    );
    console.log(
      `     the same ${fmt(newmanRows)} rows, payouts --concurrency 1: ${fmt(seq.rowsPerSecond, 2)} rows/s ` +
        `(wall ${fmt(seq.rowsPerSecondWall, 2)}), ${fmt(seq.requestsPerRow, 2)} requests/row; ` +
        `payouts --concurrency 1 ÷ newman = ${seqRatio.toFixed(2)}×`,
    );
    const recurring = await recurringCase(rows);
    run.recurring = { ...recurring, target: RECURRING_TARGET };
    for (const [label, month] of [
      ['(d) month 1 (new payees)', recurring.first],
      ['(d) month 2 (the same payees)', recurring.second],
    ]) {
      console.log(
        `${label}: sandbox --rate-limit ${RATE_LIMIT}, ${fmt(rows)} rows: ${fmt(month.requestsPerRow, 2)} requests/row, ` +
          `${fmt(month.rowsPerSecond, 1)} rows/s, ${fmt(month.acceptedPerSecond, 1)} requests/s accepted`,
      );
    }
    console.log(
      `    month 2 requests/row ${recurring.second.requestsPerRow.toFixed(2)} (target ≤ ${RECURRING_TARGET}) ${verdict(recurring.second.requestsPerRow <= RECURRING_TARGET)}`,
    );
  } finally {
    for (const file of [sheet, prefix, prefixQuoted]) await rm(file, { force: true });
  }
}
