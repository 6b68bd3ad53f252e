/** The keyed hash that names payee details in a register (register/fingerprints.ts). */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Fingerprints } from '../../src/register/fingerprints.js';

const secret = Buffer.from('0123456789abcdef0123456789abcdef');
const hmac = (text: string) =>
  createHmac('sha256', secret).update(text, 'utf8').digest('base64url').slice(0, 32);

describe('Fingerprints', () => {
  it('is the HMAC-SHA256 of the text under the scope secret, 32 characters of base64url', () => {
    const fingerprints = new Fingerprints(secret);
    for (const text of ['rail:ACH\naccountNumber:123456789', 'payee:name:jose perez\ncountry:MX', 'ü€😀', ''])
      expect(fingerprints.of(text)).toBe(hmac(text));
    expect(fingerprints.of('x')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Fingerprints(Buffer.from('another secret')).of('x')).not.toBe(fingerprints.of('x'));
  });

  it('agrees with createHmac for texts of any length and any script, under keys of any length', () => {
    const texts = [
      '',
      'a',
      'ü'.repeat(700),
      '😀'.repeat(400),
      'x'.repeat(5000),
      'rail:PIX\npixKey:JOSÉ@EXAMPLE.COM',
    ];
    for (const key of [
      Buffer.alloc(0),
      secret,
      Buffer.alloc(64, 7),
      Buffer.alloc(65, 7),
      Buffer.alloc(200, 1),
    ]) {
      const fingerprints = new Fingerprints(key);
      for (const text of [...texts, ...texts.slice().reverse()])
        expect(fingerprints.of(text)).toBe(
          createHmac('sha256', key).update(text, 'utf8').digest('base64url').slice(0, 32),
        );
    }
  });

  it('hashes a short text after a long one the bytes of that text, not of an earlier one as long', () => {
    const fingerprints = new Fingerprints(secret);
    expect(fingerprints.of('ab')).toBe(hmac('ab'));
    // Longer than the room it had: the bytes now go elsewhere.
    expect(fingerprints.of('x'.repeat(5000))).toBe(hmac('x'.repeat(5000)));
    expect(fingerprints.of('cd')).toBe(hmac('cd'));
    expect(fingerprints.of('ab')).toBe(hmac('ab'));
  });
});
