/**
 * What `npm pack` ships: the samples by name, never what running them left beside them (the
 * quick start writes a rehearsal's results file next to the sample sheet).
 */
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const LEFT_BY_A_RUN = [
  'samples/payouts-clean.sandbox.results.csv',
  'samples/payouts-clean.results.csv',
  'samples/payouts-clean.report.html',
];

describe('the package', () => {
  it('ships the sample sheets and no results file or report left beside them', async () => {
    await Promise.all(LEFT_BY_A_RUN.map((file) => writeFile(path.join(root, file), 'left by a run\n')));
    try {
      const { stdout } = await promisify(execFile)(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts'],
        { cwd: root, env: { ...process.env, npm_config_loglevel: 'silent' } },
      );
      const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
      const samples = packed.files.map((f) => f.path).filter((p) => p.startsWith('samples/'));
      expect(samples.sort()).toEqual([
        'samples/payouts-clean.csv',
        'samples/payouts-clean.xlsx',
        'samples/payouts-mistakes.csv',
      ]);
    } finally {
      await Promise.all(LEFT_BY_A_RUN.map((file) => rm(path.join(root, file), { force: true })));
    }
  });
});
