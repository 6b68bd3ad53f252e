/**
 * What a person reads at a terminal (README "At a terminal"): the summary, warnings and errors;
 * no `info` record unless asked for (one repeats the summary); no warning about the empty
 * throwaway register of a rehearsal; the guards given confirmed in the summary; each time of
 * `status` labelled. Run under a pseudo-terminal (util-linux `script`), as a person would.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_ENTRY, SANDBOX_ENV, testDir, testSandbox } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';

/** util-linux's `script` gives a command a pseudo-terminal (installed with util-linux in CI). */
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

/** What a terminal shows for `payouts ...args` run in `cwd` (carriage returns removed). */
async function atTerminal(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const quoted = [process.execPath, CLI_ENTRY, ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qec', `${quoted}; echo EXIT=$?`, '/dev/null'], {
    cwd,
    env: { PATH: process.env['PATH'], HOME: cwd, TERM: 'dumb', ...env },
    timeout: 60_000,
  });
  return stdout.replaceAll('\r', '');
}

describe.skipIf(!HAS_SCRIPT)('at a terminal', { timeout: 90_000 }, () => {
  it('run --sandbox prints its summary, and no info record and no empty-register warning', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const shown = await atTerminal(['run', sheet, '--sandbox'], dir);
    expect(shown).toContain('EXIT=0');
    expect(shown).toContain(`Rehearsed ${sheet}: 12 rows against the embedded sandbox`);
    expect(shown).toContain('  submitted         12');
    expect(shown).not.toMatch(/ info /);
    expect(shown).not.toContain('the register has no payouts of this service');
    // Asked for, the info records are there.
    const verbose = await atTerminal(['run', sheet, '--sandbox', '--log-level', 'info'], dir);
    expect(verbose).toMatch(/ info {2}run finished exitCode=0/);
  });

  it('validate confirms the control totals given, each with its mark', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const shown = await atTerminal(
      [
        'validate',
        sheet,
        '--expect-count',
        '12',
        '--expect-total',
        'USD=24905.74',
        '--expect-total',
        'MXN=19200',
      ],
      dir,
    );
    expect(shown).toContain('EXIT=0');
    expect(shown).toContain('Control totals: 12 rows ✓, MXN 19,200.00 ✓, USD 24,905.74 ✓');
  });

  it('reconcile with every payout final says there is nothing to reconcile; status labels when a run started and finished', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const env = { ...SANDBOX_ENV, PAYOUTS_REGISTER: initTestRegister(path.join(dir, 'register.db')) };
    expect(await atTerminal(['run', sheet, '--base-url', sb.url, '--wait', '10'], dir, env)).toContain(
      'EXIT=',
    );
    await atTerminal(['reconcile', '--base-url', sb.url], dir, env);
    const again = await atTerminal(['reconcile', '--base-url', sb.url], dir, env);
    expect(again).toContain('EXIT=0');
    expect(again).toContain('payouts: nothing to reconcile: 12 payouts already final');
    const status = await atTerminal(['status'], dir, env);
    expect(status).toMatch(
      /^started \d{4}-\d\d-\d\dT[\d:.]+Z, finished \d{4}-\d\d-\d\dT[\d:.]+Z: payouts\.csv, 12 rows/m,
    );
  });
});
