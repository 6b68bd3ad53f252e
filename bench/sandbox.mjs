// `npm run bench -- sandbox`: mixed API traffic at `payouts sandbox` without a rate limit.
//
// The sandbox runs in its own child process (`node dist/cli/main.js sandbox --port 0 --json`),
// the load generator in this one, so on a 2-core machine each has a core. Every worker is one
// virtual client with one request in flight (undici Pool, pipelining 1, one connection per
// worker) that runs the payout flow of `payouts run` over and over: beneficiary, recipient
// (the rails rotate), simulation, transaction with an Idempotency-Key, then a GET of the
// transaction; every 5th flow first takes a new token and reads /v1/integrators/me, every 10th
// re-sends its transaction with the same key (an idempotent replay). A warm-up is run first and
// not counted. Latency is per request, from send to the last byte of the answer. On Linux it
// also reports the CPU the sandbox, the load generator and every other process used during the
// window: other work on the machine takes cores from both, and the figures then understate the
// sandbox. The sandbox's ledger must count exactly the requests sent, and each reference paid
// once; the sandbox's peak RSS (VmHWM) is reported, with Node's default heap.
//
// Knobs: BENCH_SANDBOX_SECONDS (default 10), BENCH_SANDBOX_WARMUP (seconds, default 2),
// BENCH_SANDBOX_CONNECTIONS (default 48), BENCH_SANDBOX_TRANSACTIONS (stop once the sandbox
// made this many transactions, e.g. 1000000 for the memory of a million; the window is then
// the time that took, up to BENCH_SANDBOX_SECONDS, default an hour). Targets: 3,000
// requests/s; under 1 GB after a million transactions.
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');

const TARGET_RPS = 3000;
const TOKEN_PATH = '/auth/realms/service/protocol/openid-connect/token';
const TOKEN_FORM = new URLSearchParams({
  grant_type: 'password',
  client_id: 'sandbox-client',
  client_secret: 'sandbox-secret',
  username: 'integrator@example.com',
  password: 'sandbox-password',
}).toString();
/** A request may take this long before it counts as hung and fails the run. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Time the child has to print its URL, and to stop after SIGTERM. */
const CHILD_START_MS = 15_000;
const CHILD_STOP_MS = 5_000;

// Valid RecipientRequest bodies, copied from test/rows/fixtures.ts (this file imports dist/ only).
const US_ADDRESS = {
  street1: '1 Main St',
  city: 'New York',
  state: 'NY',
  postalCode: '10001',
  country: 'US',
};
const DE_ADDRESS = {
  street1: 'Taunusanlage 12',
  city: 'Frankfurt',
  state: 'HE',
  postalCode: '60325',
  country: 'DE',
};
const RECIPIENTS = [
  {
    currency: 'USD',
    type: 'ACH',
    details: {
      accountNumber: '000123456789',
      routingNumber: '021000021',
      bankName: 'JPMorgan Chase',
      bankCountry: 'US',
      accountType: 'Checking',
      recipientAddress: US_ADDRESS,
    },
  },
  {
    currency: 'MXN',
    type: 'SPEI',
    details: { clabe: '032180000118359719', bankCode: '032', receiverName: 'Juan Pérez' },
  },
  {
    currency: 'USD',
    type: 'SWIFT',
    details: {
      swiftCode: 'DEUTDEFF',
      bankName: 'Deutsche Bank',
      bankAddress: DE_ADDRESS,
      recipientAddress: DE_ADDRESS,
      iban: 'DE89370400440532013000',
    },
  },
  {
    currency: 'BRL',
    type: 'PIX',
    details: { pixKey: 'joao@example.com', documentNumber: '123.456.789-09' },
  },
  {
    currency: 'COP',
    type: 'COP',
    details: {
      accountType: 'SAVINGS',
      bankAccount: '1234567890',
      bankCode: '1007',
      thirdPartyWithdrawal: false,
    },
  },
  {
    currency: 'USD',
    type: 'RTP',
    details: { accountNumber: '000123456789', routingNumber: '021000021' },
  },
];

