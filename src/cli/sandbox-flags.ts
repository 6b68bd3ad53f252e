import type { Argv } from 'yargs';
import { SANDBOX_FLAGS } from '../sandbox/flags.js';

/** Declares every sandbox flag of SANDBOX_FLAGS as a yargs option, so --help documents them all. */
export function sandboxFlags<T>(y: Argv<T>): Argv<T> {
  let out = y;
  for (const flag of SANDBOX_FLAGS) {
    out = out.option(flag.name, {
      type: flag.type,
      describe: flag.help,
      ...(flag.default === undefined ? {} : { default: flag.default }),
      ...(flag.choices ? { choices: [...flag.choices] } : {}),
    }) as Argv<T>;
  }
  return out;
}
