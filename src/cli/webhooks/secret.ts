/** `payouts webhooks secret`: the current secret, masked with a fingerprint unless --reveal; --secret-file saves it. */
import type { Argv } from 'yargs';
import { connectionOptions } from '../connection.js';
import type { CliIo } from '../io.js';
import { runLifecycle } from '../lifecycle.js';
import { logOptions } from '../logging.js';
import { webhooksFetchSecretCommand } from './fetch-secret.js';
import { secretFileOutput, secretOptionsOf } from './integrator.js';

/** Declares `secret` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function secretCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'secret',
    'show the current webhook secret: masked with a fingerprint, itself with --reveal, or saved with --secret-file',
    (c) => secretFileOutput(logOptions(connectionOptions(c))),
    async (args) => {
      const options = secretOptionsOf(args, io);
      setExit(
        await runLifecycle(args, io, async (log) => ({
          exitCode: await webhooksFetchSecretCommand(options, io, log),
        })),
      );
    },
  );
}
