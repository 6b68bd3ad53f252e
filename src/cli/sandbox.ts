import { type SandboxHandle, sandboxOptionsFromFlags, startSandbox } from '../sandbox/index.js';
import { type CliIo, println } from './io.js';
import { untilSignalled } from './signals.js';

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
  const stopped = options.stopSignal ?? untilSignalled();
  const sandbox = await startSandbox(sandboxOptionsFromFlags(options.flags));
  printBanner(sandbox, io, options.json);
  await stopped;
  await sandbox.close();
  println(io.stderr, 'sandbox stopped');
  return 0;
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
