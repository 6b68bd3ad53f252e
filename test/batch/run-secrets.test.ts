/**
 * No secret in any log, results or checkpoint file: the client secret,
 * the password, any access token, and the sheet's full account numbers (which only the results
 * file may hold, being the sheet itself plus its results).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JWT_PATTERN,
  registerBytes,
  runAgainst,
  SANDBOX_ENV,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { ACCOUNT_COLUMNS, generateRows, type SheetRow, writeSheet } from '../helpers/sheets.js';
import { token } from '../sandbox/helpers.js';

const SECRETS = [SANDBOX_ENV['PAYOUTS_CLIENT_SECRET']!, SANDBOX_ENV['PAYOUTS_PASSWORD']!];

/** Every secret-looking thing found in `text`, named. */
function secretsIn(text: string, accountNumbers: readonly string[]): string[] {
  const found = SECRETS.filter((s) => text.includes(s));
  const jwt = JWT_PATTERN.exec(text);
  if (jwt) found.push(`access token ${jwt[0].slice(0, 12)}…`);
  found.push(...accountNumbers.filter((n) => text.includes(n)).map((n) => `account number ${n}`));
  return found;
}

describe('payouts run keeps secrets out of its files and logs', () => {
  it('writes no credential, token or account number to logs and checkpoints, nor credentials to results', async () => {
    // Tokens die fast (the service's clock runs at 3x), connections break and answers fail,
    // so the logs hold re-authentications, retries and refused rows, not only the happy path.
    const t0 = Date.now();
    const sb = await testSandbox({
      tokenTtl: 2,
      errorRate: 0.1,
      resetRate: 0.05,
      seed: 5,
      clock: { now: () => t0 + (Date.now() - t0) * 3 },
    });
    // The JWT pattern must find a real access token of this sandbox: proves the search works.
    expect(JWT_PATTERN.test(await token(sb))).toBe(true);
    const dir = await testDir();
    const sheet = path.join(dir, 'secrets.csv');
    const rows: SheetRow[] = [
      ...generateRows(40, { prefix: 'SEC' }),
      // Refused by the service: its rows log warnings with the service's words.
      {
        reference: 'SEC-404',
        amount: '5.00',
        currency: 'USD',
        type: 'ACH',
        recipientId: 'no-such-recipient',
      },
    ];
    await writeSheet(sheet, rows);
    const accountNumbers = [
      ...new Set(rows.flatMap((row) => ACCOUNT_COLUMNS.map((c) => row[c] ?? '')).filter((n) => n !== '')),
    ];
    expect(accountNumbers.length).toBeGreaterThanOrEqual(5);

    const logFile = path.join(dir, 'run.log');
    const toFile = await runAgainst(sb, sheet, [
      '--json',
      '--rate',
      '100',
      '--log-file',
      logFile,
      '--log-format',
      'json',
      '--log-level',
      'debug',
      '--wait',
      '2',
    ]);
    expect(toFile.code, toFile.stderr).toBe(1);
    // Run again, logging as text to stderr at debug: the resumed run's logs too.
    const toStderr = await runAgainst(sb, sheet, [
      '--json',
      '--rate',
      '100',
      '--retry-unknown',
      '--log-format',
      'text',
      '--log-level',
      'debug',
    ]);
    expect(toStderr.code, toStderr.stderr).toBe(1);

    const log = await readFile(logFile, 'utf8');
    expect(log).toContain('"msg":"service answered"');
    expect(log).toMatch(/token obtained[\s\S]*token obtained/);
    expect(log).toContain('row not paid');
    expect(toStderr.stderr).toContain('service answered');
    const summary = summaryOf(toFile);
    const register = await registerBytes(summary.register!);
    const results = await readFile(summary.results, 'utf8');

    const everyLog = {
      'log file': log,
      'stderr of the first run': toFile.stderr,
      'stderr of the second run': toStderr.stderr,
    };
    const outputs = { ...everyLog, stdout: toFile.stdout + toStderr.stdout, register };
    for (const [where, text] of Object.entries(outputs)) {
      expect({ where, found: secretsIn(text, accountNumbers) }).toEqual({ where, found: [] });
    }
    // The results file is the sheet plus results: its account numbers are the user's own cells.
    expect({ where: 'results', found: secretsIn(results, []) }).toEqual({ where: 'results', found: [] });
    // Nothing else was left next to the sheet (no stray temporary or lock files).
    expect((await readdir(dir)).sort()).toEqual(['run.log', 'secrets.csv', 'secrets.results.csv'].sort());
  });
});
