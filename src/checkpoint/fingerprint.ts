/**
 * Identities derived from the sheet's bytes: its content hash (a checkpoint belongs to one
 * sheet), the batch id, and each row's Idempotency-Key, "derived from the batch and the row's
 * reference" (PRODUCT.md "Never pay twice"), so every run of the same sheet sends the same keys.
 */
import { createHash, createHmac, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { SheetError } from '../errors.js';

export interface SheetFingerprint {
  /** SHA-256 of the file's bytes, hex. */
  sheetHash: string;
  /** Derived from the hash: the same sheet is the same batch, on any machine. */
  batchId: string;
  /**
   * A second digest of the content that the journal never stores: it keys the hashing of
   * dedupe keys in the journal, so a checkpoint file alone does not reveal (nor allow guessing)
   * the account details those keys are made of. Anyone who has the sheet has them anyway.
   */
  keySalt: string;
}

const KEY_SALT_DOMAIN = 'payouts:v1:journal-key-salt\n';

/** Reads the sheet once, streaming, and derives all three identities. */
export async function fingerprintSheet(path: string): Promise<SheetFingerprint> {
  const content = createHash('sha256');
  const salt = createHash('sha256').update(KEY_SALT_DOMAIN);
  try {
    await pipeInto(path, [content, salt]);
  } catch (err) {
    throw new SheetError(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`, {
      cause: err,
    });
  }
  const sheetHash = content.digest('hex');
  return { sheetHash, batchId: batchIdOf(sheetHash), keySalt: salt.digest('base64url') };
}

/** SHA-256 of the file's content, hex (streaming: sheets may be large). */
export async function sheetHash(path: string): Promise<string> {
  return (await fingerprintSheet(path)).sheetHash;
}

/** The batch id of a sheet: a prefix of its hash (96 bits: unique enough, short in logs). */
export function batchIdOf(sheetHashHex: string): string {
  return `b-${sheetHashHex.slice(0, 24)}`;
}

/**
 * The Idempotency-Key of a row's transaction: base64url of SHA-256 over
 * `payouts:v1:<batchId>:<reference>`, 32 characters (192 bits). The same key serves every
 * attempt and every run, including the re-send after a re-quote (docs/api-assumptions.md: a
 * 4xx answer releases the key).
 */
export function idempotencyKey(batchId: string, reference: string): string {
  return createHash('sha256')
    .update(`payouts:v1:${batchId}:${reference}`, 'utf8')
    .digest('base64url')
    .slice(0, 32);
}

/**
 * The journal's form of a dedupe key (beneficiary or recipient): HMAC-SHA256 keyed by the
 * sheet's key salt, base64url, 32 characters. The key itself may hold account details.
 */
export function hashDedupeKey(keySalt: string, key: string): string {
  return createHmac('sha256', keySalt).update(key, 'utf8').digest('base64url').slice(0, 32);
}

async function pipeInto(path: string, hashes: Hash[]): Promise<void> {
  for await (const chunk of createReadStream(path)) {
    for (const h of hashes) h.update(chunk as Buffer);
  }
}