/** The requests of the mix, in flow order; `label` keys the per-request figures. */
const STEPS = {
  token: 'POST token',
  me: 'GET /v1/integrators/me',
  beneficiary: 'POST /v1/beneficiaries',
  recipient: 'POST /v1/recipients',
  simulation: 'POST /v1/simulations',
  transaction: 'POST /v1/transactions',
  replay: 'POST /v1/transactions (replay)',
  getTransaction: 'GET /v1/transactions/{id}',
};

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Nearest-rank percentile of an ascending array of milliseconds. */
function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const round2 = (n) => Math.round(n * 100) / 100;

/** CPU seconds (user + system) of a process so far, from /proc; undefined where there is none. */
function procCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Peak RSS of a process in bytes (VmHWM), from /proc; undefined where there is none. */
function procPeakRssBytes(pid) {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** CPU seconds all processes of the machine have been busy so far, from /proc/stat; undefined elsewhere. */
function machineBusySeconds() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu user nice system idle iowait irq softirq steal ... (clock ticks)
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return undefined;
  }
}

/** Starts `payouts sandbox` in a child process; resolves once it has printed its URL. */
function startChild() {
  const args = [cli, 'sandbox', '--port', '0', '--json', '--seed', '1', '--rate-limit', '0'];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (stderr.length > 64 * 1024) stderr = stderr.slice(-32 * 1024);
  });
  const ready = new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`sandbox did not start in ${CHILD_START_MS} ms`)),
      CHILD_START_MS,
    );
    const fail = (error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.on('error', fail);
    child.on('exit', (code, signal) =>
      fail(new Error(`sandbox exited early (${code ?? signal}): ${stderr}`)),
    );
    child.stdout.on('data', (d) => {
      stdout += d;
      const newline = stdout.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.slice(0, newline)));
      } catch (error) {
        reject(new Error(`sandbox printed no JSON banner: ${stdout}`, { cause: error }));
      }
    });
  });
  return { child, ready, stderr: () => stderr };
}

/** SIGTERM, then SIGKILL when it has not exited in time. Never throws. */
async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_MS);
  await exited;
  clearTimeout(timer);
}

/** Figures of one kind of request. */
class Tally {
  constructor() {
    this.latencies = [];
    this.count = 0;
    this.unexpected = 0;
  }
}

