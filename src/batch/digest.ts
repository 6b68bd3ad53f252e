import { createHash, type Hash } from 'node:crypto';
import { CANONICAL_COLUMNS, type ColumnIndex } from '../columns/columns.js';
import type { PreparedRow } from './prepare.js';

/** Columns the digest takes from the payout itself, normalised (rail upper-case, amount x.yy). */
const NORMALISED = new Set<string>(['reference', 'amount', 'currency', 'type']);

/** Text gathered before it is hashed. */
const PENDING_CHARS = 16 * 1024;

/**
 * The batch digest: SHA-256 over the normalised valid rows, in sheet order. `validate` prints
 * it; `run --approve DIGEST` refuses to send unless the sheet still hashes to it, so what was
 * approved is exactly what is paid. A row contributes its reference, amount (normalised to
 * x.yy), currency and rail, then the trimmed text of every other canonical column, in
 * canonical order: the same rows give the same digest however the headers are spelt or ordered.
 */
export class BatchDigest {
  private readonly hash: Hash = createHash('sha256').update('payouts-batch-digest:v2\n');
  private readonly positions: number[];
  private count = 0;
  // Lines not yet hashed: one update per ~16 KB of text rather than one per row. Every line
  // ends in "\n", so the bytes hashed are the same however they are grouped.
  private pending = '';

  constructor(index: ColumnIndex) {
    this.positions = CANONICAL_COLUMNS.filter((c) => !NORMALISED.has(c)).map((c) => index.get(c) ?? -1);
  }

  /** Adds one valid row. */
  add({ payout, raw }: PreparedRow): void {
    this.count += 1;
    let line = `${payout.reference}\x1f${payout.amount?.text ?? ''}\x1f${payout.currency ?? ''}\x1f${payout.rail ?? ''}`;
    for (const position of this.positions) {
      line += `\x1f${position < 0 ? '' : (raw.cells[position]?.text.trim() ?? '')}`;
    }
    this.pending += `${line}\n`;
    if (this.pending.length >= PENDING_CHARS) {
      this.hash.update(this.pending);
      this.pending = '';
    }
  }

  /** The digest as 64 lowercase hex characters; call once, at the end. */
  finish(): string {
    this.hash.update(`${this.pending}rows:${this.count}\n`);
    this.pending = '';
    return this.hash.digest('hex');
  }
}
