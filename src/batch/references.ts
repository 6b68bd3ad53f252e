/**
 * Which row first used each reference (docs/sheets.md: reference is unique within the sheet), for
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

  /** `capacity`: how many references to make room for at once (more grow the table). */
  constructor(capacity = 1 << 14) {
    const perShard = slotsPerShard(capacity);
    for (let i = 0; i < SHARDS; i++) this.shards.push(new Shard(perShard));
  }

  /** Records `reference` at `row`; returns the row that used it first, or undefined if new. */
  claim(reference: string, row: number): number | undefined {
    const [h1, h2] = hash64(reference);
    return this.shards[h1 >>> SHARD_SHIFT]!.claim(h1, h2, row);
  }
}

/**
 * Which payments (payee, amount, currency) a sheet has met, for the approver's duplicates: a
 * set of 48-bit fingerprints in typed arrays, 6 bytes an entry, no row numbers. A second
 * reading of the sheet names the rows exactly (prepare.ts); a fingerprint two payments share
 * (about n²/2^49: 2·10⁻³ for a million rows) costs that reading and warns of nothing.
 */
export class FingerprintSet {
  private readonly shards: FingerprintShard[] = [];

  /** `capacity`: how many payments to make room for at once (more grow the set). */
  constructor(capacity = 1 << 14) {
    const perShard = slotsPerShard(capacity);
    for (let i = 0; i < SHARDS; i++) this.shards.push(new FingerprintShard(perShard));
  }

  /** Adds the fingerprint of three texts (one key); true when it was there already. */
  add(a: string, b: string, c: string): boolean {
    const [h1, h2] = hash64Of3(a, b, c);
    // 0/0 marks an empty slot: the one fingerprint that would be it moves to 0/1.
    const lo = h2 & 0xffff || 1;
    return this.shards[h1 >>> SHARD_SHIFT]!.add(h1, lo);
  }
}

/** One open-addressing set of 48-bit fingerprints (linear probing, at most 3/4 full). */
class FingerprintShard {
  private hi: Uint32Array;
  private lo: Uint16Array;
  private size = 0;

  constructor(capacity: number) {
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint16Array(capacity);
  }

  add(hi: number, lo: number): boolean {
    if ((this.size + 1) * 4 > this.lo.length * 3) this.grow();
    const slot = this.find(hi, lo);
    if (this.lo[slot] !== 0) return true;
    this.hi[slot] = hi;
    this.lo[slot] = lo;
    this.size += 1;
    return false;
  }

  private find(hi: number, lo: number): number {
    const size = this.lo.length;
    let slot = ((hi ^ lo) >>> 0) % size;
    while (this.lo[slot] !== 0 && (this.hi[slot] !== hi || this.lo[slot] !== lo))
      slot = slot + 1 === size ? 0 : slot + 1;
    return slot;
  }

  private grow(): void {
    const { hi, lo } = this;
    this.hi = new Uint32Array(grown(lo.length));
    this.lo = new Uint16Array(grown(lo.length));
    for (let i = 0; i < lo.length; i++) {
      if (lo[i] === 0) continue;
      const slot = this.find(hi[i]!, lo[i]!);
      this.hi[slot] = hi[i]!;
      this.lo[slot] = lo[i]!;
    }
  }
}

/**
 * Slots per shard for `capacity` entries at most 3/4 full. Made the right size at once, a table
 * never grows: each growth leaves its old typed arrays to a garbage collector that frees memory
 * outside the heap late (a million references held 25 MB of them for nothing).
 */
function slotsPerShard(capacity: number): number {
  // Any size will do (slots are found by remainder, not by a mask): no power of two rounds a
  // million references up to two million slots.
  return Math.max(4, Math.ceil((capacity * 4) / 3 / SHARDS) + 1);
}

/**
 * Slots of a shard grown from `slots`: half as many again. A table is made for the rows a CSV's
 * size promises (prepare.ts expectedRowsOf), and a sheet of longer rows than promised grows it
 * once near its end, when the other tables are at their largest: doubled, the million-row
 * sheet of the bench (198 bytes a row, tables made for 774,000) ended with tables of 37 MB for
 * its references and payments, half as many again 28 MB. A copy costs a shard's sixteenth.
 */
function grown(slots: number): number {
  return slots + Math.max(4, Math.ceil(slots / 2));
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
    const size = this.rows.length;
    let slot = ((h1 ^ h2) >>> 0) % size;
    while (this.rows[slot] !== 0 && (this.hi[slot] !== h1 || this.lo[slot] !== h2))
      slot = slot + 1 === size ? 0 : slot + 1;
    return slot;
  }

  private grow(): void {
    const { hi, lo, rows } = this;
    this.hi = new Uint32Array(grown(rows.length));
    this.lo = new Uint32Array(grown(rows.length));
    this.rows = new Uint32Array(grown(rows.length));
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
  return hash64Of3(text, undefined, undefined);
}

/**
 * hash64 of three texts as if joined by newlines, without making the joined string (the
 * payments of a million rows would make a million of them).
 */
function hash64Of3(x: string, y: string | undefined, z: string | undefined): [number, number] {
  const length = x.length + (y === undefined ? 0 : y.length + 1) + (z === undefined ? 0 : z.length + 1);
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ length;
  for (let t = 0; t < 3; t++) {
    const text = t === 0 ? x : t === 1 ? y : z;
    if (text === undefined) continue;
    if (t > 0) {
      a = Math.imul(a ^ 10, 0x01000193);
      b = Math.imul(b ^ 10, 0x5bd1e995);
      b ^= b >>> 15;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
  }
  a ^= a >>> 16;
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return [a >>> 0, (b ^ (b >>> 16)) >>> 0];
}
