/**
 * `--json` prints one object on stdout whatever happens: a command that ends on an error before
 * its summary (refused credentials, a missing register, a bad option) prints
 * `{command, exitCode, error: {code, message}}`, as validate and run do, so a script that pipes
 * stdout into a JSON reader always has something to read.
 */
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
  ])('%s %j: one object on stdout with the exit code', async (command, args, code) => {
    await withTempDir(async (dir) => {
      const argv = args.map((a) => a.replace('DIR', dir));
      const result = await runCli(argv, { env: {} });
      expect(result.code).toBe(2);
      const printed = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(printed).toMatchObject({ command, exitCode: 2, error: { code } });
      expect(String((printed['error'] as { message: string }).message).length).toBeGreaterThan(10);
      expect(result.stderr).toMatch(/^payouts: /m);
    });
  });
});
