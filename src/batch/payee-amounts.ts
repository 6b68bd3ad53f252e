/**
 * The amounts a comparison with the previous batch keeps per payee (since-previous.ts): what
 * the batch paid the payee then and what the sheet pays now, for a million payees in a few tens
 * of megabytes. A Map of objects would cost hundreds of bytes a payee; here a payee is 25 bytes
 * in typed arrays (64 bits of its keyed hash, two amounts, a byte of state) and an index slot of
 * 4: no name, no reference, no string of it kept. A payee paid in more than one currency, or an
 * amount past 64 bits, is kept in a small Map instead: rare, and exact whatever the amount.
 */
import { BatchSummary } from './summary.js';

/** Payees per chunk of the typed arrays: they grow a chunk at a time, and never move. */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
/** The state byte: the currency's index in its low bits, or SEVERAL; SEEN once the sheet paid the payee. */
const SEVERAL = 0x7f;
const SEEN = 0x80;
/** Index slots filled at most: past this share, linear probing takes ever longer. */
const LOAD = 0.8;
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

/** A payee's amounts per currency, where one currency or 64 bits do not tell them. */
export interface SeveralAmounts {
  paid: Map<string, bigint>;
  sheet: Map<string, bigint>;
}

/** A payee's amounts: then, now (per currency), and whether the sheet paid it at all. */
export interface PayeeAmountsOf {
  paid: ReadonlyMap<string, bigint>;
  sheet: ReadonlyMap<string, bigint>;
  seen: boolean;
}

export class PayeeAmounts {
  private readonly keyHigh: Uint32Array[] = [];
  private readonly keyLow: Uint32Array[] = [];
  private readonly paid: BigInt64Array[] = [];
  private readonly sheet: BigInt64Array[] = [];
  private readonly state: Uint8Array[] = [];
  /** Open addressing by the key's low bits: each slot the payee's number plus one, 0 for none. */
  private index = new Int32Array(1 << 10);
  private readonly several = new Map<number, SeveralAmounts>();
  private readonly currencies: string[] = [];
  private readonly currencyIndex = new Map<string, number>();
  /** The key of the payee last looked up (set by keyOf, so that no key is allocated). */
  private high = 0;
  private low = 0;
  /** Payees kept. */
  size = 0;

