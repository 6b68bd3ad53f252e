/**
 * Webhook signatures (docs/service.md "Webhook signature"): the X-Service-Webhook-Signature
 * header is the Base64 of HMAC-SHA256 over the raw request body, keyed with the integrator's
 * webhook secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { systemErrorInWords, UsageError } from '../errors.js';

/** Base64 HMAC-SHA256 of the raw body with the secret: the header value the service sends. */
export function signBody(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

/**
 * True when `header` is the signature of `rawBody` under one of `secrets` (the current secret
 * and, during a rotation, the previous one: docs/service.md "Webhook secret"). The body must be
 * the bytes as received, never re-serialised JSON. Comparison is constant-time; every secret is
 * tried, so the time taken does not tell which one matched. Empty secrets are ignored: anyone can
 * compute an HMAC under an empty key.
 */
export function verifySignature(
  rawBody: Buffer | string,
  header: string | readonly string[] | undefined,
  secrets: string | readonly string[],
): boolean {
  // A repeated header arrives as an array (or joined by Node): no signing sender does that.
  if (typeof header !== 'string') return false;
  const given = Buffer.from(header.trim(), 'utf8');
  let valid = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    if (secret === '') continue;
    const expected = Buffer.from(signBody(rawBody, secret), 'utf8');
    // A SHA-256 in Base64 is always 44 characters: comparing lengths first leaks nothing.
    if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
  }
  return valid;
}

/**
 * The signature check of a body that arrives in chunks: one HMAC per secret, fed as the bytes
 * come, so that the check needs no more than the chunks themselves.
 */
export class StreamingSignature {
  private readonly macs;

  constructor(secrets: readonly string[]) {
    this.macs = secrets.filter((secret) => secret !== '').map((secret) => createHmac('sha256', secret));
  }

  update(chunk: Buffer): void {
    for (const mac of this.macs) mac.update(chunk);
  }

  /** True when `header` is the signature under one of the secrets (constant-time, every secret tried). */
  matches(header: string | readonly string[] | undefined): boolean {
    if (typeof header !== 'string') return false;
    const given = Buffer.from(header.trim(), 'utf8');
    let valid = false;
    for (const mac of this.macs) {
      const expected = Buffer.from(mac.digest('base64'), 'utf8');
      if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
    }
    return valid;
  }
}

/** The raw body of a request kept in `file` (`payouts webhooks verify`); exit 2 in words when it cannot be read. */
export async function readBodyFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new UsageError(`verify: cannot read the body file ${file}: ${systemErrorInWords(error)}`);
  }
}
