/**
 * `payouts webhooks ...` (PRODUCT.md): receive and verify webhook events; set the callback URL;
 * show, rotate and fetch the webhook secret. Argument parsing only: the work is in src/webhooks
 * and src/api/integrators.ts.
 *
 * A webhook secret is printed only with --reveal or written only to --secret-file (mode 0600);
 * otherwise it appears masked with a fingerprint. Logs never carry a secret or a full account
 * number.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Argv } from 'yargs';
import { ConfigError, UsageError } from '../errors.js';
import { callbackUrlProblem, isLoopbackHost } from '../sandbox/callback-url.js';
import type { EventRecord } from '../webhooks/events-file.js';
import {
  RECEIVER_DEFAULTS,
  type ReceiverNotice,
  startReceiver,
  type WebhookReceiver,
} from '../webhooks/receiver.js';
import { maskSecret, readSecretFile, secretFingerprint, writeSecretFile } from '../webhooks/secret.js';
import { verifySignature } from '../webhooks/signature.js';
import {
  type Connection,
  type ConnectionArgs,
  clientFor,
  connectionFromArgs,
  connectionOptions,
} from './connection.js';
import { type CliIo, println } from './io.js';
import { createLogger } from './logging.js';
import { untilSignalled } from './signals.js';

/** The `webhooks` command's line in `payouts --help`. */
export const WEBHOOKS_DESCRIPTION =
  'receive and verify webhook events - set the callback URL - show, rotate and fetch the webhook secret';

/** Where the webhook secret comes from when no --secret or --secret-file is given. */
export const WEBHOOK_SECRET_ENV = {
  current: 'PAYOUTS_WEBHOOK_SECRET',
  /** The secret before the last rotation, still accepted while the service switches (SPEC.md 6.4). */
  previous: 'PAYOUTS_WEBHOOK_PREVIOUS_SECRET',
} as const;

/** The port `payouts webhooks listen` uses when --port is not given (the sandbox's is 8787). */
export const DEFAULT_LISTEN_PORT = 8788;

// ---------------------------------------------------------------------------------------------
// Command functions: typed options and a CliIo in, exit code out.
// ---------------------------------------------------------------------------------------------

export interface WebhooksListenOptions {
  host: string;
  port: number;
  path: string;
  /** JSONL file of events received (none: nothing is recorded). */
  eventsFile: string | undefined;
  /** Current secret first, then any previous one still accepted. */
  secrets: string[];
  /** Resolves when the receiver should stop; SIGINT or SIGTERM by default. */
  stopSignal?: Promise<void>;
  /** Told the running receiver (tests use its URL). */
  onListening?: (receiver: WebhookReceiver) => void;
}

/** `payouts webhooks listen`: runs the receiver until stopped, one log line per event. */
export async function webhooksListenCommand(options: WebhooksListenOptions, io: CliIo): Promise<number> {
  const logger = createLogger({ stderr: io.stderr });
  const receiver = await startReceiver({
    host: options.host,
    port: options.port,
    path: options.path,
    secrets: options.secrets,
    eventsFile: options.eventsFile,
    onEvent: (record) => logger.info(eventFields(record), 'webhook event'),
    onNotice: (notice) => logNotice(logger, notice),
  });
  logger.info(
    {
      url: receiver.url,
      events: options.eventsFile ?? null,
      eventsAlreadyRecorded: receiver.stats.loaded,
      secretFingerprints: options.secrets.map(secretFingerprint),
    },
    'webhook receiver listening',
  );
  if (!isLoopbackHost(options.host)) {
    logger.warn(
      { host: options.host },
      'serving plain HTTP beyond loopback: the service must reach it through an HTTPS front',
    );
  }
  if (options.eventsFile === undefined) {
    logger.warn('no --events file: events are only logged, and duplicates are caught only until it stops');
  }
  options.onListening?.(receiver);
  await (options.stopSignal ?? untilSignalled());
  await receiver.close();
  logger.info({ ...receiver.stats }, 'webhook receiver stopped');
  logger.flush();
  return 0;
}

export interface WebhooksUrlOptions {
  connection: Connection;
  json: boolean;
}

/** `payouts webhooks show-url`: the callback URL the service holds. */
export async function webhooksShowUrlCommand(options: WebhooksUrlOptions, io: CliIo): Promise<number> {
  const url = await withIntegrator(options.connection, (client, id) => client.integrators.getWebhookUrl(id));
  printUrl(url, options.json, io);
  return 0;
}

