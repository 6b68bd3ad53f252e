/**
 * The one logging surface (README "Options"): every command that talks to the service or
 * writes takes --log-format, --log-file and --log-level, and with JSON logs its stderr holds
 * JSON lines only, even on a terminal.
 */
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runCli } from '../helpers/cli.js';
import { runAgainst, SANDBOX_ENV, spawnCli, testDir, testSandbox } from '../helpers/payouts.js';
import { testRegisterPath } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

/** Every line of stderr parsed as JSON: fails on any line that is not a JSON record. */
function jsonRecords(stderr: string): Record<string, unknown>[] {
  const lines = stderr.split('\n').filter((line) => line !== '');
  expect(lines.length).toBeGreaterThan(0);
  return lines.map((line) => {
    expect(line, 'a stderr line that is no JSON record').toMatch(/^\{.*\}$/);
    return JSON.parse(line) as Record<string, unknown>;
  });
}

async function paidSample(): Promise<{ sb: Awaited<ReturnType<typeof testSandbox>>; dir: string }> {
  const sb = await testSandbox();
  const dir = await testDir();
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  const paid = await runAgainst(sb, sheet, ['--json']);
  expect(paid.code, paid.stderr).toBe(0);
  return { sb, dir };
}

describe('--log-format json', () => {
  it('reconcile: JSON lines only, its summary one record; text when asked', async () => {
    const { sb } = await paidSample();
    const json = await runCli(['reconcile', '--base-url', sb.url, '--log-format', 'json'], {
      env: SANDBOX_ENV,
    });
    expect(json.code, json.stderr).toBe(0);
    const records = jsonRecords(json.stderr);
    const summary = records.find((r) => r['msg'] === 'summary');
    expect(summary?.['lines']).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Reconciled 12 payouts of /)]),
    );
    expect(records.at(-1)).toMatchObject({ msg: 'reconcile finished', exitCode: 0 });

    const text = await runCli(['reconcile', '--base-url', sb.url, '--log-format', 'text'], {
      env: SANDBOX_ENV,
    });
    expect(text.code).toBe(0);
    // Nothing is left to ask the second time: said so, with what is final.
    expect(text.stderr).toMatch(/^payouts: nothing to reconcile: 12 payouts already final, of /m);
  });

  it('register copy: JSON lines only, and its --log-file', async () => {
    const dir = await testDir();
    await paidSample();
    const to = path.join(dir, 'copy.db');
    const copied = await runCli(
      ['register', 'copy', '--from', testRegisterPath(), '--to', to, '--log-format', 'json'],
      { env: {} },
    );
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toMatch(/^Copied /);
    expect(jsonRecords(copied.stderr).at(-1)).toMatchObject({ msg: 'register copied', exitCode: 0 });

    const log = path.join(dir, 'copy.log');
    const again = await runCli(
      ['register', 'copy', '--from', testRegisterPath(), '--to', to, '--log-file', log],
      { env: {} },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(jsonRecords(await readFile(log, 'utf8')).at(-1)).toMatchObject({ msg: 'register copied' });
  });

  it('validate: JSON lines only even on a terminal, no progress drawn among them', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    let err = '';
    stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
    });
    const code = await main(['validate', sheet, '--no-report', '--log-format', 'json'], {
      stdout: new PassThrough(),
      stderr,
      env: {},
      cwd: dir,
    });
    expect(code).toBe(0);
    const records = jsonRecords(err);
    expect(records.find((r) => r['msg'] === 'summary')?.['lines']).toEqual(
      expect.arrayContaining([`Validated ${sheet}: 12 rows`]),
    );
  });

  it('--log-file: the error that ends a command is its last record there, and one text line on stderr', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const log = path.join(dir, 'validate.log');
    const result = await runCli(['validate', sheet, '--sheet', 'Payroll', '--log-file', log], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(/^payouts: --sheet names an XLSX worksheet/);
    expect(jsonRecords(await readFile(log, 'utf8')).at(-1)).toMatchObject({
      level: 60,
      code: 'USAGE',
      exitCode: 2,
      msg: expect.stringContaining('--sheet names an XLSX worksheet'),
    });
  });

  it('webhooks listen (the compiled CLI): JSON lines only from start to stop, exit 0', async () => {
    const listen = spawnCli(['webhooks', 'listen', '--port', '0', '--log-format', 'json'], {
      PAYOUTS_WEBHOOK_SECRET: 'whsec-log-format-0123456789',
    });
    expect(await listen.whenLines('webhook receiver listening', 1)).toBe(true);
    listen.child.kill('SIGTERM');
    const exit = await listen.exited;
    expect(exit.code, exit.stderr).toBe(0);
    const records = jsonRecords(exit.stderr);
    expect(records[0]).toMatchObject({ msg: 'webhook receiver listening' });
    expect(records.at(-1)).toMatchObject({ msg: 'webhook receiver stopped' });
  });
});
