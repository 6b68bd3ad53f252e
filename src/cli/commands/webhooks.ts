/**
 * `payouts webhooks ...` (README "Commands"): a command of subcommands, one file each under
 * src/cli/webhooks/ (webhooks.ts declares them); each passes its exit code to `setExit`.
 */
import type { Argv } from 'yargs';
import type { CliIo } from '../io.js';
import { webhooksCommands } from '../webhooks.js';

export function builder(y: Argv, io: CliIo, setExit: (code: number) => void): Argv {
  return webhooksCommands(y, io, setExit);
}
