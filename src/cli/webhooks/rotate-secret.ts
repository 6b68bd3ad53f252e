/** `payouts webhooks rotate-secret`: regenerates the secret (docs/service.md "Webhooks") and hands over the new one. */

import type { Argv } from 'yargs';
import { connectionOptions } from '../connection.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, logOptions } from '../logging.js';
import {
  deliverSecret,
  secretFileOutput,
  secretOptionsOf,
  type WebhooksSecretOptions,
  withIntegrator,
} from './integrator.js';

/** `payouts webhooks rotate-secret`: regenerates the secret (docs/service.md "Webhooks") and hands over the new one. */
export async function webhooksRotateSecretCommand(
  options: WebhooksSecretOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<number> {
  const secret = await withIntegrator(options.connection, log, (client, id) =>
    client.integrators.rotateWebhookSecret(id),
  );
  log.tell([
    'webhook secret rotated: the service signs with the new one from now on - restart receivers with it (keep the old one as a second secret until the switch is done)',
  ]);
  await deliverSecret(secret, options, io, log);
  return outcomeCode(true);
}

/** Declares `rotate-secret` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function rotateSecretCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'rotate-secret',
    'regenerate the webhook secret - print it with --reveal or write it to --secret-file',
    (c) => secretFileOutput(logOptions(connectionOptions(c))),
    async (args) => {
      const options = secretOptionsOf(args, io);
      setExit(
        await runLifecycle(args, io, async (log) => ({
          exitCode: await webhooksRotateSecretCommand(options, io, log),
        })),
      );
    },
  );
}