export interface WebhooksSetUrlOptions extends WebhooksUrlOptions {
  /** The new callback URL, or null to remove it. */
  url: string | null;
}

/** `payouts webhooks set-url`: sets (or with --clear removes) the callback URL. */
export async function webhooksSetUrlCommand(options: WebhooksSetUrlOptions, io: CliIo): Promise<number> {
  if (options.url !== null) {
    // SPEC.md 6.1 item 5, and PRODUCT.md's rule for plain http: loopback only.
    const problem = callbackUrlProblem(options.url);
    if (problem !== undefined) throw new UsageError(`set-url: ${problem}`);
  }
  const url = await withIntegrator(options.connection, (client, id) =>
    client.integrators.setWebhookUrl(id, options.url),
  );
  printUrl(url, options.json, io);
  return 0;
}

export interface WebhooksSecretOptions {
  connection: Connection;
  /** Print the secret itself on stdout. */
  reveal: boolean;
  /** Write the secret to this file (mode 0600) instead of printing it. */
  secretFile: string | undefined;
  json: boolean;
}

/** `payouts webhooks secret` and `fetch-secret`: the current secret, fetched encrypted and decrypted. */
export async function webhooksFetchSecretCommand(options: WebhooksSecretOptions, io: CliIo): Promise<number> {
  const secret = await withIntegrator(options.connection, (client, id) =>
    client.integrators.fetchWebhookSecret(id),
  );
  await deliverSecret(secret, options, io);
  return 0;
}

/** `payouts webhooks rotate-secret`: regenerates the secret (SPEC.md 6.4) and hands over the new one. */
export async function webhooksRotateSecretCommand(
  options: WebhooksSecretOptions,
  io: CliIo,
): Promise<number> {
  const secret = await withIntegrator(options.connection, (client, id) =>
    client.integrators.rotateWebhookSecret(id),
  );
  println(
    io.stderr,
    `webhook secret rotated: the service signs with the new one from now on - restart receivers with it (keep the old one as a second secret until the switch is done)`,
  );
  await deliverSecret(secret, options, io);
  return 0;
}

export interface WebhooksVerifyOptions {
  bodyFile: string;
  signature: string;
  secrets: string[];
}

/** `payouts webhooks verify`: 0 when the signature matches the body under one of the secrets, else 1. */
export async function webhooksVerifyCommand(options: WebhooksVerifyOptions, io: CliIo): Promise<number> {
  let body: Buffer;
  try {
    body = await readFile(options.bodyFile);
  } catch (error) {
    throw new UsageError(
      `verify: cannot read the body file ${options.bodyFile}: ${(error as NodeJS.ErrnoException).code}`,
    );
  }
  if (verifySignature(body, options.signature, options.secrets)) {
    println(io.stderr, `signature valid for ${options.bodyFile} (${body.length} bytes)`);
    return 0;
  }
  println(
    io.stderr,
    `signature does not match ${options.bodyFile} (${body.length} bytes) under ${plural(options.secrets.length, 'secret')} ${options.secrets.map(secretFingerprint).join(', ')} - the body must be the raw bytes as received, not re-formatted JSON`,
  );
  return 1;
}

// ---------------------------------------------------------------------------------------------
// yargs wiring
// ---------------------------------------------------------------------------------------------

interface SecretOutputArgs extends ConnectionArgs {
  reveal: boolean;
  json: boolean;
  'secret-file'?: string;
}

interface SecretInputArgs {
  secret?: string[];
  'secret-file'?: string[];
}

/**
 * Declares the `webhooks` subcommands on `y` (the builder of the `webhooks` command); each
 * handler passes its exit code to `setExit`. Errors are thrown for the top-level handler.
 */
