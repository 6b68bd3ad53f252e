import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server for the run; each test file makes its own database on it.
    globalSetup: ['test/helpers/postgres-server.ts'],
  },
});
