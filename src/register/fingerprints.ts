/**
 * The keyed hash that names payee details in a register without keeping them in clear
 * (HMAC-SHA256 with the scope's secret, 32 characters of base64url). Both stores use this one.
 *
 * Nothing is kept to spare computing one again. A Map of the last 4,096 texts and their
 * fingerprints did, while an HMAC cost 2 microseconds: its texts outlived the young generation
 * and were promoted, and a million rows of payees paid once each made the validating thread
 * collect its old generation 32 times where 10 do without it (trace-gc, `distinct-payees` of
 * the bench); without it that thread took less CPU time in five runs of six, `next-sheet` too,
 * where payees come back.
 */
import { hash } from 'node:crypto';

/** SHA-256's block, to which HMAC pads its key. */
const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) built on the one-shot `crypto.hash`: H((K ^ opad) || H((K ^ ipad) || m)).
 * `createHmac` sets up a keyed context for every text: 2 microseconds on Node 20, 13 on Node 24
 * (OpenSSL 3). Two one-shot hashes cost less, if nothing else is made per text: a Buffer for
 * the inner hash and a `subarray` for the bytes hashed took more than the hashing (1.8
 * microseconds a text on both). The padded keys are written once, each text into the buffer
 * after its inner pad, hashed through a view kept per length; the inner hash comes back as a
 * one-byte string ('binary', latin1), copied after the outer pad: 0.75 microseconds on both.
 */
export class Fingerprints {
  /** K ^ ipad, then room for the text's bytes. */
  private inner: Buffer;
  /** K ^ opad, then the inner hash. */
  private readonly outer = Buffer.alloc(BLOCK + 32);
  /** Views of `inner`, by the number of the text's bytes: made once each. */
  private views: Buffer[] = [];

  constructor(secret: Buffer) {
    const key = Buffer.alloc(BLOCK);
    (secret.length > BLOCK ? hash('sha256', secret, 'buffer') : secret).copy(key);
    this.inner = Buffer.alloc(BLOCK + 1024);
    for (let i = 0; i < BLOCK; i++) {
      this.inner[i] = key[i]! ^ 0x36;
      this.outer[i] = key[i]! ^ 0x5c;
    }
  }

  /**
   * The fingerprint of a canonical text (register/details.ts makes them): the first 32
   * characters of the base64url HMAC of the text as UTF-8.
   */
  of(text: string): string {
    // A UTF-16 unit takes at most three bytes of UTF-8.
    if (BLOCK + 3 * text.length > this.inner.length) {
      const larger = Buffer.alloc(BLOCK + 3 * text.length);
      this.inner.copy(larger, 0, 0, BLOCK);
      this.inner = larger;
      this.views = [];
    }
    const written = this.inner.write(text, BLOCK, 'utf8');
    this.views[written] ??= this.inner.subarray(0, BLOCK + written);
    const innerHash = hash('sha256', this.views[written], 'binary');
    for (let i = 0; i < 32; i++) this.outer[BLOCK + i] = innerHash.charCodeAt(i);
    return hash('sha256', this.outer, 'base64url').slice(0, 32);
  }
}
