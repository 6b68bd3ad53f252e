// `npm run bench -- run-scale`: `payouts run` at sizes where memory shows, against an unthrottled
// `payouts sandbox` (no latency, no rate limit) on 127.0.0.1, each in its own child process with
// Node's default heap.
//
// For each size of BENCH_SCALE_ROWS (default 20,000, 100,000 and 1,000,000 rows) on a SQLite
// register, and BENCH_SCALE_PG_ROWS (default 100,000) on a PostgreSQL register (a server the
// bench starts): peak RSS of the `payouts run` process and of the sandbox's, rows per second
// (rows over its wall time, reading and results included) and requests per row (counted by the
// sandbox). Then the resumed run: a run of BENCH_SCALE_RESUMED_ROWS (default 1,000,000) stopped
// by SIGTERM once the sandbox holds half its transactions, and the run that finishes it. Then
// the rehearsal: `payouts run --sandbox` of each size of BENCH_SCALE_REHEARSAL_ROWS (default
// 20,000, 100,000 and 1,000,000), the sandbox inside the run's process, so its peak RSS is both.
//
// Every case against a separate sandbox checks that each reference was paid once (the sandbox's
// ledger counts); every case checks that the results file has a line for every row, and that the
// run's JSON summary (--json, to a file) counts every row sent or already paid (a rehearsal's
// sandbox closes with the run, so there the summary must count every row submitted).
// Targets: the 1,000,000-row run and the resumed one peak under 300 MB, the sandbox that served
// the million under 1 GB; the 100,000-row run at most 1.25 times the peak of the 20,000-row run;
// the 100,000-row rehearsal under 300 MB and at most 1.25 times the 20,000-row one, the
// 1,000,000-row rehearsal under 400 MB.
//
// The sheet is generate.mjs's (the seven rails in turn, payees shared by three rows each).
// Knobs: the sizes above, BENCH_SCALE_CONCURRENCY (default 32), and BENCH_PAYOUTS_CLI to measure
// another build of payouts (an older checkout's dist/cli/main.js) on the same cases.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createReadStream, openSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateCsv } from './generate.mjs';
import { CREDENTIALS, startSandbox } from './run-bench.mjs';
import { startPostgres } from './shared-register.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const outDir = path.join(here, 'out');
const cli = process.env.BENCH_PAYOUTS_CLI ?? path.join(root, 'dist', 'cli', 'main.js');
const MB = 1024 * 1024;
const PEAK_TARGET_MB = 300;
const SHAPE_TARGET = 1.25;
const REHEARSAL_PEAK_TARGET_MB = 400;
const SANDBOX_PEAK_TARGET_MB = 1024;
const CONCURRENCY = Number(process.env.BENCH_SCALE_CONCURRENCY ?? 32);
/** --rate must be a positive number: this one never binds. */
const NO_CLIENT_LIMIT = 100_000;
/** A run that takes longer than this is hung: killed, and the section fails. */
const RUN_TIMEOUT_MS = 3 * 60 * 60_000;

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** `payouts register init`: a run sends nothing to a register that was never made on purpose. */
async function initRegister(location) {
  await promisify(execFile)(process.execPath, [cli, 'register', 'init', location], { cwd: root });
  return location;
}

/** GET /_sandbox/ledger/counts. */
async function ledgerCounts(url) {
  const response = await fetch(`${url}/_sandbox/ledger/counts`);
  if (!response.ok) throw new Error(`GET /_sandbox/ledger/counts answered ${response.status}`);
  return response.json();
}

/**
 * Starts `payouts sandbox` with the RSS reporter preloaded and Node's default heap; resolves to
 * { url, stop } where stop resolves to { maxRssBytes, seconds, cpuSeconds } of the sandbox.
 */
async function startMeasuredSandbox() {
  const report = path.join(
    outDir,
    `scale-sandbox-${process.pid}-${Math.random().toString(36).slice(2)}.json`,
  );
  const sandbox = await startSandbox([], {
    nodeArgs: ['--import', path.join(here, 'rss-report.mjs')],
    env: { BENCH_REPORT: report },
  });
  return {
    url: sandbox.url,
    async stop() {
      await sandbox.stop();
      const measured = await readFile(report, 'utf8').then(JSON.parse, () => undefined);
      await rm(report, { force: true });
      return measured;
    },
  };
}

/**
 * Starts `payouts run` with the RSS reporter preloaded, stdout (the JSON summary) to a file;
 * resolves { child, done } where done resolves to { code, signal, seconds, maxRssBytes, cpuSeconds }.
 */
