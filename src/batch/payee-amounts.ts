/**
 * The amounts a comparison with the previous batch keeps per payee (since-previous.ts): what
 * the batch paid the payee then and what the sheet pays now, for a million payees in a few tens
 * of megabytes. A Map of objects would cost hundreds of bytes a payee; here a payee is 25 bytes
 * in typed arrays (64 bits of its keyed hash, two amounts, a byte of state) and an index slot of
 * 4: no name, no reference, no string of it kept. Each further currency of a payee takes 17
 * bytes more in typed arrays and an entry of a Map of numbers (a sheet of people each paid in
 * three currencies cost 390 bytes a payee as Maps of Maps). An amount past 64 bits moves the
 * payee's amounts to a small Map of its own: rare, and exact whatever the amount.
 */
import { BatchSummary } from './summary.js';

/** Payees per chunk of the typed arrays: they grow a chunk at a time, and never move. */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
/**
 * The state byte: the first currency's index in its low bits, or SEVERAL once the amounts moved
 * to a Map; SEEN once the sheet paid the payee; ON_SHEET once the sheet paid it in that first
 * currency (SEEN may come from another).
 */
const SEVERAL = 0x7f;
const SEEN = 0x80;
/** In the byte of a further currency: paid in it then, paid in it now; MOVED once in a Map. */
const PAID_THEN = 1;
const PAID_NOW = 2;
const MOVED = 4;
/** Index slots filled at most: past this share, linear probing takes ever longer. */
const LOAD = 0.8;
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

