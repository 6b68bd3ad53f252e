/**
 * What the commands that talk to the service about the caller's own integrator share: the
 * client for one call, printing the callback URL, and handing over a webhook secret.
 */
import path from 'node:path';
import type { Argv } from 'yargs';
import { maskSecret, secretFingerprint, writeSecretFile } from '../../webhooks/secret.js';
import { type Connection, type ConnectionArgs, clientFor, connectionFromArgs } from '../connection.js';
import { type CliIo, println } from '../io.js';
import type { CommandLog } from '../logging.js';

/**
 * Runs `fn` with a client and the caller's integrator id (GET /v1/integrators/me), then closes
 * it; the client's requests go to `log`.
 */
export async function withIntegrator<R>(
  connection: Connection,
  log: CommandLog,
  fn: (client: ReturnType<typeof clientFor>, integratorId: string) => Promise<R>,
): Promise<R> {
  const client = clientFor(connection, { logger: log.logger });
  try {
    const me = await client.integrators.me();
    return await fn(client, me.id);
  } finally {
    await client.close();
  }
}

export interface WebhooksUrlOptions {
  connection: Connection;
  json: boolean;
}

/** Prints the callback URL: `{"url": ...}` with --json, else the URL (or a note that none is set). */
export function printUrl(url: string | null, json: boolean, io: CliIo, log: CommandLog): void {
  if (json) println(io.stdout, JSON.stringify({ url }));
  else if (url === null) log.tell(['no webhook callback URL is set']);
  else println(io.stdout, url);
}

export interface WebhooksSecretOptions {
  connection: Connection;
  /** Print the secret itself on stdout. */
  reveal: boolean;
  /** Write the secret to this file (mode 0600) instead of printing it. */
  secretFile: string | undefined;
  json: boolean;
}

export interface SecretOutputArgs extends ConnectionArgs {
  reveal: boolean;
  json: boolean;
  'secret-file'?: string;
}

/** --reveal and --json, for the commands that hand over a secret. */
export function secretOutputOptions<T>(y: Argv<T>) {
  return y
    .option('reveal', { type: 'boolean', default: false, describe: 'print the secret itself on stdout' })
    .option('json', { type: 'boolean', default: false, describe: 'print one JSON object on stdout' });
}

/** --reveal, --json and --secret-file, for the commands that can save a secret to a file. */
export function secretFileOutput<T>(y: Argv<T>) {
  return secretOutputOptions(y).option('secret-file', {
    type: 'string',
    describe: 'write the secret to this file (mode 0600)',
  });
}

/** The typed options of a secret-handing command from its parsed flags. */
export function secretOptionsOf(args: SecretOutputArgs, io: CliIo): WebhooksSecretOptions {
  const file = args['secret-file'];
  return {
    connection: connectionFromArgs(args, io.env),
    reveal: args.reveal,
    json: args.json,
    secretFile: file === undefined ? undefined : path.resolve(io.cwd, file),
  };
}

/** Prints, writes or masks the secret as the options say; never prints it unasked. */
export async function deliverSecret(
  secret: string,
  options: WebhooksSecretOptions,
  io: CliIo,
  log: CommandLog,
): Promise<void> {
  const fingerprint = secretFingerprint(secret);
  if (options.secretFile !== undefined) {
    await writeSecretFile(options.secretFile, secret);
    log.tell([`webhook secret written to ${options.secretFile} (mode 0600)`]);
  }
  if (options.json) {
    const shown = options.reveal ? { secret } : { masked: maskSecret(secret) };
    println(io.stdout, JSON.stringify({ ...shown, fingerprint, secretFile: options.secretFile ?? null }));
  } else if (options.reveal) {
    println(io.stdout, secret);
  } else {
    println(io.stdout, `${maskSecret(secret)} ${fingerprint}`);
    if (options.secretFile === undefined) {
      log.tell(['the secret is masked: add --reveal to print it, or --secret-file PATH to save it']);
    }
  }
}
