/**
 * The webhook secret outside the service: shown masked with a fingerprint (so two copies can be
 * compared without revealing either), written to a file only its owner can read, read back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, systemErrorInWords } from '../errors.js';

/** Shorter secrets show no characters at all when masked. */
const MIN_LENGTH_TO_SHOW_TAIL = 16;
const SHOWN_TAIL = 4;

/** `********abcd`: the last four characters of a long secret, nothing of a short one. */
export function maskSecret(secret: string): string {
  const tail = secret.length >= MIN_LENGTH_TO_SHOW_TAIL ? secret.slice(-SHOWN_TAIL) : '';
  return `********${tail}`;
}

/**
 * `sha256:` and the first 16 hex digits of the secret's SHA-256 in groups of four: equal secrets,
 * equal prints. The groups keep log masking of long digit runs (account numbers) off it.
 */
export function secretFingerprint(secret: string): string {
  const hex = createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
  return `sha256:${hex.match(/.{4}/g)!.join('-')}`;
}

/**
 * Writes the secret (and a newline) to `file` with mode 0600: written beside it under a
 * temporary name, fsynced, then renamed over it, so the file is never half-written and never
 * readable by others, even for a moment, whatever mode an older file had.
 */
export async function writeSecretFile(file: string, secret: string): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx', 0o600);
    await handle.writeFile(`${secret}\n`, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close();
    await rm(temp, { force: true });
    throw new ConfigError(`cannot write the webhook secret to ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Reads a secret written by writeSecretFile (or by hand): the first line, trimmed. */
export async function readSecretFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read the webhook secret file ${file}: ${systemErrorInWords(error)}`, {
      cause: error,
    });
  }
  const secret = (text.split(/\r?\n/, 1)[0] ?? '').trim();
  if (secret === '') throw new ConfigError(`the webhook secret file ${file} is empty`);
  return secret;
}