/** A payee's amounts per currency, where 64 bits do not tell them. */
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
  /** Whether the sheet paid the payee in its first currency (bit ON_SHEET of a byte each). */
  private readonly onSheet: Uint8Array[] = [];
  /**
   * A payee's further currencies, by open addressing as the payees are: each index slot holds
   * the slot's number plus one; a slot keeps its payee's number and its currency's index.
   */
  private furtherIndex = new Int32Array(1 << 10);
  private readonly furtherEntry: Uint32Array[] = [];
  private readonly furtherCurrency: Uint8Array[] = [];
  private readonly furtherPaid: BigInt64Array[] = [];
  private readonly furtherSheet: BigInt64Array[] = [];
  private readonly furtherState: Uint8Array[] = [];
  private furtherSize = 0;
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

  /** The amounts again after a structured clone (another thread's message), which keeps fields only. */
  static from(data: PayeeAmounts): PayeeAmounts {
    return Object.assign(new PayeeAmounts(), data);
  }

  /** The memory of the typed arrays, to be moved to another thread with them rather than copied. */
  buffers(): ArrayBuffer[] {
    const arrays = [
      ...this.keyHigh,
      ...this.keyLow,
      ...this.paid,
      ...this.sheet,
      ...this.state,
      ...this.onSheet,
      ...this.furtherEntry,
      ...this.furtherCurrency,
      ...this.furtherPaid,
      ...this.furtherSheet,
      ...this.furtherState,
      this.furtherIndex,
      this.index,
    ];
    return [...new Set(arrays.map((array) => array.buffer as ArrayBuffer))];
  }

  /** Adds `minor` paid to `payee` in the previous batch. */
  addPaid(payee: string, minor: bigint, currency: string): void {
    const index = this.currencyOf(currency);
    let entry = this.find(payee);
    if (entry < 0) {
      entry = this.insert();
      const at = entry & (CHUNK - 1);
      const chunk = entry >>> CHUNK_BITS;
      if (index < SEVERAL && fits(minor)) {
        this.state[chunk]![at] = index;
        this.paid[chunk]![at] = minor;
      } else {
        this.state[chunk]![at] = SEVERAL;
        this.several.set(entry, { paid: new Map([[currency, minor]]), sheet: new Map() });
      }
      return;
    }
    this.add(entry, minor, currency, index, true);
  }

  /** Adds `minor` the sheet pays `payee`, if the previous batch paid it. */
  addSheet(payee: string, minor: bigint, currency: string): void {
    const entry = this.find(payee);
    if (entry < 0) return;
    this.add(entry, minor, currency, this.currencyOf(currency), false);
    this.state[entry >>> CHUNK_BITS]![entry & (CHUNK - 1)]! |= SEEN;
  }

  /** Adds an amount to a payee kept already: then (`paid`) or now. */
  private add(entry: number, minor: bigint, currency: string, index: number, paid: boolean): void {
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const first = this.state[chunk]![at]! & SEVERAL;
    if (first !== SEVERAL && index === first) {
      const amounts = paid ? this.paid[chunk]! : this.sheet[chunk]!;
      const sum = amounts[at]! + minor;
      if (fits(sum)) {
        amounts[at] = sum;
        if (!paid) this.onSheet[chunk]![at] = 1;
        return;
      }
    } else if (first !== SEVERAL && index < SEVERAL) {
      let slot = this.furtherFind(entry, index);
      if (slot < 0) slot = this.furtherSlot(entry, index);
      const slotAt = slot & (CHUNK - 1);
      const slotChunk = slot >>> CHUNK_BITS;
      const amounts = paid ? this.furtherPaid[slotChunk]! : this.furtherSheet[slotChunk]!;
      const sum = amounts[slotAt]! + minor;
      if (fits(sum)) {
        amounts[slotAt] = sum;
        this.furtherState[slotChunk]![slotAt]! |= paid ? PAID_THEN : PAID_NOW;
        return;
      }
    }
    const several = this.severalOf(entry);
    BatchSummary.add(paid ? several.paid : several.sheet, currency, minor);
  }

  /** The slot of a payee's further currency, or -1. */
  private furtherFind(entry: number, index: number): number {
    const mask = this.furtherIndex.length - 1;
    for (let at = furtherHash(entry, index) & mask; ; at = (at + 1) & mask) {
      const slot = this.furtherIndex[at]! - 1;
      if (slot < 0) return -1;
      const slotAt = slot & (CHUNK - 1);
      const slotChunk = slot >>> CHUNK_BITS;
      if (
        this.furtherEntry[slotChunk]![slotAt] === entry &&
        this.furtherCurrency[slotChunk]![slotAt] === index &&
        (this.furtherState[slotChunk]![slotAt]! & MOVED) === 0
      )
        return slot;
    }
  }

  /** A new slot of a payee's further currency. */
  private furtherSlot(entry: number, index: number): number {
    if (this.furtherSize + 1 > this.furtherIndex.length * LOAD) {
      this.furtherIndex = new Int32Array(this.furtherIndex.length * 2);
      for (let slot = 0; slot < this.furtherSize; slot++) this.furtherPlace(slot);
    }
    const slot = this.furtherSize++;
    const slotAt = slot & (CHUNK - 1);
    if (slotAt === 0) {
      this.furtherEntry.push(new Uint32Array(CHUNK));
      this.furtherCurrency.push(new Uint8Array(CHUNK));
      this.furtherPaid.push(new BigInt64Array(CHUNK));
      this.furtherSheet.push(new BigInt64Array(CHUNK));
      this.furtherState.push(new Uint8Array(CHUNK));
    }
    this.furtherEntry[slot >>> CHUNK_BITS]![slotAt] = entry;
    this.furtherCurrency[slot >>> CHUNK_BITS]![slotAt] = index;
    this.furtherPlace(slot);
    return slot;
  }

  private furtherPlace(slot: number): void {
    const slotAt = slot & (CHUNK - 1);
    const slotChunk = slot >>> CHUNK_BITS;
    const mask = this.furtherIndex.length - 1;
    let at =
      furtherHash(this.furtherEntry[slotChunk]![slotAt]!, this.furtherCurrency[slotChunk]![slotAt]!) & mask;
    while (this.furtherIndex[at] !== 0) at = (at + 1) & mask;
    this.furtherIndex[at] = slot + 1;
  }

  /** The slots of a payee's further currencies, in the order they were first met. */
  private furtherOf(entry: number): number[] {
    const slots: number[] = [];
    if (this.furtherSize === 0) return slots;
    for (let index = 0; index < this.currencies.length && index < SEVERAL; index++) {
      const slot = this.furtherFind(entry, index);
      if (slot >= 0) slots.push(slot);
    }
    return slots.sort((a, b) => a - b);
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
    if ((state & SEVERAL) !== SEVERAL) {
      if (this.paid[chunk]![at] !== this.sheet[chunk]![at]) return true;
      for (const slot of this.furtherOf(entry)) {
        if (
          this.furtherPaid[slot >>> CHUNK_BITS]![slot & (CHUNK - 1)] !==
          this.furtherSheet[slot >>> CHUNK_BITS]![slot & (CHUNK - 1)]
        )
          return true;
      }
      return false;
    }
    const { paid, sheet } = this.several.get(entry)!;
    for (const currency of new Set([...paid.keys(), ...sheet.keys()]))
      if ((paid.get(currency) ?? 0n) !== (sheet.get(currency) ?? 0n)) return true;
    return false;
  }

  /** Whether the comparison lists any payee. */
  anyListed(): boolean {
    for (let entry = 0; entry < this.size; entry++) if (this.listed(entry)) return true;
    return false;
  }

  /** Whether the sheet paid the payee, in any currency. */
  seen(entry: number): boolean {
    return (this.state[entry >>> CHUNK_BITS]![entry & (CHUNK - 1)]! & SEEN) !== 0;
  }

  /**
   * In how many currencies the previous batch paid the payee: amountsOf(entry).paid.size,
   * without the Maps, for a sheet that leaves out a million payees.
   */
  currenciesPaid(entry: number): number {
    const several = this.several.get(entry);
    if (several !== undefined) return several.paid.size;
    let count = 1;
    for (const slot of this.furtherOf(entry))
      if ((this.furtherState[slot >>> CHUNK_BITS]![slot & (CHUNK - 1)]! & PAID_THEN) !== 0) count += 1;
    return count;
  }

  /** The payee's amounts, per currency in the order they were first met (then before now). */
  amountsOf(entry: number): PayeeAmountsOf {
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const state = this.state[chunk]![at]!;
    const seen = (state & SEEN) !== 0;
    const amounts = this.several.get(entry) ?? this.spread(entry);
    return { paid: amounts.paid, sheet: amounts.sheet, seen };
  }

  /** A payee's amounts as Maps, from the typed arrays. */
  private spread(entry: number): SeveralAmounts {
    const at = entry & (CHUNK - 1);
    const chunk = entry >>> CHUNK_BITS;
    const currency = this.currencies[this.state[chunk]![at]! & SEVERAL]!;
    const paid = new Map([[currency, this.paid[chunk]![at]!]]);
    const sheet = new Map<string, bigint>();
    if (this.onSheet[chunk]![at] === 1) sheet.set(currency, this.sheet[chunk]![at]!);
    const further = this.furtherOf(entry);
    for (const [flag, amounts, into] of [
      [PAID_THEN, this.furtherPaid, paid],
      [PAID_NOW, this.furtherSheet, sheet],
    ] as const) {
      for (const slot of further) {
        const slotAt = slot & (CHUNK - 1);
        const slotChunk = slot >>> CHUNK_BITS;
        if ((this.furtherState[slotChunk]![slotAt]! & flag) !== 0)
          into.set(this.currencies[this.furtherCurrency[slotChunk]![slotAt]!]!, amounts[slotChunk]![slotAt]!);
      }
    }
    return { paid, sheet };
  }

  /** Moves a payee's amounts to a Map of its own: an amount past 64 bits. */
  private severalOf(entry: number): SeveralAmounts {
    const kept = this.several.get(entry);
    if (kept !== undefined) return kept;
    const amounts = this.spread(entry);
    for (const slot of this.furtherOf(entry))
      this.furtherState[slot >>> CHUNK_BITS]![slot & (CHUNK - 1)]! |= MOVED;
    this.several.set(entry, amounts);
    const chunk = entry >>> CHUNK_BITS;
    this.state[chunk]![entry & (CHUNK - 1)]! |= SEVERAL;
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
      this.onSheet.push(new Uint8Array(CHUNK));
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

/** Where a payee's further currency is looked for first. */
function furtherHash(entry: number, index: number): number {
  return mix(Math.imul(entry, 0x9e3779b1) ^ index);
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
