import { createHash, type Hash } from 'node:crypto';
import { CANONICAL_COLUMNS, type ColumnIndex } from '../columns/columns.js';
import type { PreparedRow } from './prepare.js';
import { NEW_PAYEE_ONLY, type RowWarning } from './warnings.js';

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
  /** The valid rows' lines: the sheet's tag, a batch's name in the payee history (warnings.ts). */
  private readonly rows: Hash = createHash('sha256').update('payouts-batch-digest:v2\n');
  /** The warnings of the valid rows, each line bound to its row by the row's place. */
  private readonly warnings: Hash = createHash('sha256').update('payouts-batch-warnings:v1\n');
  private readonly positions: number[];
  /** One row's fields, reused: joined at once, they make one flat text. */
  private readonly fields: string[];
  private count = 0;
  // Lines not yet hashed: one update per ~16 KB of text rather than one per row. Every line
  // ends in "\n", so the bytes hashed are the same however they are grouped. Kept as an array
  // and joined, not appended to one text: forty-odd appends a row made as many linked pieces,
  // which hashing first copied into one (a million rows of the bench sheet: 1.3 s that way,
  // 1.1 s this way, the same digest).
  private lines: string[] = [];
  private pendingChars = 0;
  private pendingWarnings = '';

  constructor(index: ColumnIndex) {
    this.positions = CANONICAL_COLUMNS.filter((c) => !NORMALISED.has(c)).map((c) => index.get(c) ?? -1);
    this.fields = new Array<string>(4 + this.positions.length);
  }

  /** Adds a valid row, with the approver's warnings on it. */
  add({ payout, raw }: PreparedRow, warnings: readonly RowWarning[] = []): void {
    this.count += 1;
    const { fields, positions } = this;
    fields[0] = payout.reference;
    fields[1] = payout.amount?.text ?? '';
    fields[2] = payout.currency ?? '';
    fields[3] = payout.rail ?? '';
    for (let i = 0; i < positions.length; i++) {
      const position = positions[i]!;
      fields[4 + i] = position < 0 ? '' : (raw.cells[position]?.text.trim() ?? '');
    }
    const line = fields.join('\x1f');
    this.lines.push(line);
    this.pendingChars += line.length + 1;
    if (this.pendingChars >= PENDING_CHARS) this.rows.update(this.takeLines());
    if (warnings.length === 0) return;
    // The shared newPayee list (a first sheet's every row) by its signal alone: its text is fixed.
    if (warnings === NEW_PAYEE_ONLY) this.pendingWarnings += `${this.count}\x1fnewPayee\n`;
    else {
      for (const warning of warnings)
        this.pendingWarnings += `${this.count}\x1f${warning.signal}\x1f${warning.message}\n`;
    }
    if (this.pendingWarnings.length >= PENDING_CHARS) {
      this.warnings.update(this.pendingWarnings);
      this.pendingWarnings = '';
    }
  }

  /**
   * The digest and the sheet's tag, each 64 lowercase hex characters; call once, at the end.
   * The tag is the valid rows' alone: the same sheet has the same tag whatever the register
   * says of its payees, so a run knows its own earlier payouts in the payee history and a
   * resumed run warns as the first did. The digest is of the rows and their warnings.
   */
  finish(): { digest: string; tag: string } {
    const tag = this.rows.update(`${this.takeLines()}rows:${this.count}\n`).digest('hex');
    const warnings = this.warnings.update(this.pendingWarnings).digest('hex');
    this.pendingWarnings = '';
    const digest = createHash('sha256')
      .update(`payouts-batch-digest:v3\n${tag}\n${warnings}\n`)
      .digest('hex');
    return { digest, tag };
  }

  /** The lines not yet hashed, each ending in "\n", as one text; none are left. */
  private takeLines(): string {
    if (this.lines.length === 0) return '';
    this.lines.push('');
    const text = this.lines.join('\n');
    this.lines = [];
    this.pendingChars = 0;
    return text;
  }
}
