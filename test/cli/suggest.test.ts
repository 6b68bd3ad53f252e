/** "Did you mean" for mistyped commands and options (cli/suggest.ts), and through the CLI. */
import { describe, expect, it } from 'vitest';
import { editDistance, nearest, withSuggestions } from '../../src/cli/suggest.js';
import { runCli } from '../helpers/cli.js';

describe('did you mean', () => {
  it.each([
    ['validate', 'valdate', 1],
    ['concurrency', 'concurency', 1],
    ['status', 'staus', 1],
    ['run', 'nur', 2],
    ['ab', 'ba', 1],
    ['kitten', 'sitting', 3],
  ])('counts %s -> %s as %i edits', (a, b, n) => {
    expect(editDistance(a, b)).toBe(n);
  });

  it('suggests only what is near enough to be a typo', () => {
    expect(nearest('valdate', ['validate', 'run'])).toBe('validate');
    expect(nearest('retry-unkown', ['retry-unknown', 'rate'])).toBe('retry-unknown');
    expect(nearest('x', ['run', 'status'])).toBeUndefined();
    expect(nearest('sandboxes', ['run', 'status'])).toBeUndefined();
  });

  it('adds the suggestions to yargs message, and leaves other messages alone', () => {
    expect(withSuggestions('Unknown arguments: valdate, s.csv', ['validate'], [])).toBe(
      'Unknown arguments: valdate, s.csv - "valdate": did you mean the command validate?',
    );
    expect(withSuggestions('Unknown argument: concurency', ['run'], ['concurrency', 'rate'])).toBe(
      'Unknown argument: concurency - "concurency": did you mean --concurrency?',
    );
    expect(withSuggestions('Not enough arguments', ['run'], [])).toBe('Not enough arguments');
  });

  it('answers a mistyped command or option with the right one (exit 2)', async () => {
    const command = await runCli(['valdate', 'sheet.csv'], { env: {} });
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('"valdate": did you mean the command validate?');
    const option = await runCli(
      ['run', 'sheet.csv', '--sandbox', '--concurency', '3', '--log-format', 'text'],
      {
        env: {},
      },
    );
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('"concurency": did you mean --concurrency?');
  });

  it('suggests the option, not the command, for a mistyped option (run --sandbx)', async () => {
    expect(
      withSuggestions('Unknown argument: sandbx', ['sandbox'], ['sandbox'], ['run', 'x.csv', '--sandbx']),
    ).toBe('Unknown argument: sandbx - "sandbx": did you mean --sandbox?');
    const result = await runCli(['run', 'sheet.csv', '--sandbx', '--log-format', 'text'], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"sandbx": did you mean --sandbox?');
    expect(result.stderr).not.toContain('the command sandbox');
  });

  it('says what a command is missing and how it is used, not yargs counting arguments', async () => {
    for (const command of ['validate', 'run']) {
      const result = await runCli([command, '--log-format', 'text'], { env: {} });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `payouts ${command} needs the payout sheet: payouts ${command} <sheet.csv|sheet.xlsx> [options]`,
      );
      expect(result.stderr).not.toContain('Not enough non-option arguments');
    }
    // Without a terminal the same error is one JSON record (yargs failed before its options were read).
    const json = await runCli(['validate'], { env: {} });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({
      level: 60,
      exitCode: 2,
      msg: 'payouts validate needs the payout sheet: payouts validate <sheet.csv|sheet.xlsx> [options]',
    });
  });

  it('takes --approve without a digest for a usage error (exit 2), not a refused batch', async () => {
    const result = await runCli(['run', 'sheet.csv', '--sandbox', '--approve', '--log-format', 'text'], {
      env: {},
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--approve needs the batch digest that payouts validate printed');
  });
});
