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
import { CLI_ENTRY, testDir } from '../helpers/payouts.js';
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
});
