/**
 * An option's value as typed, checked before any command starts. yargs takes `--out` with
 * nothing after it for an empty string and `--concurrency` with nothing for its default, so a
 * cron line that lost its value (`--register $UNSET_VARIABLE`) would run on with the default
 * register; and it turns `--port http` into NaN, which is no help to whoever typed it.
 */
import { UsageError } from '../errors.js';

/** What yargs knows of the command being parsed: which options take a value, which are numbers. */
export interface OptionKinds {
  string?: readonly string[];
  number?: readonly string[];
  array?: readonly string[];
  boolean?: readonly string[];
  /** Options declared with `choices` and no type (`--encoding`). */
  choices?: Readonly<Record<string, unknown>>;
}

/** What an option needs, where saying "a value" would not help: run's own words. */
const NEEDS: Readonly<Record<string, string>> = {
  approve: 'the batch digest that payouts validate printed for this sheet (--approve DIGEST)',
  report: 'a file path (--report PATH), or use --no-report',
  'same-service-as': 'the URL the register knows the service by',
};

/**
 * Throws a usage error for the first option of `argv` that takes a value and has none (nothing
 * after it, another option after it, or an empty `--name=`), or a number option whose value
 * is not a number. A negative number and `-` (standard input) are values.
 */
export function checkOptionValues(argv: readonly string[], kinds: OptionKinds): void {
  const booleans = new Set(kinds.boolean ?? []);
  const numbers = new Set(kinds.number ?? []);
  const takesValue = new Set(
    [
      ...(kinds.string ?? []),
      ...(kinds.number ?? []),
      ...(kinds.array ?? []),
      ...Object.keys(kinds.choices ?? {}),
    ].filter((name) => !booleans.has(name)),
  );
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i]!;
    if (token === '--') return;
    const match = /^--([^=]+)(=(.*))?$/s.exec(token);
    if (match === null || !takesValue.has(match[1]!)) continue;
    const name = match[1]!;
    const value = match[2] === undefined ? argv[i + 1] : match[3]!;
    if (value === undefined || value === '' || (match[2] === undefined && isOption(value)))
      throw new UsageError(
        NEEDS[name] !== undefined
          ? `--${name} needs ${NEEDS[name]}`
          : `--${name} needs a value after it (--${name} VALUE), or leave the option out`,
      );
    if (numbers.has(name) && !DECIMAL.test(value.trim()))
      throw new UsageError(`--${name} must be a number, got "${value}"`);
  }
}

/** A number as people write it: JavaScript would also take 0x10 for 16 and 0b11 for 3. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** `--name` or `-x`, not `-1` or `-`. */
function isOption(token: string): boolean {
  return /^-[^-\d.]/.test(token) || /^--./.test(token) || token === '--';
}
