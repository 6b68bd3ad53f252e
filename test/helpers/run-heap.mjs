// Runs one `payouts run` in this process (node --expose-gc) and prints, as JSON on stdout, the
// V8 heap in use after a forced collection when the last row finished: what the run still
// holds then. Arguments: the compiled dist/ folder, the sheet, the service URL, the register,
// the results file. Credentials are the sandbox's (test/helpers/payouts.ts SANDBOX_ENV).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';

const [dist, sheetPath, baseUrl, register, outPath] = process.argv.slice(2);
const { runBatch } = await import(pathToFileURL(path.join(dist, 'batch', 'run', 'run.js')).href);

let heapUsed;
const report = await runBatch({
  sheetPath,
  connection: {
    baseUrl,
    authUrl: baseUrl,
    credentials: {
      clientId: 'sandbox-client',
      clientSecret: 'sandbox-secret',
      username: 'integrator@example.com',
      password: 'sandbox-password',
    },
  },
  register,
  outPath,
  concurrency: 8,
  logger: pino({ level: 'silent' }),
  onProgress(done, total) {
    if (done !== total) return;
    globalThis.gc();
    heapUsed = process.memoryUsage().heapUsed;
  },
});
process.stdout.write(`${JSON.stringify({ heapUsed, statuses: report.summary.statusCounts() })}\n`);
