/**
 * `validate --log-file PATH` leaves a record in the file: the summary goes to stderr as text,
 * and the log ends, as run's does, with one `validate finished` record of the counts, totals
 * and exit code, so a cron job's log says what the dry run found.
 */
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

describe('validate --log-file', () => {
  it.each(['json', 'text'])('ends the file with "validate finished" (%s)', async (format) => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'sheet.csv');
      await copyFile(SAMPLE, sheet);
      const logFile = path.join(dir, 'validate.log');
      const result = await runCli(
        ['validate', sheet, '--no-report', '--log-file', logFile, '--log-format', format],
        { env: {} },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`Validated ${sheet}: 12 rows`);
      const lines = (await readFile(logFile, 'utf8')).split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      if (format === 'json') {
        expect(JSON.parse(lines[0]!)).toMatchObject({
          level: 30,
          msg: 'validate finished',
          exitCode: 0,
          rows: 12,
          statuses: { valid: 12, invalid: 0 },
          totals: { USD: '24905.74' },
          results: path.join(dir, 'sheet.results.csv'),
        });
      } else {
        expect(lines[0]).toMatch(/ info {2}validate finished exitCode=0 .*rows=12/);
      }
    });
  });
});
