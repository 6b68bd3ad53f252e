/**
 * yargs' own complaints (a missing argument or option, a value outside its choices, two options
 * that exclude each other, an unknown option) said in the words of the command line: options
 * with their dashes, no camelCase twins, no argument counts. Exit 2 each, with no stack.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('usage errors in words', () => {
  it.each([
    [
      ['webhooks', 'verify'],
      'payouts webhooks verify needs the file holding the raw request body: payouts webhooks verify <body-file> --signature SIGNATURE [options]',
    ],
    [['webhooks', 'verify', 'body.json'], 'payouts webhooks verify needs --signature'],
    [['register', 'copy'], 'payouts register copy needs --from and --to'],
    [['register', 'copy', '--from', 'a.db'], 'payouts register copy needs --to'],
    [
      ['validate', 'x.csv', '--encoding', 'ebcdic'],
      '--encoding must be utf8, utf16le, latin1, windows-1252 or macroman, got "ebcdic"',
    ],
    [['reconcile', '--log-level', 'loud'], '--log-level must be debug, info, warn or error, got "loud"'],
    [
      ['register', 'move', '--from', 'a.db', '--to', 'b.db'],
      'register has no action "move": use copy or init',
    ],
    [['status', '--json', '--csv'], '--json and --csv cannot be given together: choose one'],
    [['webhooks', 'listen', '--bogus-opt'], 'Unknown argument: bogus-opt'],
  ])('%j: exit 2, "%s"', async (args, words) => {
    // status takes no logging options: its errors are text lines whatever the terminal.
    const text = args[0] === 'status' ? [] : ['--log-format', 'text'];
    const result = await runCli([...args, ...text], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`payouts: ${words}\n`);
    expect(result.stderr).not.toMatch(
      /Not enough non-option|Missing required|Invalid values|Argument:|Choices:|bogusOpt|mutually/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('is one JSON record naming the option when logs are JSON lines', async () => {
    const result = await runCli(['reconcile', '--log-format', 'xml'], { env: {} });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({
      level: 60,
      exitCode: 2,
      msg: '--log-format must be json or text, got "xml"',
    });
  });
});
