/** `payouts webhooks show-url`: the callback URL the service holds. */

import type { Argv } from 'yargs';
import { connectionFromArgs, connectionOptions } from '../connection.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, logOptions } from '../logging.js';
import { printUrl, type WebhooksUrlOptions, withIntegrator } from './integrator.js';

/** `payouts webhooks show-url`: prints the callback URL the service holds. */
export async function webhooksShowUrlCommand(
  options: WebhooksUrlOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<number> {
  const url = await withIntegrator(options.connection, log, (client, id) =>
    client.integrators.getWebhookUrl(id),
  );
  printUrl(url, options.json, io, log);
  return outcomeCode(true);
}

/** Declares `show-url` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function showUrlCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'show-url',
    'show the callback URL the service holds',
    (c) =>
      logOptions(connectionOptions(c)).option('json', {
        type: 'boolean',
        default: false,
        describe: 'print {"url": ...} on stdout',
      }),
    async (args) => {
      const options = { connection: connectionFromArgs(args, io.env), json: args.json };
      setExit(
        await runLifecycle(args, io, async (log) => ({
          exitCode: await webhooksShowUrlCommand(options, io, log),
        })),
      );
    },
  );
}
