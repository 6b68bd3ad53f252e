import { createHash, type Hash } from 'node:crypto';
import type { PayoutRow } from '../rows/map.js';

/**
 * The batch digest: SHA-256 over the normalised valid rows, in sheet order. `validate` prints
 * it; `run --approve DIGEST` refuses to send unless the sheet still hashes to it, so what was
 * approved is exactly what is paid (amounts, currencies, rails, payees and references).
 */
export class BatchDigest {
  private readonly hash: Hash = createHash('sha256').update('payouts-batch-digest:v1\n');
  private count = 0;

  /** Adds one valid row. */
  add(row: PayoutRow): void {
    this.count += 1;
    this.hash.update(digestLine(row));
  }

  /** The digest as 64 lowercase hex characters; call once, at the end. */
  finish(): string {
    this.hash.update(`rows:${this.count}\n`);
    return this.hash.digest('hex');
  }
}

function digestLine(row: PayoutRow): string {
  // The requests themselves rather than their dedupe keys: the same content, without hashing
  // twice per row (the whole line is hashed into the digest anyway).
  const beneficiary =
    row.beneficiary.kind === 'existing'
      ? `id:${row.beneficiary.id}`
      : row.beneficiary.kind === 'new'
        ? row.beneficiary.request
        : row.beneficiary.kind;
  const recipient = row.recipient.kind === 'existing' ? `id:${row.recipient.id}` : row.recipient.request;
  return `${JSON.stringify([row.reference, row.amount?.text, row.currency, row.rail, beneficiary, recipient])}\n`;
}
