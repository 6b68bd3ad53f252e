/**
 * `--json` prints one object on stdout whatever happens: a command that ends on an error before
 * its summary (refused credentials, a missing register, a bad option) prints
 * `{command, exitCode, error: {code, message}}`, as validate and run do, so a script that pipes
 * stdout into a JSON reader always has something to read.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';

describe('--json on an error', () => {
  it.each([
    ['reconcile', ['reconcile', '--json', '--log-format', 'text'], 'CONFIG'],
    ['reconcile', ['reconcile', '--json', '--since', 'someday', '--log-format', 'text'], 'USAGE'],
    [
      'register copy',
      ['register', 'copy', '--from', 'DIR/none.db', '--to', 'DIR/b.db', '--json', '--log-format', 'text'],
      'USAGE',
    ],
    ['status', ['status', '--json', '--limit', '0'], 'USAGE'],
    [
      'approve',
      [
        'approve',
        'DIR/sheet.csv',
        '--statement',
        '--json',
        '--base-url',
        'http://127.0.0.1:9',
        '--register',
        'DIR/none.db',
        '--log-format',
        'text',
      ],
      'STORAGE',
    ],
    [
      'register init',
      ['register', 'init', 'DIR/a-file/register.db', '--json', '--log-format', 'text'],
      'STORAGE',
    ],
  ])('%s %j: one object on stdout with the exit code', async (command, args, code) => {
    await withTempDir(async (dir) => {
      const argv = args.map((a) => a.replace('DIR', dir));
      await writeFile(path.join(dir, 'a-file'), 'not a folder');
      const result = await runCli(argv, { env: {} });
      expect(result.code).toBe(2);
      const printed = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(printed).toMatchObject({ command, exitCode: 2, error: { code } });
      expect(String((printed['error'] as { message: string }).message).length).toBeGreaterThan(10);
      expect(result.stderr).toMatch(/^payouts: /m);
    });
  });

  it('on success too, every --json object carries its exit code: status, register init and copy', async () => {
    await withTempDir(async (dir) => {
      const a = path.join(dir, 'a.db');
      const init = await runCli(['register', 'init', a, '--json'], { env: {} });
      expect(JSON.parse(init.stdout)).toMatchObject({ command: 'register init', created: true, exitCode: 0 });
      const status = await runCli(['status', '--json', '--register', a], { env: {} });
      expect(JSON.parse(status.stdout)).toMatchObject({ runs: [], exitCode: 0 });
      const unknown = await runCli(['status', 'NO-SUCH-REF', '--json', '--register', a], { env: {} });
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stdout)).toMatchObject({ exitCode: 1 });
      const copy = await runCli(['register', 'copy', '--from', a, '--to', path.join(dir, 'b.db'), '--json'], {
        env: {},
      });
      expect(JSON.parse(copy.stdout)).toMatchObject({ conflicts: [], exitCode: 0 });
    });
  });
});