function startRun(args, summaryFile) {
  const report = path.join(outDir, `scale-report-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const stdout = openSync(summaryFile, 'w');
  const child = spawn(
    process.execPath,
    ['--import', path.join(here, 'rss-report.mjs'), cli, 'run', ...args],
    {
      cwd: root,
      env: { ...process.env, ...CREDENTIALS, BENCH_REPORT: report },
      stdio: ['ignore', stdout, 'pipe'],
    },
  );
  closeSync(stdout);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-8000);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const done = once(child, 'close').then(async ([code, signal]) => {
    clearTimeout(timer);
    const measured = JSON.parse(await readFile(report, 'utf8'));
    await rm(report, { force: true });
    return { code, signal, stderr, ...measured };
  });
  return { child, done };
}

/** Data lines of a CSV results file (the bench's cells hold no line breaks). */
async function resultLines(file) {
  let lines = -1;
  for await (const _ of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) lines += 1;
  return lines;
}

/** The run's JSON summary: the last line of its stdout. */
async function summaryOf(file) {
  const text = await readFile(file, 'utf8');
  return JSON.parse(text.trim().split('\n').at(-1));
}

/** Each reference paid once, every row in the results file and in the summary, or an error. */
async function checkPaidOnce(name, url, rows, results, summaryFile) {
  const counts = await ledgerCounts(url);
  if (counts.references.paid !== rows || counts.references.paidMoreThanOnce !== 0) {
    throw new Error(
      `${name}: the ledger holds ${counts.references.paid} references paid for ${rows} rows, ${counts.references.paidMoreThanOnce} more than once (${counts.references.firstPaidMoreThanOnce.join(', ')})`,
    );
  }
  const lines = await resultLines(results);
  if (lines !== rows) throw new Error(`${name}: the results file has ${lines} rows of ${rows}`);
  const { statuses } = await summaryOf(summaryFile);
  const accounted = statuses.submitted + statuses.completed + statuses.skipped;
  if (accounted !== rows)
    throw new Error(`${name}: the summary accounts for ${accounted} rows: ${JSON.stringify(statuses)}`);
  return { counts, statuses };
}

function runArgs(sheet, sandboxUrl, register, results) {
  return [sheet, '--base-url', sandboxUrl, '--register', register, ...sendingArgs(results)];
}

/** What every case asks of the run beside its service and register. */
function sendingArgs(results) {
  return [
    '--out',
    results,
    '--concurrency',
    String(CONCURRENCY),
    '--rate',
    String(NO_CLIENT_LIMIT),
    '--json',
    '--log-format',
    'json',
    '--log-level',
    'warn',
  ];
}

/** The sandbox's peak RSS in MB, from what its RSS reporter wrote (undefined if it wrote none). */
const sandboxPeakMB = (served) => (served === undefined ? undefined : Math.round(served.maxRssBytes / MB));

/** One `payouts run` of a fresh sheet of `rows` against a fresh sandbox and register. */
async function scaleCase(name, rows, sheet, register, cleanup) {
  const sandbox = await startMeasuredSandbox();
  const results = path.join(outDir, `scale-${name}-${process.pid}.results.csv`);
  const summary = path.join(outDir, `scale-${name}-${process.pid}.summary.json`);
  let entry;
  let served;
  try {
    const { done } = startRun(runArgs(sheet, sandbox.url, register, results), summary);
    const run = await done;
    if (run.code !== 0)
      throw new Error(`${name}: payouts run exited ${run.code ?? run.signal}: ${run.stderr}`);
    const { counts } = await checkPaidOnce(name, sandbox.url, rows, results, summary);
    entry = {
      ...runFigures(name, rows, run),
      requestsPerRow: Number((counts.requests.total / rows).toFixed(2)),
    };
  } finally {
    served = await sandbox.stop();
    for (const file of [results, summary]) await rm(file, { force: true });
    await cleanup();
  }
  return { ...entry, sandboxPeakRssMB: sandboxPeakMB(served) };
}

/** What a finished run of `rows` measured: its time, rows per second, peak RSS and CPU. */
function runFigures(name, rows, run) {
  return {
    case: name,
    rows,
    seconds: Number(run.seconds.toFixed(1)),
    rowsPerSecond: Math.round(rows / run.seconds),
    peakRssMB: Math.round(run.maxRssBytes / MB),
    cpuSeconds: Number(run.cpuSeconds.toFixed(1)),
  };
}

/**
 * One `payouts run --sandbox` of a fresh sheet of `rows`: the sandbox inside the run's process,
 * with a register of its own. Its ledger goes with the run, so the summary must count every row
 * submitted and the results file must have a line for each.
 */
async function rehearsalCase(rows, sheet) {
  const name = `rehearsal-${rows}`;
  const results = path.join(outDir, `scale-${name}-${process.pid}.results.csv`);
  const summary = path.join(outDir, `scale-${name}-${process.pid}.summary.json`);
  try {
    const run = await startRun([sheet, '--sandbox', ...sendingArgs(results)], summary).done;
    if (run.code !== 0)
      throw new Error(`${name}: payouts run --sandbox exited ${run.code ?? run.signal}: ${run.stderr}`);
    const lines = await resultLines(results);
    if (lines !== rows) throw new Error(`${name}: the results file has ${lines} rows of ${rows}`);
    const { statuses } = await summaryOf(summary);
    if (statuses.submitted !== rows)
      throw new Error(
        `${name}: the summary counts ${statuses.submitted} submitted of ${rows}: ${JSON.stringify(statuses)}`,
      );
    return runFigures(name, rows, run);
  } finally {
    for (const file of [results, summary]) await rm(file, { force: true });
  }
}

/** A run stopped by SIGTERM halfway through, then the run that finishes it (the same register). */
async function resumedCase(rows, sheet) {
  const register = path.join(outDir, `scale-resumed-${rows}-${process.pid}.register.db`);
  const removeRegister = () =>
    Promise.all(['', '-wal', '-shm', '.lock'].map((s) => rm(`${register}${s}`, { force: true })));
  await removeRegister();
  await initRegister(register);
  const sandbox = await startMeasuredSandbox();
  const results = path.join(outDir, `scale-resumed-${rows}-${process.pid}.results.csv`);
  const summary = path.join(outDir, `scale-resumed-${rows}-${process.pid}.summary.json`);
  try {
    const first = startRun(runArgs(sheet, sandbox.url, register, results), summary);
    let exited = false;
    first.done.then(() => {
      exited = true;
    });
    while (!exited && (await ledgerCounts(sandbox.url)).transactions < rows / 2) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    first.child.kill('SIGTERM');
    const stopped = await first.done;
    if (stopped.code !== 5)
      throw new Error(`the stopped run exited ${stopped.code ?? stopped.signal}, not 5: ${stopped.stderr}`);
    const paidBefore = (await ledgerCounts(sandbox.url)).references.paid;
    const resumed = await startRun(runArgs(sheet, sandbox.url, register, results), summary).done;
    if (resumed.code !== 0)
      throw new Error(`the resumed run exited ${resumed.code ?? resumed.signal}: ${resumed.stderr}`);
    const { statuses } = await checkPaidOnce('resumed', sandbox.url, rows, results, summary);
    return {
      case: 'sqlite-resumed',
      rows,
      paidBefore,
      alreadyPaid: statuses.skipped,
      stoppedPeakRssMB: Math.round(stopped.maxRssBytes / MB),
      seconds: Number(resumed.seconds.toFixed(1)),
      rowsPerSecond: Math.round((rows - paidBefore) / resumed.seconds),
      peakRssMB: Math.round(resumed.maxRssBytes / MB),
    };
  } finally {
    await sandbox.stop();
    for (const file of [results, summary]) await rm(file, { force: true });
    await removeRegister();
  }
}

function sizes(variable, fallback) {
  const text = process.env[variable] ?? fallback;
  return text === '' ? [] : text.split(',').map(Number);
}

export async function runScaleSection(results) {
  const sqliteSizes = sizes('BENCH_SCALE_ROWS', '20000,100000,1000000');
  const pgSizes = sizes('BENCH_SCALE_PG_ROWS', '100000');
  const resumedSizes = sizes('BENCH_SCALE_RESUMED_ROWS', '1000000');
  const rehearsalSizes = sizes('BENCH_SCALE_REHEARSAL_ROWS', '20000,100000,1000000');
  const sheets = new Map();
  const sheetOf = async (rows) => {
    if (!sheets.has(rows)) {
      const file = path.join(outDir, `scale-${rows}-${process.pid}.csv`);
      console.log(`generating a ${fmt(rows)}-row CSV ...`);
      await generateCsv(file, rows);
      sheets.set(rows, file);
    }
    return sheets.get(rows);
  };
  results.runScale = [];
  const report = (entry) => {
    results.runScale.push(entry);
    console.log(
      `${entry.case} ${fmt(entry.rows)} rows: peak RSS ${entry.peakRssMB} MB, ${fmt(entry.rowsPerSecond)} rows/s (${entry.seconds} s)` +
        (entry.requestsPerRow === undefined ? '' : `, ${entry.requestsPerRow} requests per row`) +
        (entry.sandboxPeakRssMB === undefined ? '' : `; the sandbox peaked at ${entry.sandboxPeakRssMB} MB`) +
        (entry.stoppedPeakRssMB === undefined
          ? ''
          : `; the run stopped at ${fmt(entry.paidBefore)} paid peaked at ${entry.stoppedPeakRssMB} MB`),
    );
  };
  try {
    for (const rows of sqliteSizes) {
      const register = path.join(outDir, `scale-${rows}-${process.pid}.register.db`);
      const removeRegister = () =>
        Promise.all(['', '-wal', '-shm', '.lock'].map((s) => rm(`${register}${s}`, { force: true })));
      await removeRegister();
      await initRegister(register);
      report(await scaleCase(`sqlite-${rows}`, rows, await sheetOf(rows), register, removeRegister));
    }
    if (pgSizes.length > 0) {
      const postgres = await startPostgres();
      try {
        for (const rows of pgSizes) {
          report(
            await scaleCase(
              `postgres-${rows}`,
              rows,
              await sheetOf(rows),
              await initRegister(await postgres.database()),
              async () => {},
            ),
          );
        }
      } finally {
        await postgres.stop();
      }
    }
    for (const rows of resumedSizes) report(await resumedCase(rows, await sheetOf(rows)));
    for (const rows of rehearsalSizes) report(await rehearsalCase(rows, await sheetOf(rows)));
  } finally {
    for (const file of sheets.values()) await rm(file, { force: true });
  }
  const byCase = new Map(results.runScale.map((e) => [e.case, e]));
  const verdict = (ok) => (ok ? 'OK' : 'BELOW TARGET');
  const small = byCase.get('sqlite-20000');
  const mid = byCase.get('sqlite-100000');
  if (small && mid) {
    const ratio = mid.peakRssMB / small.peakRssMB;
    console.log(
      `100,000 rows at ${ratio.toFixed(2)}x the peak of 20,000 (target ≤ ${SHAPE_TARGET}) ${verdict(ratio <= SHAPE_TARGET)}`,
    );
  }
  for (const name of ['sqlite-1000000', 'sqlite-resumed']) {
    const entry = byCase.get(name);
    if (entry?.rows === 1_000_000) {
      console.log(
        `${name}: ${entry.peakRssMB} MB (target < ${PEAK_TARGET_MB} MB) ${verdict(entry.peakRssMB < PEAK_TARGET_MB)}`,
      );
    }
  }
  const served = byCase.get('sqlite-1000000')?.sandboxPeakRssMB;
  if (served !== undefined) {
    console.log(
      `the sandbox that served 1,000,000 rows: ${served} MB (target < ${SANDBOX_PEAK_TARGET_MB} MB) ${verdict(served < SANDBOX_PEAK_TARGET_MB)}`,
    );
  }
  const rehearsalSmall = byCase.get('rehearsal-20000');
  const rehearsalMid = byCase.get('rehearsal-100000');
  if (rehearsalMid) {
    const under = rehearsalMid.peakRssMB < PEAK_TARGET_MB;
    console.log(
      `rehearsal-100000: ${rehearsalMid.peakRssMB} MB (target < ${PEAK_TARGET_MB} MB) ${verdict(under)}`,
    );
  }
  if (rehearsalSmall && rehearsalMid) {
    const ratio = rehearsalMid.peakRssMB / rehearsalSmall.peakRssMB;
    console.log(
      `rehearsal of 100,000 rows at ${ratio.toFixed(2)}x the peak of 20,000 (target ≤ ${SHAPE_TARGET}) ${verdict(ratio <= SHAPE_TARGET)}`,
    );
  }
  const rehearsalLarge = byCase.get('rehearsal-1000000');
  if (rehearsalLarge) {
    const under = rehearsalLarge.peakRssMB < REHEARSAL_PEAK_TARGET_MB;
    console.log(
      `rehearsal-1000000: ${rehearsalLarge.peakRssMB} MB (target < ${REHEARSAL_PEAK_TARGET_MB} MB) ${verdict(under)}`,
    );
  }
}