export function webhooksCommands<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  const resolve = (file: string) => path.resolve(io.cwd, file);
  const secretOptionsOf = (args: SecretOutputArgs): WebhooksSecretOptions => ({
    connection: connectionFromArgs(args, io.env),
    reveal: args.reveal,
    json: args.json,
    secretFile: args['secret-file'] === undefined ? undefined : resolve(args['secret-file']),
  });
  return y
    .command(
      'listen',
      'receive webhook events: verify, de-duplicate, record them (--events) and log one line each',
      (c) =>
        secretInputOptions(c)
          .option('port', {
            type: 'number',
            default: DEFAULT_LISTEN_PORT,
            describe: 'TCP port (0: any free one)',
          })
          .option('host', {
            type: 'string',
            default: RECEIVER_DEFAULTS.host,
            describe: 'interface to listen on',
          })
          .option('path', {
            type: 'string',
            default: RECEIVER_DEFAULTS.path,
            describe: 'request path the service posts to',
          })
          .option('events', {
            type: 'string',
            describe: 'JSONL file to append each new event to (used by reconciliation)',
          }),
      async (args) => {
        setExit(
          await webhooksListenCommand(
            {
              host: args.host,
              port: portOf(args.port),
              path: args.path,
              eventsFile: args.events === undefined ? undefined : resolve(args.events),
              secrets: await webhookSecretsFrom(args, io),
            },
            io,
          ),
        );
      },
    )
    .command(
      'set-url [url]',
      'set the callback URL the service posts events to (https://, or http:// to loopback)',
      (c) =>
        connectionOptions(c)
          .positional('url', { type: 'string', describe: 'the callback URL' })
          .option('clear', { type: 'boolean', default: false, describe: 'remove the callback URL' })
          .option('json', { type: 'boolean', default: false, describe: 'print {"url": ...} on stdout' }),
      async (args) => {
        const neitherOrBoth = (args.url === undefined) !== args.clear;
        if (neitherOrBoth) {
          throw new UsageError('set-url: give the callback URL, or --clear to remove it (not both)');
        }
        const connection = connectionFromArgs(args, io.env);
        setExit(await webhooksSetUrlCommand({ connection, url: args.url ?? null, json: args.json }, io));
      },
    )
    .command(
      'show-url',
      'show the callback URL the service holds',
      (c) =>
        connectionOptions(c).option('json', {
          type: 'boolean',
          default: false,
          describe: 'print {"url": ...} on stdout',
        }),
      async (args) => {
        setExit(
          await webhooksShowUrlCommand({ connection: connectionFromArgs(args, io.env), json: args.json }, io),
        );
      },
    )
    .command(
      'secret',
      'show the current webhook secret: masked with a fingerprint, or itself with --reveal',
      (c) => secretOutputOptions(connectionOptions(c)),
      async (args) => setExit(await webhooksFetchSecretCommand(secretOptionsOf(args), io)),
    )
    .command(
      'rotate-secret',
      'regenerate the webhook secret - print it with --reveal or write it to --secret-file',
      (c) => secretFileOutput(connectionOptions(c)),
      async (args) => setExit(await webhooksRotateSecretCommand(secretOptionsOf(args), io)),
    )
    .command(
      'fetch-secret',
      'fetch the webhook secret (encrypted) and decrypt it with the client secret - --reveal or --secret-file',
      (c) => secretFileOutput(connectionOptions(c)),
      async (args) => setExit(await webhooksFetchSecretCommand(secretOptionsOf(args), io)),
    )
    .command(
      'verify <body-file>',
      'check a signature against a raw body: exit 0 when valid, 1 when not',
      (c) =>
        secretInputOptions(c)
          .positional('body-file', { type: 'string', demandOption: true, describe: 'the raw request body' })
          .option('signature', {
            type: 'string',
            demandOption: true,
            describe: 'the X-Service-Webhook-Signature header value',
          }),
      async (args) => {
        setExit(
          await webhooksVerifyCommand(
            {
              bodyFile: resolve(args['body-file']),
              signature: args.signature,
              secrets: await webhookSecretsFrom(args, io),
            },
            io,
          ),
        );
      },
    )
    .demandCommand(
      1,
      'name a webhooks command: listen, set-url, show-url, secret, rotate-secret, fetch-secret or verify',
    ) as Argv<T>;
}

function secretInputOptions<T>(y: Argv<T>) {
  return y
    .option('secret', {
      type: 'string',
      array: true,
      describe: `webhook secret, repeatable (current, then previous) - prefer ${WEBHOOK_SECRET_ENV.current} or --secret-file`,
    })
    .option('secret-file', {
      type: 'string',
      array: true,
      describe: 'file holding a webhook secret (as rotate-secret/fetch-secret write it), repeatable',
    });
}

