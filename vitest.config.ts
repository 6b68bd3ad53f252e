import { defineConfig } from 'vitest/config';

/**
 * End-to-end files: they run whole batches against a sandbox, spawn the compiled command,
 * kill it, fill a disk, drive a browser or need the test PostgreSQL server (the register's
 * contract suite runs on both stores). `npm run test:unit` leaves them out and so starts no
 * server and builds nothing; `npm test` runs everything.
 */
const END_TO_END = [
  'test/register/contract.test.ts',
  'test/batch/run-*.test.ts',
  'test/batch/validate-worker.test.ts',
  'test/cli/**/*.test.ts',
  'test/webhooks/cli.test.ts',
  'test/webhooks/events-disk.test.ts',
  'test/webhooks/register-faults*.test.ts',
  'test/webhooks/hostile.test.ts',
  'test/proxy/*.test.ts',
  'test/report/browser.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker less than the cores: one worker on a 2-core machine. Most
    // end-to-end time is waiting (a sandbox's latency, a child process, a deadline), so three
    // files at a time keep 2 cores busy without starving the timed checks.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: END_TO_END,
          // Fast files in two threads that keep their modules between files: starting a fork
          // and importing anew per file cost more than the tests themselves (87 s against 42).
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: END_TO_END,
          // dist/ rebuilt when older than src/ (these tests run it); then one PostgreSQL server
          // for the run, on which each test file makes its own database.
          globalSetup: ['test/helpers/build-dist.ts', 'test/helpers/postgres-server.ts'],
        },
      },
    ],
  },
});
