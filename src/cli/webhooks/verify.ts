/** `payouts webhooks verify`: checks a signature against a raw body. */

import path from 'node:path';
import type { Argv } from 'yargs';
import { secretFingerprint } from '../../webhooks/secret.js';
import { readBodyFile, verifySignature } from '../../webhooks/signature.js';
import { outcomeCode } from '../exit-code.js';
import { type CliIo, println } from '../io.js';
import { secretInputOptions, webhookSecretsFrom } from './secret-input.js';

export interface WebhooksVerifyOptions {
  bodyFile: string;
  signature: string;
  secrets: string[];
}

/** `payouts webhooks verify`: 0 when the signature matches the body under one of the secrets, else 1. */
export async function webhooksVerifyCommand(options: WebhooksVerifyOptions, io: CliIo): Promise<number> {
  const body = await readBodyFile(options.bodyFile);
  if (verifySignature(body, options.signature, options.secrets)) {
    println(io.stderr, `signature valid for ${options.bodyFile} (${plural(body.length, 'byte')})`);
    return outcomeCode(true);
  }
  println(
    io.stderr,
    `signature does not match ${options.bodyFile} (${plural(body.length, 'byte')}) under ${plural(options.secrets.length, 'secret')} ${options.secrets.map(secretFingerprint).join(', ')} - the body must be the raw bytes as received, not re-formatted JSON`,
  );
  return outcomeCode(false);
}

/** Declares `verify` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function verifyCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
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
            bodyFile: path.resolve(io.cwd, args['body-file']),
            signature: args.signature,
            secrets: await webhookSecretsFrom(args, io),
          },
          io,
        ),
      );
    },
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
