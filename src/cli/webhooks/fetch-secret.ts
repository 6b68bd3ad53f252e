/** `payouts webhooks fetch-secret`: the current secret, fetched encrypted and decrypted. */

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

/** `payouts webhooks secret` and `fetch-secret`: the current secret, fetched encrypted and decrypted. */
export async function webhooksFetchSecretCommand(
  options: WebhooksSecretOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<number> {
  const secret = await withIntegrator(options.connection, log, (client, id) =>
    client.integrators.fetchWebhookSecret(id),
  );
  await deliverSecret(secret, options, io, log);
  return outcomeCode(true);
}

/** Declares `fetch-secret` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function fetchSecretCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'fetch-secret',
    'fetch the webhook secret (encrypted) and decrypt it with the client secret - --reveal or --secret-file',
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