function secretOutputOptions<T>(y: Argv<T>) {
  return y
    .option('reveal', { type: 'boolean', default: false, describe: 'print the secret itself on stdout' })
    .option('json', { type: 'boolean', default: false, describe: 'print one JSON object on stdout' });
}

function secretFileOutput<T>(y: Argv<T>) {
  return secretOutputOptions(y).option('secret-file', {
    type: 'string',
    describe: 'write the secret to this file (mode 0600)',
  });
}

/**
 * The secrets to verify with: --secret and --secret-file when given, else the environment
 * (current, then previous). None at all is a ConfigError naming where to put one.
 */
async function webhookSecretsFrom(args: SecretInputArgs, io: CliIo): Promise<string[]> {
  const files = args['secret-file'] ?? [];
  const fromFlags = [
    ...(args.secret ?? []),
    ...(await Promise.all(files.map((f) => readSecretFile(path.resolve(io.cwd, f))))),
  ];
  const secrets =
    fromFlags.length > 0
      ? fromFlags
      : [io.env[WEBHOOK_SECRET_ENV.current], io.env[WEBHOOK_SECRET_ENV.previous]].filter(
          (s): s is string => s !== undefined,
        );
  const usable = [...new Set(secrets.filter((s) => s.trim() !== ''))];
  if (usable.length === 0) {
    throw new ConfigError(
      `no webhook secret given - set ${WEBHOOK_SECRET_ENV.current} or pass --secret-file PATH (payouts webhooks fetch-secret --secret-file PATH writes one)`,
    );
  }
  return usable;
}

function portOf(port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${String(port)}`);
  }
  return port;
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/** Runs `fn` with a client and the caller's integrator id (GET /v1/integrators/me), then closes it. */
async function withIntegrator<R>(
  connection: Connection,
  fn: (client: ReturnType<typeof clientFor>, integratorId: string) => Promise<R>,
): Promise<R> {
  const client = clientFor(connection);
  try {
    const me = await client.integrators.me();
    return await fn(client, me.id);
  } finally {
    await client.close();
  }
}

function printUrl(url: string | null, json: boolean, io: CliIo): void {
  if (json) println(io.stdout, JSON.stringify({ url }));
  else if (url === null) println(io.stderr, 'no webhook callback URL is set');
  else println(io.stdout, url);
}

/** Prints, writes or masks the secret as the options say; never prints it unasked. */
async function deliverSecret(secret: string, options: WebhooksSecretOptions, io: CliIo): Promise<void> {
  const fingerprint = secretFingerprint(secret);
  if (options.secretFile !== undefined) {
    await writeSecretFile(options.secretFile, secret);
    println(io.stderr, `webhook secret written to ${options.secretFile} (mode 0600)`);
  }
  if (options.json) {
    const shown = options.reveal ? { secret } : { masked: maskSecret(secret) };
    println(io.stdout, JSON.stringify({ ...shown, fingerprint, secretFile: options.secretFile ?? null }));
  } else if (options.reveal) {
    println(io.stdout, secret);
  } else {
    println(io.stdout, `${maskSecret(secret)} ${fingerprint}`);
    if (options.secretFile === undefined) {
      println(io.stderr, 'the secret is masked: add --reveal to print it, or --secret-file PATH to save it');
    }
  }
}

/** What a log line shows of an event: no payment details beyond status and reference. */
function eventFields(record: EventRecord): Record<string, unknown> {
  const { event } = record;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    operation: event.operation,
    resourceId: event.resourceId,
    success: event.success,
    status: text(event.data['status']),
    reference: text(event.data['reference']),
    message: event.message ?? undefined,
  };
}

/** One log line per notice; the logger masks digit runs and redacts secrets in every string. */
function logNotice(logger: Logger, notice: ReceiverNotice): void {
  switch (notice.kind) {
    case 'duplicate':
      logger.info(
        { operation: notice.operation, resourceId: notice.resourceId },
        'duplicate delivery ignored',
      );
      return;
    case 'rejected':
      logger.warn(
        { status: notice.status, reason: notice.reason, remoteAddress: notice.remoteAddress },
        'delivery refused',
      );
      return;
    case 'failed':
      logger.error(
        { error: notice.error instanceof Error ? notice.error.message : String(notice.error) },
        notice.reason,
      );
      return;
    case 'bad-line':
      logger.warn(
        { file: notice.file, line: notice.line, problem: notice.problem },
        'events file line skipped',
      );
      return;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