  /** Adds `minor` paid to `payee` in the previous batch. */
  addPaid(payee: string, minor: bigint, currency: string): void {
    const index = this.currencyOf(currency);
    let entry = this.find(payee);
    const fresh = entry < 0;
    if (fresh) entry = this.insert();
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]!;
    const paid = this.paid[chunk]!;
    const sum = fresh ? minor : paid[at]! + minor;
    if (index < SEVERAL && (fresh || (state[at]! & SEVERAL) === index) && fits(sum)) {
      state[at] = (state[at]! & SEEN) | index;
      paid[at] = sum;
    } else if (fresh) {
      state[at] = SEVERAL;
      this.several.set(entry, { paid: new Map([[currency, minor]]), sheet: new Map() });
    } else {
      BatchSummary.add(this.severalOf(entry).paid, currency, minor);
    }
  }

  /** Adds `minor` the sheet pays `payee`, if the previous batch paid it. */
  addSheet(payee: string, minor: bigint, currency: string): void {
    const entry = this.find(payee);
    if (entry < 0) return;
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]!;
    const sheet = this.sheet[chunk]!;
    const sum = sheet[at]! + minor;
    const index = this.currencyIndex.get(currency) ?? SEVERAL;
    if (index < SEVERAL && (state[at]! & SEVERAL) === index && fits(sum)) sheet[at] = sum;
    else BatchSummary.add(this.severalOf(entry).sheet, currency, minor);
    state[at] = state[at]! | SEEN;
  }

  /** The payee's number, or -1 when the previous batch did not pay it. */
  find(payee: string): number {
    this.keyOf(payee);
    const mask = this.index.length - 1;
    for (let slot = this.low & mask; ; slot = (slot + 1) & mask) {
      const held = this.index[slot]! - 1;
      if (held < 0) return -1;
      const at = held & (CHUNK - 1);
      const chunk = held >>> CHUNK_BITS;
      if (this.keyLow[chunk]![at] === this.low && this.keyHigh[chunk]![at] === this.high) return held;
    }
  }

  /** Whether the comparison lists the payee: not in the sheet, or paid another amount now. */
  listed(entry: number): boolean {
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]![at]!;
    if ((state & SEEN) === 0) return true;
    if ((state & SEVERAL) !== SEVERAL) return this.paid[chunk]![at] !== this.sheet[chunk]![at];
    const { paid, sheet } = this.several.get(entry)!;
    for (const currency of new Set([...paid.keys(), ...sheet.keys()]))
      if ((paid.get(currency) ?? 0n) !== (sheet.get(currency) ?? 0n)) return true;
    return false;
  }

  /** The payee's amounts, per currency in the order they were first met (then before now). */
  amountsOf(entry: number): PayeeAmountsOf {
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]![at]!;
    const seen = (state & SEEN) !== 0;
    if ((state & SEVERAL) === SEVERAL) return { ...this.several.get(entry)!, seen };
    const currency = this.currencies[state & SEVERAL]!;
    return {
      paid: new Map([[currency, this.paid[chunk]![at]!]]),
      sheet: seen ? new Map([[currency, this.sheet[chunk]![at]!]]) : new Map(),
      seen,
    };
  }

  /** Moves a payee's amounts to a Map of its own: a second currency, or an amount past 64 bits. */
  private severalOf(entry: number): SeveralAmounts {
    const kept = this.several.get(entry);
    if (kept !== undefined) return kept;
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]!;
    const currency = this.currencies[state[at]! & SEVERAL]!;
    const amounts: SeveralAmounts = {
      paid: new Map([[currency, this.paid[chunk]![at]!]]),
      sheet: (state[at]! & SEEN) === 0 ? new Map() : new Map([[currency, this.sheet[chunk]![at]!]]),
    };
    this.several.set(entry, amounts);
    state[at] = (state[at]! & SEEN) | SEVERAL;
    this.paid[chunk]![at] = 0n;
    this.sheet[chunk]![at] = 0n;
    return amounts;
  }

  /** A new payee of the key last looked up (find found none). */
  private insert(): number {
    if (this.size + 1 > this.index.length * LOAD) this.grow();
    const entry = this.size++;
    const at = entry & (CHUNK - 1);
    if (at === 0) {
      this.keyHigh.push(new Uint32Array(CHUNK));
      this.keyLow.push(new Uint32Array(CHUNK));
      this.paid.push(new BigInt64Array(CHUNK));
      this.sheet.push(new BigInt64Array(CHUNK));
      this.state.push(new Uint8Array(CHUNK));
    }
    const chunk = entry >>> CHUNK_BITS;
    this.keyHigh[chunk]![at] = this.high;
    this.keyLow[chunk]![at] = this.low;
    this.place(entry, this.low);
    return entry;
  }

  private place(entry: number, low: number): void {
    const mask = this.index.length - 1;
    let slot = low & mask;
    while (this.index[slot] !== 0) slot = (slot + 1) & mask;
    this.index[slot] = entry + 1;
  }

  private grow(): void {
    this.index = new Int32Array(this.index.length * 2);
    for (let entry = 0; entry < this.size; entry++)
      this.place(entry, this.keyLow[entry >>> CHUNK_BITS]![entry & (CHUNK - 1)]!);
  }

  private currencyOf(currency: string): number {
    let index = this.currencyIndex.get(currency);
    if (index === undefined) {
      index = this.currencies.push(currency) - 1;
      this.currencyIndex.set(currency, index);
    }
    return index;
  }

  /**
   * Sets `high` and `low` to 64 bits of the payee's key. A register's key is an HMAC in 32
   * characters of base64url: its first 12 characters are 72 random bits, 64 of which are taken
   * as they are. Any other text (a test's names) is hashed into 64 bits instead.
   */
  private keyOf(payee: string): void {
    if (payee.length >= 12) {
      let high = 0;
      let low = 0;
      let i = 0;
      for (; i < 12; i++) {
        const value = BASE64URL[payee.charCodeAt(i)] ?? -1;
        if (value < 0) break;
        if (i < 6) high = ((high << 6) | value) >>> 0;
        else low = ((low << 6) | value) >>> 0;
      }
      if (i === 12) {
        this.high = high;
        this.low = low;
        return;
      }
    }
    this.hashOf(payee);
  }

  /** Two 32-bit FNV-1a lanes of different seeds, each mixed to the last bit (MurmurHash3's finalizer). */
  private hashOf(payee: string): void {
    let high = 0x811c9dc5;
    let low = 0x050c5d1f;
    for (let i = 0; i < payee.length; i++) {
      const code = payee.charCodeAt(i);
      high = Math.imul(high ^ code, 0x01000193);
      low = Math.imul(low ^ code, 0x01000193);
    }
    this.high = mix(high);
    this.low = mix(low ^ payee.length);
  }
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Whether a sum fits a BigInt64Array's slot. */
function fits(minor: bigint): boolean {
  return minor >= MIN_INT64 && minor <= MAX_INT64;
}

/** Each base64url character's value by its char code; -1 for any other. */
const BASE64URL = (() => {
  const values = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();
