/**
 * `payouts webhooks ...` (README "Commands"): receive and verify webhook events; set the callback URL;
 * show, rotate and fetch the webhook secret. One file per subcommand under src/cli/webhooks/;
 * this one only declares them on the `webhooks` builder. The work is in src/webhooks and
 * src/api/integrators.ts.
 *
 * A webhook secret is printed only with --reveal or written only to --secret-file (mode 0600);
 * otherwise it appears masked with a fingerprint. Logs never carry a secret or a full account
 * number.
 */
import type { Argv } from 'yargs';
import type { CliIo } from './io.js';
import { fetchSecretCommand } from './webhooks/fetch-secret.js';
import { listenCommand } from './webhooks/listen.js';
import { rotateSecretCommand } from './webhooks/rotate-secret.js';
import { secretCommand } from './webhooks/secret.js';
import { setUrlCommand } from './webhooks/set-url.js';
import { showUrlCommand } from './webhooks/show-url.js';
import { verifyCommand } from './webhooks/verify.js';

export { webhooksFetchSecretCommand } from './webhooks/fetch-secret.js';
export type { WebhooksSecretOptions, WebhooksUrlOptions } from './webhooks/integrator.js';
export { DEFAULT_LISTEN_PORT, type WebhooksListenOptions, webhooksListenCommand } from './webhooks/listen.js';
export { webhooksRotateSecretCommand } from './webhooks/rotate-secret.js';
export { WEBHOOK_SECRET_ENV } from './webhooks/secret-input.js';
export { type WebhooksSetUrlOptions, webhooksSetUrlCommand } from './webhooks/set-url.js';
export { webhooksShowUrlCommand } from './webhooks/show-url.js';
export { type WebhooksVerifyOptions, webhooksVerifyCommand } from './webhooks/verify.js';

/** The `webhooks` command's line in `payouts --help`. */
export const WEBHOOKS_DESCRIPTION =
  'receive and verify webhook events - set the callback URL - show, rotate and fetch the webhook secret';

/** The subcommands, in the order `payouts webhooks --help` lists them. */
const SUBCOMMANDS = [
  listenCommand,
  setUrlCommand,
  showUrlCommand,
  secretCommand,
  rotateSecretCommand,
  fetchSecretCommand,
  verifyCommand,
] as const;

/**
 * Declares the `webhooks` subcommands on `y` (the builder of the `webhooks` command); each
 * handler passes its exit code to `setExit`. Errors are thrown for the top-level handler.
 */
export function webhooksCommands<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  const declared = SUBCOMMANDS.reduce((argv, declare) => declare(argv, io, setExit), y);
  return declared.demandCommand(
    1,
    'name a webhooks command: listen, set-url, show-url, secret, rotate-secret, fetch-secret or verify',
  ) as Argv<T>;
}
