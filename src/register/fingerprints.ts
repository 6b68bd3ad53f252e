/**
 * The keyed hash that names payee details in a register without keeping them in clear
 * (HMAC-SHA256 with the scope's secret, 32 characters of base64url), and the memory that
 * spares recomputing it: a sheet pays many of its payees more than once, and an HMAC costs a
 * few microseconds where a Map look-up costs a tenth of one. Both stores use this one.
 */
import { createHmac } from 'node:crypto';

/**
 * Fingerprints kept: the payees of a few thousand rows around the current one, a few hundred
 * kilobytes at most.
 */
const KEPT = 4096;

export class Fingerprints {
  private readonly kept = new Map<string, string>();
  /** Fingerprints found among the kept ones since they were last cleared. */
  private hits = 0;
  /** Fingerprints to compute without keeping them, after a stretch of payees seen once each. */
  private unkept = 0;

  constructor(private readonly secret: Buffer) {}

  /** The fingerprint of a canonical text (register/details.ts makes them). */
  of(canonical: string): string {
    const known = this.kept.get(canonical);
    if (known !== undefined) {
      this.hits += 1;
      return known;
    }
    const hashed = createHmac('sha256', this.secret)
      .update(canonical, 'utf8')
      .digest('base64url')
      .slice(0, 32);
    if (this.unkept > 0) {
      this.unkept -= 1;
      return hashed;
    }
    if (this.kept.size === KEPT) {
      // Keeping them costs more than it saves when few come back: pause, then try again.
      if (this.hits < KEPT / 8) this.unkept = 16 * KEPT;
      this.kept.clear();
      this.hits = 0;
    }
    this.kept.set(canonical, hashed);
    return hashed;
  }
}
