/**
 * What new users tripped on, each answered the way a careful user expects: --sheet on a CSV,
 * refused credentials naming no results file, status and validate on a register of several
 * services, and counts in the right number.
 */
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runAgainst, SANDBOX_ENV, testDir, testSandbox } from '../helpers/payouts.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

const TEXT_LOGS = ['--log-format', 'text'];

async function sampleIn(dir: string): Promise<string> {
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return sheet;
}

describe('--sheet', () => {
  it('given for a CSV sheet is a usage error (exit 2) for validate and run, and nothing is written', async () => {
    const dir = await testDir();
    const sheet = await sampleIn(dir);
    for (const command of [['validate'], ['run', '--sandbox']]) {
      const result = await runCli([
        command[0]!,
        sheet,
        ...command.slice(1),
        '--sheet',
        'Payroll',
        ...TEXT_LOGS,
      ]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        `payouts: --sheet names an XLSX worksheet, and ${sheet} is a CSV sheet`,
      );
    }
    expect((await readFile(sheet)).equals(await readFile(CLEAN_SAMPLE))).toBe(true);
    expect(await readdir(dir)).toEqual(['payouts.csv']);
  });
});

describe('refused credentials (exit 3)', () => {
  it('end with a last record that names no results file, since none was written', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sampleIn(dir);
    const result = await runAgainst(sb, sheet, ['--log-format', 'json'], {
      ...SANDBOX_ENV,
      PAYOUTS_PASSWORD: 'not-the-sandbox-password',
    });
    expect(result.code, result.stderr).toBe(3);
    const records = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.at(-1)).toMatchObject({ msg: 'run finished', exitCode: 3, results: null });
    expect(await readdir(dir)).toEqual(['payouts.csv']);
  });
});

describe('a register holding several services', () => {
  it('status names the services that have runs when the one asked for has none', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sampleIn(dir);
    expect((await runAgainst(sb, sheet)).code).toBe(0);
    const result = await runCli(['status', '--base-url', 'https://payouts.other.example'], {
      env: SANDBOX_ENV,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('No runs recorded yet');
    expect(result.stderr).toContain(
      `payouts: the register has no runs of https://payouts.other.example, but it has runs of ${sb.url}`,
    );
    expect(result.stderr).toContain('--base-url');
    // Without the hint every service's runs are listed.
    const all = await runCli(['status'], { env: SANDBOX_ENV });
    expect(all.stdout).toContain(`${sb.url})`);
  });

  it('validate without --base-url says early, and in its JSON summary, that it read no register', async () => {
    const [first, second] = [await testSandbox(), await testSandbox()];
    const dir = await testDir();
    const sheet = await sampleIn(dir);
    expect((await runAgainst(first, sheet, ['--json'])).code).toBe(0);
    // The second sandbox is another service with the same integrator id: declared separate.
    const other = await runAgainst(second, sheet, ['--separate-service', '--json']);
    expect(other.code, other.stderr).toBe(0);

    const result = await runCli(['validate', sheet, '--json', '--no-report', ...TEXT_LOGS], { env: {} });
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(/^Validated .*: 12 rows$/);
    expect(lines[1]).toMatch(/^Warning: the register was not checked, so rows paid before show as valid: /);
    for (const url of [first.url, second.url]) expect(lines[1]).toContain(url);
    expect(lines[1]).toContain('--base-url');
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary['register']).toBeNull();
    expect(summary['registerNotChecked']).toEqual(expect.stringContaining('several services'));
    expect(summary['registerNotChecked']).toEqual(expect.stringContaining(first.url));
  });
});

describe('counts for people', () => {
  it('says "1 row", not "1 rows"', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'one.csv');
    const [header, first] = (await readFile(CLEAN_SAMPLE, 'utf8')).split('\n');
    await writeFile(sheet, `${header}\n${first}\n`);
    const result = await runCli(['validate', sheet, '--no-report', ...TEXT_LOGS], { env: {} });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^Validated .*one\.csv: 1 row$/m);
    expect(result.stderr).not.toMatch(/\b1 rows\b/);
  });
});
