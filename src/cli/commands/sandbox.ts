/** `payouts sandbox` (README "Commands"): the local simulator of the service, on 127.0.0.1. */
import type { Argv } from 'yargs';
import { type SandboxHandle, sandboxOptionsFromFlags, startSandbox } from '../../sandbox/index.js';
import type { ArgsOf } from '../command.js';
import { outcomeCode } from '../exit-code.js';
import { type CliIo, println } from '../io.js';
import { sandboxFlags } from '../sandbox-flags.js';
import { untilStopped } from '../signals.js';

export interface SandboxCommandOptions {
  flags: Record<string, unknown>;
  json: boolean;
  /** Resolves when the sandbox should stop; SIGINT or SIGTERM by default. */
  stopSignal?: Promise<void>;
}

/** `payouts sandbox`: serves the simulator until SIGINT/SIGTERM; returns the exit code. */
export async function sandboxCommand(options: SandboxCommandOptions, io: CliIo): Promise<number> {
  // Listening for the signals before the banner: a signal that follows the printed URL at once
  // must stop the sandbox cleanly, not kill it.
  const stop = untilStopped(options.stopSignal);
  try {
    const sandbox = await startSandbox(sandboxOptionsFromFlags(options.flags));
    printBanner(sandbox, io, options.json);
    await stop.stopped;
    await sandbox.close();
    println(io.stderr, 'sandbox stopped');
    // Stopping is how a sandbox ends: a signal here is no interrupted run.
    return outcomeCode(true);
  } finally {
    stop.dispose();
  }
}

function printBanner(sandbox: SandboxHandle, io: CliIo, json: boolean): void {
  const { credentials } = sandbox;
  if (json) {
    io.stdout.write(`${JSON.stringify({ url: sandbox.url, port: sandbox.port, seed: sandbox.seed })}\n`);
  }
  const lines = [
    `payouts sandbox listening on ${sandbox.url} (seed ${sandbox.seed})`,
    `  base URL and auth URL: ${sandbox.url}`,
    `  client: ${credentials.clientId} / ${credentials.clientSecret}`,
    `  user:   ${credentials.username} / ${credentials.password}`,
    `  second integrator (for 403 checks): ${credentials.otherUsername} / ${credentials.otherPassword}`,
    `  ledger: ${sandbox.url}/_sandbox/ledger`,
    'Stop with Ctrl-C.',
  ];
  for (const line of lines) println(io.stderr, line);
}

/** sandbox's options: every fault and limit flag, and --json. */
function options(y: Argv) {
  return sandboxFlags(y).option('json', {
    type: 'boolean',
    default: false,
    describe: 'print {url, port, seed} as JSON on stdout',
  });
}

export const builder = options;

/** Runs the sandbox from its flags. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return sandboxCommand({ flags: args as Record<string, unknown>, json: Boolean(args.json) }, io);
}
