import { createHash, type Hash } from 'node:crypto';
import { CANONICAL_COLUMNS, type ColumnIndex } from '../columns/columns.js';
import type { PreparedRow } from './prepare.js';
import type { RowWarning } from './warnings.js';

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
 * The row's warnings for the approver (warnings.ts) follow: what was approved is what was seen.
 */
export class BatchDigest {
  private readonly hash: Hash = createHash('sha256').update('payouts-batch-digest:v3\n');
  /** The sheet's tag: every row, valid or not, without warnings (a batch's name in the payee history). */
  private readonly tagHash: Hash = createHash('sha256').update('payouts-sheet-tag:v1\n');
  private readonly positions: number[];
  private count = 0;
  private rows = 0;
  // Lines not yet hashed: one update per ~16 KB of text rather than one per row. Every line
  // ends in "\n", so the bytes hashed are the same however they are grouped.
  private pending = '';
  private pendingTag = '';

  constructor(index: ColumnIndex) {
    this.positions = CANONICAL_COLUMNS.filter((c) => !NORMALISED.has(c)).map((c) => index.get(c) ?? -1);
  }

  /**
   * Adds a row (never the totals row): to the sheet's tag, and when valid, with the approver's
   * warnings on it, to the digest.
   */
  add({ payout, raw }: PreparedRow, valid: boolean, warnings: readonly RowWarning[] = []): void {
    this.rows += 1;
    let line = `${payout.reference}\x1f${payout.amount?.text ?? ''}\x1f${payout.currency ?? ''}\x1f${payout.rail ?? ''}`;
    for (const position of this.positions) {
      line += `\x1f${position < 0 ? '' : (raw.cells[position]?.text.trim() ?? '')}`;
    }
    this.pendingTag += `${line}\n`;
    if (this.pendingTag.length >= PENDING_CHARS) {
      this.tagHash.update(this.pendingTag);
      this.pendingTag = '';
    }
    if (!valid) return;
    this.count += 1;
    for (const warning of warnings) line += `\x1e${warning.signal}\x1f${warning.message}`;
    this.pending += `${line}\n`;
    if (this.pending.length >= PENDING_CHARS) {
      this.hash.update(this.pending);
      this.pending = '';
    }
  }

  /**
   * The digest and the sheet's tag, each 64 lowercase hex characters; call once, at the end.
   * The same sheet gives the same tag whatever the register says of its payees, so a run knows
   * its own earlier payouts in the payee history (warnings.ts) and a resumed run warns as the
   * first did.
   */
  finish(): { digest: string; tag: string } {
    this.hash.update(`${this.pending}rows:${this.count}\n`);
    this.tagHash.update(`${this.pendingTag}rows:${this.rows}\n`);
    this.pending = '';
    this.pendingTag = '';
    return { digest: this.hash.digest('hex'), tag: this.tagHash.digest('hex') };
  }
}
