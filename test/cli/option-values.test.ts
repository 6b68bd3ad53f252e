/**
 * An option typed without its value, or with a number that is not one: a usage error (exit 2)
 * that names the option and what was typed, before the command does anything. yargs alone would
 * run on with the default (`--register` with nothing after it is the default register).
 */
import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

describe('an option without its value', () => {
  it.each([
    [['validate', 'SHEET', '--out'], '--out'],
    [['validate', 'SHEET', '--register', '--no-report'], '--register'],
    [['validate', 'SHEET', '--log-file'], '--log-file'],
    [['validate', 'SHEET', '--log-level'], '--log-level'],
    [['validate', 'SHEET', '--expect-count', '--json'], '--expect-count'],
    [['reconcile', '--max-outage'], '--max-outage'],
    [['status', '--limit'], '--limit'],
    [['webhooks', 'listen', '--port'], '--port'],
    [['validate', 'SHEET', '--out='], '--out'],
  ])('%j is exit 2 naming %s, and nothing is written', async (args, option) => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'sheet.csv');
      await copyFile(SAMPLE, sheet);
      const argv = args.map((a) => (a === 'SHEET' ? sheet : a));
      const result = await runCli([...argv, '--log-format', 'text'], {
        env: { PAYOUTS_WEBHOOK_SECRET: 'whsec-option-values-test' },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `payouts: ${option} needs a value after it (${option} VALUE), or leave the option out`,
      );
      expect(await readdir(dir)).toEqual(['sheet.csv']);
    });
  });

  it('says what --report and --same-service-as need, in their own words', async () => {
    const report = await runCli(['validate', 'sheet.csv', '--report', '--log-format', 'text'], { env: {} });
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(
      'payouts: --report needs a file path (--report PATH), or use --no-report',
    );
    const same = await runCli(['run', 'sheet.csv', '--same-service-as', '--log-format', 'text'], { env: {} });
    expect(same.code).toBe(2);
    expect(same.stderr).toContain(
      'payouts: --same-service-as needs the URL the register knows the service by',
    );
  });

  it('takes a negative number or "-" as a value, not as a missing one', async () => {
    const result = await runCli(['reconcile', '--rate', '-1', '--log-format', 'text'], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--rate must be a positive number, got -1');
  });

  it('is a JSON record when the logs are JSON lines', async () => {
    const result = await runCli(['reconcile', '--since'], { env: {} });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({
      level: 60,
      exitCode: 2,
      msg: '--since needs a value after it (--since VALUE), or leave the option out',
    });
  });
});

describe('a number option given something else', () => {
  it.each([
    [['reconcile', '--concurrency', 'abc'], '--concurrency', 'abc'],
    [['reconcile', '--max-outage', 'soon'], '--max-outage', 'soon'],
    [['status', '--limit', 'ten'], '--limit', 'ten'],
    [['webhooks', 'listen', '--port=http'], '--port', 'http'],
    [['reconcile', '--concurrency', '0x10'], '--concurrency', '0x10'],
  ])('%j is exit 2 quoting what was typed, never NaN', async (args, option, typed) => {
    const result = await runCli([...args, '--log-format', 'text'], {
      env: { PAYOUTS_WEBHOOK_SECRET: 'whsec-option-values-test' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`payouts: ${option} must be a number, got "${typed}"`);
    expect(result.stderr).not.toContain('NaN');
  });
});
