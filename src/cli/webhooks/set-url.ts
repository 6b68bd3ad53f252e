/** `payouts webhooks set-url`: sets (or with --clear removes) the callback URL. */

import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { callbackUrlProblem } from '../../webhooks/callback-url.js';
import { connectionFromArgs, connectionOptions } from '../connection.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, logOptions } from '../logging.js';
import { printUrl, type WebhooksUrlOptions, withIntegrator } from './integrator.js';

export interface WebhooksSetUrlOptions extends WebhooksUrlOptions {
  /** The new callback URL, or null to remove it. */
  url: string | null;
}

/** `payouts webhooks set-url`: sets (or with --clear removes) the callback URL. */
export async function webhooksSetUrlCommand(
  options: WebhooksSetUrlOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<number> {
  if (options.url !== null) {
    // docs/service.md "Webhooks", and the README's rule for plain http: loopback only.
    const problem = callbackUrlProblem(options.url);
    if (problem !== undefined) throw new UsageError(`set-url: ${problem}`);
  }
  const url = await withIntegrator(options.connection, log, (client, id) =>
    client.integrators.setWebhookUrl(id, options.url),
  );
  printUrl(url, options.json, io, log);
  return outcomeCode(true);
}

/** Declares `set-url` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function setUrlCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'set-url [url]',
    'set the callback URL the service posts events to (https://, or http:// to loopback)',
    (c) =>
      logOptions(connectionOptions(c))
        .positional('url', { type: 'string', describe: 'the callback URL' })
        .option('clear', { type: 'boolean', default: false, describe: 'remove the callback URL' })
        .option('json', { type: 'boolean', default: false, describe: 'print {"url": ...} on stdout' }),
    async (args) => {
      const neitherOrBoth = (args.url === undefined) !== args.clear;
      if (neitherOrBoth) {
        throw new UsageError('set-url: give the callback URL, or --clear to remove it (not both)');
      }
      const options = {
        connection: connectionFromArgs(args, io.env),
        url: args.url ?? null,
        json: args.json,
      };
      setExit(
        await runLifecycle(args, io, async (log) => ({
          exitCode: await webhooksSetUrlCommand(options, io, log),
        })),
      );
    },
  );
}
