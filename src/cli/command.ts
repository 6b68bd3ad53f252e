/**
 * The shape of one command of the CLI (src/cli/commands/<name>.ts): a yargs builder for its
 * options and a handler that runs it. A handler resolves to the exit code that
 * `runExitCode` (cli/exit-code.ts) gave for how the command ended, and throws what ended it
 * otherwise; main.ts's top-level handler gives a thrown error its code through the same function.
 */
import type { ArgumentsCamelCase, Argv } from 'yargs';
import type { CliIo } from './io.js';

export interface CommandModule {
  /** Declares the command's options and subcommands; subcommands pass their code to `setExit`. */
  builder(y: Argv, io: CliIo, setExit: (code: number) => void): Argv | Promise<Argv>;
  /** Runs the command from its parsed options (absent for a command of subcommands only). */
  handler?(args: Record<string, unknown>, io: CliIo): Promise<number>;
}

/** The parsed options of a builder's result, as a handler receives them. */
export type ArgsOf<B extends (...args: never[]) => unknown> =
  ReturnType<B> extends Argv<infer T> ? ArgumentsCamelCase<T> : never;
