import { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../src/webhooks/signature.js';

/**
 * The webhook signature (docs/service.md) computed with WebCrypto, independently of src/webhooks
 * (which uses node:crypto's createHmac).
 */
async function webcryptoSignature(body: Uint8Array, secret: string): Promise<string> {
  const key = await webcrypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return Buffer.from(await webcrypto.subtle.sign('HMAC', key, body)).toString('base64');
}

describe('signBody', () => {
  it('matches RFC 4231 test case 2, Base64-encoded', () => {
    // HMAC-SHA256(key "Jefe", "what do ya want for nothing?") = 5bdcc146...64ec3843 (RFC 4231 4.3).
    const hex = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    const expected = Buffer.from(hex, 'hex').toString('base64');
    expect(expected).toBe('W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=');
    expect(signBody('what do ya want for nothing?', 'Jefe')).toBe(expected);
    expect(signBody(Buffer.from('what do ya want for nothing?'), 'Jefe')).toBe(expected);
  });

  it('agrees with WebCrypto on a webhook body with non-ASCII text, bytes as they are', async () => {
    const body = Buffer.from(
      '{"operation":"TRANSACTION_FAILED","message":"Crédito rechazado ✗"}\r\n',
      'utf8',
    );
    const secret = 'whsec-Zx9-ünïcode';
    expect(signBody(body, secret)).toBe(await webcryptoSignature(body, secret));
  });
});

describe('verifySignature', () => {
  const body = Buffer.from('{"operation":"TRANSACTION_COMPLETED","resourceId":"t-1","success":true}');
  const secret = 'current-secret-0123456789';
  const previous = 'previous-secret-9876543210';

  it('accepts the signature of the raw body under the secret', async () => {
    expect(verifySignature(body, await webcryptoSignature(body, secret), secret)).toBe(true);
    expect(verifySignature(body, ` ${signBody(body, secret)} `, [secret])).toBe(true);
  });

  it('refuses a missing, empty, repeated or truncated header, another secret and a changed body', () => {
    const signature = signBody(body, secret);
    expect(verifySignature(body, undefined, secret)).toBe(false);
    expect(verifySignature(body, '', secret)).toBe(false);
    expect(verifySignature(body, [signature, signature], secret)).toBe(false);
    expect(verifySignature(body, signature.slice(0, -1), secret)).toBe(false);
    expect(verifySignature(body, signature, 'another-secret')).toBe(false);
    // Re-serialised JSON is not the raw body the signature covers.
    const reformatted = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(verifySignature(reformatted, signature, secret)).toBe(false);
    // Base64 of the right bytes in hex, or with a character changed, is not the header either.
    expect(verifySignature(body, Buffer.from(signature, 'base64').toString('hex'), secret)).toBe(false);
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    expect(verifySignature(body, flipped, secret)).toBe(false);
  });

  it('accepts any secret of the list: current and previous during a rotation', () => {
    expect(verifySignature(body, signBody(body, previous), [secret, previous])).toBe(true);
    expect(verifySignature(body, signBody(body, secret), [secret, previous])).toBe(true);
    expect(verifySignature(body, signBody(body, 'third'), [secret, previous])).toBe(false);
    expect(verifySignature(body, signBody(body, secret), [])).toBe(false);
  });

  it('never accepts an empty secret: anyone can sign with it', () => {
    expect(verifySignature(body, signBody(body, ''), '')).toBe(false);
    expect(verifySignature(body, signBody(body, ''), ['', secret])).toBe(false);
  });
});