/** The load: `connections` workers running payout flows until `measureEnd` or `transactionLimit`. */
async function drive(pool, { connections, measureStart, measureEnd, transactionLimit, abort }) {
  const { signal } = abort;
  const tallies = Object.fromEntries(Object.values(STEPS).map((label) => [label, new Tally()]));
  const problems = [];
  let sent = 0;
  let transactions = 0;
  let lastMeasuredEnd = 0;

  /** One request; the parsed body, or undefined when the status was not `expected`. */
  async function send(label, expected, options) {
    if (signal.aborted) throw signal.reason;
    const started = process.hrtime.bigint();
    sent += 1;
    let statusCode;
    let text;
    try {
      const response = await pool.request({ ...options, signal });
      statusCode = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      statusCode = `network error: ${error.code ?? error.message}`;
    }
    const ended = process.hrtime.bigint();
    const startedMs = Number(started) / 1e6;
    if (startedMs >= measureStart) {
      const tally = tallies[label];
      tally.count += 1;
      tally.latencies.push(Number(ended - started) / 1e6);
      lastMeasuredEnd = Math.max(lastMeasuredEnd, Number(ended) / 1e6);
      if (statusCode !== expected) tally.unexpected += 1;
    }
    if (statusCode !== expected) {
      if (problems.length < 5) problems.push(`${label}: ${statusCode} ${String(text ?? '').slice(0, 300)}`);
      return undefined;
    }
    return text === '' ? {} : JSON.parse(text);
  }

  const json = (token, extra = {}) => ({
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
    ...extra,
  });
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const over = () => now() >= measureEnd || transactions >= transactionLimit;

  async function newToken() {
    const answer = await send(STEPS.token, 200, {
      method: 'POST',
      path: TOKEN_PATH,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: TOKEN_FORM,
    });
    return answer?.access_token;
  }

  async function worker(w) {
    let token;
    for (let flow = 0; !over(); flow += 1) {
      const n = w * 1_000_000 + flow;
      if (token === undefined || flow % 5 === 0) {
        token = await newToken();
        if (token === undefined || over()) continue;
        await send(STEPS.me, 200, { method: 'GET', path: '/v1/integrators/me', headers: json(token) });
        if (over()) break;
      }
      const beneficiary = await send(STEPS.beneficiary, 201, {
        method: 'POST',
        path: '/v1/beneficiaries',
        headers: json(token),
        body: JSON.stringify({
          type: 'INDIVIDUAL',
          name: `Ada Lovelace ${n}`,
          email: `ada.${n}@example.com`,
          country: 'US',
        }),
      });
      if (beneficiary === undefined || over()) continue;
      const rail = RECIPIENTS[n % RECIPIENTS.length];
      const recipient = await send(STEPS.recipient, 201, {
        method: 'POST',
        path: '/v1/recipients',
        headers: json(token),
        body: JSON.stringify({
          individualName: `Ada Lovelace ${n}`,
          beneficiaryId: beneficiary.id,
          nickname: `bench ${n}`,
          ...rail,
        }),
      });
      if (recipient === undefined || over()) continue;
      const simulation = await send(STEPS.simulation, 200, {
        method: 'POST',
        path: '/v1/simulations',
        headers: json(token),
        body: JSON.stringify({
          recipientId: recipient.id,
          amount: `${100 + (n % 9900)}.${String(n % 100).padStart(2, '0')}`,
          currency: rail.currency,
        }),
      });
      if (simulation === undefined || over()) continue;
      const transactionRequest = {
        method: 'POST',
        path: '/v1/transactions',
        headers: json(token, { 'idempotency-key': `bench-${n}` }),
        body: JSON.stringify({ simulationId: simulation.id, reference: `INV-${n}` }),
      };
      const transaction = await send(STEPS.transaction, 201, transactionRequest);
      if (transaction !== undefined) transactions += 1;
      if (transaction === undefined || over()) continue;
      if (flow % 10 === 9) {
        const replay = await send(STEPS.replay, 201, transactionRequest);
        if (replay !== undefined && replay.id !== transaction.id) {
          throw new Error(`idempotent replay gave transaction ${replay.id}, not ${transaction.id}`);
        }
        if (over()) break;
      }
      await send(STEPS.getTransaction, 200, {
        method: 'GET',
        path: `/v1/transactions/${transaction.id}`,
        headers: json(token),
      });
    }
  }

  // One failing worker stops them all, so the run never idles on until its deadline.
  const workers = Array.from({ length: connections }, (_, w) =>
    worker(w).catch((error) => {
      if (!signal.aborted) abort.abort(error);
      throw signal.reason;
    }),
  );
  await Promise.all(workers);
  return { tallies, problems, sent, transactions, lastMeasuredEnd };
}

