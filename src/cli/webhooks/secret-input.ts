/**
 * Where `webhooks listen` and `webhooks verify` get the secrets they verify with: --secret-file
 * (repeatable) or the environment, never a command-line value that `ps` would show.
 */
import path from 'node:path';
import type { Argv } from 'yargs';
import { fromEnvironment } from '../../environment.js';
import { ConfigError, UsageError } from '../../errors.js';
import { readSecretFile } from '../../webhooks/secret.js';
import type { CliIo } from '../io.js';

/** Where the webhook secret comes from when no --secret-file is given. */
export const WEBHOOK_SECRET_ENV = {
  current: 'PAYOUTS_WEBHOOK_SECRET',
  /** The secret before the last rotation, still accepted while the service switches (docs/service.md "Webhooks"). */
  previous: 'PAYOUTS_WEBHOOK_PREVIOUS_SECRET',
} as const;

export interface SecretInputArgs {
  secret?: string[];
  'secret-file'?: string[];
}

/**
 * Why `--secret S` is refused: a value on the command line is visible to every user
 * of the machine in `ps` and stays in shell history. The secret is never repeated back.
 */
export const SECRET_FLAG_REFUSED = `--secret is refused because a secret on the command line is visible to every user in ps and stays in shell history: put it in a file readable only by you and pass --secret-file PATH (payouts webhooks fetch-secret --secret-file PATH writes one), or set ${WEBHOOK_SECRET_ENV.current} (and ${WEBHOOK_SECRET_ENV.previous} during a rotation)`;

/** Declares --secret-file on a command that verifies signatures (and the refused --secret). */
export function secretInputOptions<T>(y: Argv<T>) {
  return y
    .option('secret', {
      type: 'string',
      array: true,
      hidden: true,
      describe: 'refused: use --secret-file or the environment',
    })
    .option('secret-file', {
      type: 'string',
      array: true,
      describe: 'file holding a webhook secret (as rotate-secret/fetch-secret write it), repeatable',
    });
}

/**
 * The secrets to verify with: --secret-file when given, else the environment (current, then
 * previous). --secret is a UsageError; none at all is a ConfigError naming where to put one.
 */
export async function webhookSecretsFrom(args: SecretInputArgs, io: CliIo): Promise<string[]> {
  if (args.secret !== undefined) throw new UsageError(SECRET_FLAG_REFUSED);
  const files = args['secret-file'] ?? [];
  const fromFlags = await Promise.all(files.map((f) => readSecretFile(path.resolve(io.cwd, f))));
  const secrets =
    fromFlags.length > 0
      ? fromFlags
      : [
          fromEnvironment(io.env, WEBHOOK_SECRET_ENV.current),
          fromEnvironment(io.env, WEBHOOK_SECRET_ENV.previous),
        ].filter((s): s is string => s !== undefined);
  const usable = [...new Set(secrets.filter((s) => s.trim() !== ''))];
  if (usable.length === 0) {
    throw new ConfigError(
      `no webhook secret given - set ${WEBHOOK_SECRET_ENV.current} or pass --secret-file PATH (payouts webhooks fetch-secret --secret-file PATH writes one)`,
    );
  }
  return usable;
}
