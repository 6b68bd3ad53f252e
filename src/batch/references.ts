/**
 * Which row first used each reference (PRODUCT.md: reference is unique within the sheet), for
 * sheets of a million rows without a million-entry Map: an open-addressing table of 64-bit
 * reference hashes in typed arrays, about 12 bytes a reference instead of ~100.
 *
 * Two different references share a 64-bit hash with probability about n²/2^65 (3·10⁻⁸ for a
 * million rows). Should it happen, the later row is reported as a duplicate and not paid: a
 * visible refusal, never a payment made twice.
 */
export class ReferenceTable {
  // Sixteen tables by the top bits of the hash, each growing on its own: a growth copies a
  // sixteenth of the references, so memory never holds two copies of the whole table.
  private readonly shards: Shard[] = [];

  constructor(capacity = 1 << 14) {
    const perShard = Math.max(4, 2 ** Math.ceil(Math.log2(capacity / SHARDS)));
    for (let i = 0; i < SHARDS; i++) this.shards.push(new Shard(perShard));
  }

  /** Records `reference` at `row`; returns the row that used it first, or undefined if new. */
  claim(reference: string, row: number): number | undefined {
    const [h1, h2] = hash64(reference);
    return this.shards[h1 >>> SHARD_SHIFT]!.claim(h1, h2, row);
  }
}

const SHARD_BITS = 4;
const SHARDS = 1 << SHARD_BITS;
const SHARD_SHIFT = 32 - SHARD_BITS;

/** One open-addressing table (linear probing, at most 3/4 full). */
class Shard {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** Row number of the first use; 0 marks an empty slot (sheet rows start at 1). */
  private rows: Uint32Array;
  private size = 0;

  constructor(capacity: number) {
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.rows = new Uint32Array(capacity);
  }

  claim(h1: number, h2: number, row: number): number | undefined {
    if ((this.size + 1) * 4 > this.rows.length * 3) this.grow();
    const slot = this.find(h1, h2);
    const first = this.rows[slot]!;
    if (first !== 0) return first;
    this.hi[slot] = h1;
    this.lo[slot] = h2;
    this.rows[slot] = row;
    this.size += 1;
    return undefined;
  }

  private find(h1: number, h2: number): number {
    const mask = this.rows.length - 1;
    let slot = (h1 ^ h2) & mask;
    while (this.rows[slot] !== 0 && (this.hi[slot] !== h1 || this.lo[slot] !== h2)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { hi, lo, rows } = this;
    this.hi = new Uint32Array(rows.length * 2);
    this.lo = new Uint32Array(rows.length * 2);
    this.rows = new Uint32Array(rows.length * 2);
    for (let i = 0; i < rows.length; i++) {
      if (rows[i] === 0) continue;
      const slot = this.find(hi[i]!, lo[i]!);
      this.hi[slot] = hi[i]!;
      this.lo[slot] = lo[i]!;
      this.rows[slot] = rows[i]!;
    }
  }
}

/** Two independent 32-bit hashes of a string (FNV-1a and a multiply-xorshift), as a pair. */
function hash64(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return [a >>> 0, (b ^ (b >>> 16)) >>> 0];
}