export async function sandboxSection(results) {
  const transactionLimit = Number(process.env.BENCH_SANDBOX_TRANSACTIONS ?? Number.POSITIVE_INFINITY);
  const untilTransactions = Number.isFinite(transactionLimit);
  const seconds = Number(process.env.BENCH_SANDBOX_SECONDS ?? (untilTransactions ? 3600 : 10));
  const warmup = Number(process.env.BENCH_SANDBOX_WARMUP ?? 2);
  const connections = Number(process.env.BENCH_SANDBOX_CONNECTIONS ?? 48);
  if (
    !(seconds > 0 && warmup >= 0 && Number.isInteger(connections) && connections > 0 && transactionLimit > 0)
  ) {
    throw new Error(
      'BENCH_SANDBOX_SECONDS, BENCH_SANDBOX_WARMUP, BENCH_SANDBOX_CONNECTIONS and BENCH_SANDBOX_TRANSACTIONS must be positive',
    );
  }

  const { child, ready, stderr } = startChild();
  // Whatever happens to this process, the sandbox goes with it.
  const killChild = () => child.kill('SIGKILL');
  const onSignal = (sig) => {
    killChild();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killChild);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const abort = new AbortController();
  // Every request in flight listens to the one signal.
  setMaxListeners(connections * 2 + 16, abort.signal);
  child.on('exit', (code, sig) =>
    abort.abort(new Error(`sandbox exited during the run (${code ?? sig}): ${stderr()}`)),
  );
  // The run is bounded: warm-up, measurement, the slowest request, and a margin.
  const watchdog = setTimeout(
    () => abort.abort(new Error('sandbox bench took too long; aborted')),
    (warmup + seconds) * 1000 + REQUEST_TIMEOUT_MS + 30_000,
  );
  let pool;
  try {
    const { url, seed } = await ready;
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`sandbox is not on 127.0.0.1: ${url}`);
    pool = new Pool(url, {
      connections,
      pipelining: 1,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    console.log(
      `sandbox pid ${child.pid} at ${url} (seed ${seed}); ${connections} connections, pipelining 1, ` +
        `${warmup} s warm-up + ${seconds} s measured ...`,
    );

    const begin = Number(process.hrtime.bigint()) / 1e6;
    const measureStart = begin + warmup * 1000;
    const measureEnd = measureStart + seconds * 1000;
    let cpuAtStart;
    const cpuTimer = setTimeout(
      () => {
        cpuAtStart = {
          server: procCpuSeconds(child.pid),
          client: process.cpuUsage(),
          machine: machineBusySeconds(),
        };
      },
      Math.max(0, measureStart - begin),
    );
    const run = await drive(pool, { connections, measureStart, measureEnd, transactionLimit, abort });
    clearTimeout(cpuTimer);
    const serverCpu = procCpuSeconds(child.pid);
    const clientCpu = process.cpuUsage(cpuAtStart?.client);
    const machineBusy = machineBusySeconds();

    // The sandbox's own counts, as a cross-check of the client's: every request, each reference
    // paid once (a replay makes no second transaction).
    const ledgerAnswer = await pool.request({
      method: 'GET',
      path: '/_sandbox/ledger/counts',
      signal: abort.signal,
    });
    const ledger = JSON.parse(await ledgerAnswer.body.text());
    const serverPeakRss = procPeakRssBytes(child.pid);

    const all = [];
    const mix = {};
    let requests = 0;
    let unexpected = 0;
    for (const [label, tally] of Object.entries(run.tallies)) {
      tally.latencies.sort((a, b) => a - b);
      for (const latency of tally.latencies) all.push(latency);
      requests += tally.count;
      unexpected += tally.unexpected;
      mix[label] = {
        requests: tally.count,
        p50Ms: round2(percentile(tally.latencies, 50)),
        p99Ms: round2(percentile(tally.latencies, 99)),
        unexpectedStatus: tally.unexpected,
      };
    }
    all.sort((a, b) => a - b);
    const windowSeconds = (run.lastMeasuredEnd - measureStart) / 1000;
    const rps = requests / windowSeconds;
    const serverSeconds =
      serverCpu === undefined || cpuAtStart?.server === undefined ? undefined : serverCpu - cpuAtStart.server;
    const clientSeconds = (clientCpu.user + clientCpu.system) / 1e6;
    // Other work on the machine takes cores from both processes: say how much there was.
    const otherSeconds =
      machineBusy === undefined || cpuAtStart?.machine === undefined || serverSeconds === undefined
        ? undefined
        : Math.max(0, machineBusy - cpuAtStart.machine - serverSeconds - clientSeconds);
    const percentOfCore = (cpuSeconds) =>
      cpuSeconds === undefined ? null : Math.round((cpuSeconds / windowSeconds) * 100);
    const entry = {
      connections,
      pipelining: 1,
      warmupSeconds: warmup,
      seconds: round2(windowSeconds),
      requests,
      requestsPerSecond: Math.round(rps),
      p50Ms: round2(percentile(all, 50)),
      p90Ms: round2(percentile(all, 90)),
      p99Ms: round2(percentile(all, 99)),
      maxMs: round2(all[all.length - 1] ?? Number.NaN),
      unexpectedStatus: unexpected,
      target: TARGET_RPS,
      cores: os.availableParallelism(),
      serverCpuPercent: percentOfCore(serverSeconds),
      serverCpuMicrosPerRequest:
        serverSeconds === undefined ? null : Math.round((serverSeconds * 1e6) / requests),
      clientCpuPercent: percentOfCore(clientSeconds),
      otherProcessesCpuPercent: percentOfCore(otherSeconds),
      serverCountedRequests: ledger.requests.total,
      clientSentRequests: run.sent,
      transactionsCreated: ledger.transactions,
      referencesPaid: ledger.references.paid,
      referencesPaidMoreThanOnce: ledger.references.paidMoreThanOnce,
      serverPeakRssMB: serverPeakRss === undefined ? null : Math.round(serverPeakRss / (1024 * 1024)),
      mix,
    };
    results.sandbox = entry;

    for (const [label, m] of Object.entries(mix)) {
      console.log(
        `  ${label.padEnd(32)} ${fmt(m.requests).padStart(7)} requests  p50 ${fmt(m.p50Ms, 2).padStart(6)} ms  ` +
          `p99 ${fmt(m.p99Ms, 2).padStart(6)} ms${m.unexpectedStatus > 0 ? `  ${m.unexpectedStatus} UNEXPECTED` : ''}`,
      );
    }
    console.log(
      `  CPU over the window: sandbox ${entry.serverCpuPercent ?? '?'}% of a core ` +
        `(${entry.serverCpuMicrosPerRequest ?? '?'} µs per request), load generator ${entry.clientCpuPercent}%; ` +
        `other processes ${entry.otherProcessesCpuPercent ?? '?'}% (${entry.cores} cores)\n` +
        `  the sandbox counted ${fmt(entry.serverCountedRequests)} requests ` +
        `(client sent ${fmt(entry.clientSentRequests)}), ${fmt(entry.transactionsCreated)} transactions, ` +
        `${fmt(entry.referencesPaid)} references paid, ${entry.referencesPaidMoreThanOnce} more than once; ` +
        `sandbox peak RSS ${entry.serverPeakRssMB ?? '?'} MB` +
        (untilTransactions ? ` (target < 1,024 MB after ${fmt(transactionLimit)} transactions)` : ''),
    );
    if (entry.referencesPaidMoreThanOnce !== 0 || entry.referencesPaid !== entry.transactionsCreated) {
      console.log('  ERROR: the ledger does not hold each reference paid once');
      process.exitCode = 1;
    }
    if (entry.serverCountedRequests !== entry.clientSentRequests) {
      console.log('  WARNING: the sandbox and the load generator disagree on the request count');
    }
    if (entry.otherProcessesCpuPercent !== null && entry.otherProcessesCpuPercent >= 20) {
      console.log(
        '  NOTE: other processes used the cores during the run; the figures understate the sandbox',
      );
    }
    for (const problem of run.problems) console.log(`  unexpected answer: ${problem}`);
    const verdict = unexpected > 0 ? 'ERRORS' : rps >= TARGET_RPS ? 'OK' : 'BELOW TARGET';
    console.log(
      `mixed API traffic: ${fmt(rps)} requests/s, p50 ${fmt(entry.p50Ms, 2)} ms, p99 ${fmt(entry.p99Ms, 2)} ms ` +
        `(${fmt(requests)} requests in ${fmt(windowSeconds, 1)} s, ${connections} connections) ` +
        `(target ≥ ${fmt(TARGET_RPS)} requests/s, no rate limit) ${verdict}`,
    );
    if (unexpected > 0) process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await pool?.destroy().catch(() => undefined);
    await stopChild(child);
    process.off('exit', killChild);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
