import { createHash, type Hash } from 'node:crypto';
import { CANONICAL_COLUMNS, type ColumnIndex } from '../columns/columns.js';
import { parseRail } from '../columns/rails.js';
import { parseSheetAmount, type SheetNumbers } from '../rows/money.js';
import { normaliseText } from '../rows/text.js';
import type { Cell, RawRow } from '../sheet/types.js';
import type { PreparedRow } from './prepare.js';
import { NEW_PAYEE_ONLY, type RowWarning } from './warnings.js';

/** Columns the digest takes from the payout itself, normalised (rail upper-case, amount x.yy). */
const NORMALISED = new Set<string>(['reference', 'amount', 'currency', 'type']);

/** Text gathered before it is hashed. */
const PENDING_CHARS = 16 * 1024;

/** What a row's line takes from its payout, as the mapper normalised it (PayoutRow has it). */
export interface DigestPayout {
  reference: string;
  amount?: { text: string };
  currency?: string;
  rail?: string;
}

/** Whether a checked row is in the digest: a valid payout (a totals row is no payout). */
export function inDigest(row: PreparedRow): boolean {
  return row.totals === undefined && row.issues.length === 0;
}

/**
 * The batch digest: SHA-256 over the normalised valid rows, in sheet order. `validate` prints
 * it; `run --approve DIGEST` refuses to send unless the sheet still hashes to it, so what was
 * approved is exactly what is paid. A row contributes its reference, amount (normalised to
 * x.yy), currency and rail, then the trimmed text of every other canonical column, in
 * canonical order: the same rows give the same digest however the headers are spelt or ordered.
 * The row's warnings for the approver (warnings.ts) follow: what was approved is what was seen.
 *
 * The rows' part (DigestRows, whose hash is the sheet's tag) may be hashed on another thread
 * than the warnings': `validate` hashes the rows on the thread that writes them while its
 * worker judges the next ones (parallel.ts), and gives the worker the tag at the end.
 */
export class BatchDigest {
  /** The valid rows' lines, unless they are hashed elsewhere (the tag then comes to finish). */
  private readonly rows: DigestRows | undefined;
  /** The warnings of the valid rows, each line bound to its row by the row's place. */
  private readonly warnings: Hash = createHash('sha256').update('payouts-batch-warnings:v1\n');
  private count = 0;
  private pendingWarnings = '';

  constructor(index: ColumnIndex, rows: 'here' | 'elsewhere' = 'here') {
    this.rows = rows === 'here' ? new DigestRows(index) : undefined;
  }

  /** Adds a valid row (inDigest), with the approver's warnings on it. */
  add(row: PreparedRow, warnings: readonly RowWarning[] = []): void {
    this.count += 1;
    this.rows?.add(row.payout, row.raw.cells);
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
   * resumed run warns as the first did. The digest is of the rows and their warnings. `tag`:
   * the rows' hash (DigestRows.finish of the same rows), when they were hashed elsewhere.
   */
  finish(tag?: string): { digest: string; tag: string } {
    const rowsTag = this.rows?.finish() ?? tag;
    if (rowsTag === undefined) throw new Error('the batch digest needs the tag of rows hashed elsewhere');
    const warnings = this.warnings.update(this.pendingWarnings).digest('hex');
    this.pendingWarnings = '';
    const digest = createHash('sha256')
      .update(`payouts-batch-digest:v3\n${rowsTag}\n${warnings}\n`)
      .digest('hex');
    return { digest, tag: rowsTag };
  }
}

/** The rows' part of the batch digest (BatchDigest): one line per valid row, hashed as the tag. */
export class DigestRows {
  private readonly hash: Hash = createHash('sha256').update('payouts-batch-digest:v2\n');
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

  constructor(index: ColumnIndex) {
    this.positions = CANONICAL_COLUMNS.filter((c) => !NORMALISED.has(c)).map((c) => index.get(c) ?? -1);
    this.fields = new Array<string>(4 + this.positions.length);
  }

  /** Adds a valid row: its payout as mapped, and its cells as read. */
  add(payout: DigestPayout, cells: readonly Cell[]): void {
    this.count += 1;
    const { fields, positions } = this;
    fields[0] = payout.reference;
    fields[1] = payout.amount?.text ?? '';
    fields[2] = payout.currency ?? '';
    fields[3] = payout.rail ?? '';
    for (let i = 0; i < positions.length; i++) {
      const position = positions[i]!;
      fields[4 + i] = position < 0 ? '' : (cells[position]?.text.trim() ?? '');
    }
    const line = fields.join('\x1f');
    this.lines.push(line);
    this.pendingChars += line.length + 1;
    if (this.pendingChars >= PENDING_CHARS) this.hash.update(this.takeLines());
  }

  /** The tag: 64 lowercase hex characters; call once, at the end. */
  finish(): string {
    return this.hash.update(`${this.takeLines()}rows:${this.count}\n`).digest('hex');
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

/**
 * DigestRows for a thread that has the rows' cells but did not map them (the main thread of
 * `validate`, parallel.ts): a valid row's reference, amount, currency and rail read from its
 * cells as the mapper reads them (mapRow: the normalised text, the amount as parseSheetAmount
 * writes it, the currency upper-case, the rail parsed). Only for rows another thread found
 * valid: an invalid row's cells may read as no payout at all.
 */
export class CellDigestRows {
  private readonly rows: DigestRows;
  private readonly at: { reference: number; amount: number; currency: number; type: number };

  constructor(
    index: ColumnIndex,
    private readonly numbers: SheetNumbers,
  ) {
    this.rows = new DigestRows(index);
    const at = (column: 'reference' | 'amount' | 'currency' | 'type') => index.get(column) ?? -1;
    this.at = {
      reference: at('reference'),
      amount: at('amount'),
      currency: at('currency'),
      type: at('type'),
    };
  }

  /** Adds a row found valid (inDigest). */
  add(raw: RawRow): void {
    const { cells } = raw;
    const amountText = textAt(cells, this.at.amount);
    const amount = amountText === undefined ? undefined : parseSheetAmount(amountText, this.numbers);
    const type = textAt(cells, this.at.type);
    const payout: DigestPayout = { reference: textAt(cells, this.at.reference) ?? '' };
    if (amount?.ok) payout.amount = amount;
    const currency = textAt(cells, this.at.currency)?.toUpperCase();
    if (currency !== undefined) payout.currency = currency;
    const rail = type === undefined ? undefined : parseRail(type);
    if (rail !== undefined) payout.rail = rail;
    this.rows.add(payout, cells);
  }

  finish(): string {
    return this.rows.finish();
  }
}

/** A cell's normalised text as the mapper reads it (RowCells.text): undefined when empty or blank. */
function textAt(cells: readonly Cell[], position: number): string | undefined {
  if (position < 0) return undefined;
  const cell = cells[position];
  if (cell === undefined || cell.kind === 'empty') return undefined;
  const text = normaliseText(cell.text);
  return text === '' ? undefined : text;
}
