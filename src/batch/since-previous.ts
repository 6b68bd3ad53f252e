/**
 * What changed since the previous batch (README, "The approver's view"): the sheet compared
 * with the latest earlier batch this register paid for the service, the way a payroll variance
 * report reads: the totals then and now, the payees paid then and missing now, and the payees
 * whose amount changed, largest changes first. Built while the sheet streams: what is kept is
 * the previous batch's amounts per payee, a fixed few bytes each (payee-amounts.ts), never the
 * sheet's rows nor the previous batch's payouts, which are read again for the payees listed.
 */
import { basename } from 'node:path';
import { UsageError } from '../errors.js';
import { minorOf } from '../register/rules.js';
import type { PaidBatch, ScopeStore } from '../register/types.js';
import { formatMinor } from '../rows/money.js';
import { PayeeAmounts, type PayeeAmountsOf } from './payee-amounts.js';
import { BatchSummary } from './summary.js';

/** One payout of the previous batch, as the register holds it. */
export interface EarlierPayout {
  /** The payee's keyed identity (the payee history's key). */
  payee: string;
  /** The name the sheet gave the payee on this payout. */
  name: string;
  reference: string;
  /** Minor units. */
  minor: bigint;
  currency: string;
}

/**
 * Why this batch is the one compared with: asked for (`--compare-with`), the latest of a sheet
 * of the same name but for its digits, or the latest of any name.
 */
export type ChosenBy = 'asked' | 'name' | 'latest';

/** The previous batch: which sheet, when, how many rows, and why it was chosen. */
export interface PreviousBatch {
  sheet: string;
  /** When it was paid (its last run's start, ISO 8601). */
  at: string;
  rows: number;
  chosenBy?: ChosenBy;
}

/** A payee paid last time and not in this sheet. */
export interface MissingPayee {
  name: string;
  lastReference: string;
  amount: string;
  currency: string;
}

/** A MissingPayee's fields, in the order the JSON summary writes them. */
const MISSING_FIELDS = ['name', 'lastReference', 'amount', 'currency'] as const;

/** A payee paid both times, with another amount now. */
export interface ChangedAmount {
  name: string;
  currency: string;
  previous: string;
  current: string;
  change: string;
}

/** A ChangedAmount's fields, in the order the JSON summary writes them. */
const CHANGED_FIELDS = ['name', 'currency', 'previous', 'current', 'change'] as const;

/** The `sincePrevious` of the JSON summary. */
export interface SincePrevious {
  batch: PreviousBatch;
  totals: Record<string, { previous: string; current: string; change: string }>;
  missingPayees: Listed<MissingPayee>;
  changedAmounts: Listed<ChangedAmount>;
}

/** A list read the way an array is: a count, the first few, each in turn; JSON gives them all. */
export interface Listed<T> extends Iterable<T> {
  readonly length: number;
  slice(start?: number, end?: number): T[];
}

/** Entries of each list the terminal and the report show at most (the JSON summary has all). */
export const LISTED_SHOWN = 50;

/** Entries per chunk of a ListedPayees: a chunk of JSON text is about a hundred kilobytes. */
const LISTED_PER_CHUNK = 2048;

/**
 * A list of payees the comparison names (missing now, another amount), in order, kept as JSON
 * text a chunk of entries at a time rather than as objects. Most months list a few; a sheet the
 * register refuses whole lists every payee of the previous batch, and a million such objects
 * cost hundreds of megabytes on each thread that held them, where their text costs tens, and a
 * thread sends it as a few hundred strings. Only what is read is parsed: the first few for the
 * terminal and the report, all of them for the JSON summary.
 */
export class ListedPayees<T extends object> implements Listed<T> {
  /** Chunks of entries, each a JSON array of their values (in `fields` order): no key repeated. */
  private readonly chunks: string[] = [];
  private pending: unknown[][] = [];
  /** Entries pushed, kept or not. */
  length = 0;
  /** Entries kept: the first `kept` pushed. */
  private stored = 0;

  constructor(
    /** The entries' fields, in the order their values are kept. */
    private readonly fields: readonly (keyof T & string)[],
    /**
     * Entries kept at most: a list for people (the terminal, the report) keeps the first
     * LISTED_SHOWN and counts the others; one for the JSON summary keeps all.
     */
    private readonly kept = Number.POSITIVE_INFINITY,
  ) {}

  /** The list again after a structured clone (a worker's message), which keeps fields only. */
  static from<T extends object>(data: ListedPayees<T>): ListedPayees<T> {
    return Object.assign(new ListedPayees<T>(data.fields, data.kept), data);
  }

  /** Whether it keeps no more entries: the next ones are counted (`skip`), not made. */
  get full(): boolean {
    return this.stored === this.kept;
  }

  /** Counts an entry past those kept, without making it. */
  skip(): void {
    this.length += 1;
  }

  push(entry: T): void {
    this.length += 1;
    if (this.full) return;
    this.stored += 1;
    this.pending.push(this.fields.map((field) => entry[field]));
    if (this.pending.length === LISTED_PER_CHUNK) {
      this.chunks.push(JSON.stringify(this.pending));
      this.pending = [];
    }
  }

  /** The entries from `start` to `end`, as Array.prototype.slice; of those kept only. */
  slice(start = 0, end = this.length): T[] {
    const from = Math.max(0, start < 0 ? this.length + start : start);
    const to = Math.min(this.stored, end < 0 ? this.length + end : end);
    const entries: T[] = [];
    for (let at = from; at < to; ) {
      const chunk = Math.floor(at / LISTED_PER_CHUNK);
      const values = this.chunkAt(chunk);
      const first = at - chunk * LISTED_PER_CHUNK;
      const last = Math.min(values.length, to - chunk * LISTED_PER_CHUNK);
      for (let i = first; i < last; i++) entries.push(this.entryOf(values[i]!));
      at = chunk * LISTED_PER_CHUNK + last;
    }
    return entries;
  }

  /** Each entry kept, in order. */
  *[Symbol.iterator](): Iterator<T> {
    for (let chunk = 0; chunk * LISTED_PER_CHUNK < this.stored; chunk++) {
      for (const values of this.chunkAt(chunk)) yield this.entryOf(values);
    }
  }

  /** Every entry: only a list that kept them all has them (the JSON summary's). */
  toJSON(): T[] {
    if (this.stored < this.length)
      throw new Error(
        `a list of ${this.length} payees kept only its first ${this.stored}: it cannot be written whole`,
      );
    return [...this];
  }

  private chunkAt(chunk: number): readonly unknown[][] {
    const text = this.chunks[chunk];
    return text === undefined ? this.pending : (JSON.parse(text) as unknown[][]);
  }

  private entryOf(values: readonly unknown[]): T {
    const entry: Record<string, unknown> = {};
    this.fields.forEach((field, i) => {
      entry[field] = values[i];
    });
    return entry as T;
  }
}

/** The previous batch's payouts, page by page; each call reads them anew. */
export type EarlierPages = () => AsyncIterable<Iterable<EarlierPayout>>;

/**
 * The same payouts read again for the names of the payees listed (`finish`), which needs no
 * amount: the register's pages as they come, with no amount parsed for a million payouts.
 */
export type NamingPages = () => AsyncIterable<Iterable<Pick<EarlierPayout, 'payee' | 'name' | 'reference'>>>;

/**
 * A comparison as it crosses to another thread (SincePreviousComparison.message): the batch and
 * what was kept of it, without the way to read it again, which that thread has its own of.
 */
export interface ComparisonMessage {
  batch: PreviousBatch;
  digest: string;
  totalsThen: Map<string, bigint>;
  payees: PayeeAmounts;
}

/** Compares a sheet, row by row, with the previous batch's payouts. */
export class SincePreviousComparison {
  // Not readonly: a comparison read on another thread takes the amounts it sent (revive).
  private payees = new PayeeAmounts();
  private totalsThen = new Map<string, bigint>();
  private readonly totalsNow = new Map<string, bigint>();
  /** Reads the payouts again at the end, for the names and references of the payees listed. */
  private readAgain: NamingPages;

  /** A comparison with `payouts`, which `finish` reads again (an array: a test's few payouts). */
  constructor(
    private batch: PreviousBatch,
    payouts: Iterable<EarlierPayout>,
    /** The batch digest of the batch compared with: this sheet's own is no previous batch. */
    readonly digest = '',
  ) {
    this.take(payouts);
    this.readAgain = async function* () {
      yield payouts;
    };
  }

  /**
   * A comparison with the payouts `pages` reads (a register's, a page at a time): kept are their
   * amounts per payee, never the payouts, which `again` reads at the end (by default `pages`).
   * `rows` null: the batch's payouts count as its rows.
   */
  static async read(
    batch: Omit<PreviousBatch, 'rows'> & { rows: number | null },
    pages: EarlierPages,
    digest = '',
    again: NamingPages = pages,
  ): Promise<SincePreviousComparison> {
    const { sheet, at } = batch;
    const chosen = batch.chosenBy === undefined ? {} : { chosenBy: batch.chosenBy };
    const comparison = new SincePreviousComparison(
      { sheet, at, rows: batch.rows ?? 0, ...chosen },
      [],
      digest,
    );
    comparison.readAgain = again;
    let payouts = 0;
    for await (const page of pages()) payouts += comparison.take(page);
    if (batch.rows === null) comparison.batch = { sheet, at, rows: payouts, ...chosen };
    return comparison;
  }

  /**
   * The comparison for another thread (`revive`), before any row was added: its typed arrays
   * move with the message (`transfer`), which leaves this one unusable.
   */
  message(): { data: ComparisonMessage; transfer: ArrayBuffer[] } {
    const { batch, digest, totalsThen, payees } = this;
    return { data: { batch, digest, totalsThen, payees }, transfer: payees.buffers() };
  }

  /** The comparison another thread read (`message`), read again at the end through `pages`. */
  static revive(data: ComparisonMessage, pages: NamingPages): SincePreviousComparison {
    const comparison = new SincePreviousComparison(data.batch, [], data.digest);
    comparison.payees = PayeeAmounts.from(data.payees);
    comparison.totalsThen = data.totalsThen;
    comparison.readAgain = pages;
    return comparison;
  }

  /** Adds the previous batch's payouts; how many. */
  private take(payouts: Iterable<EarlierPayout>): number {
    let count = 0;
    for (const payout of payouts) {
      this.payees.addPaid(payout.payee, payout.minor, payout.currency);
      BatchSummary.add(this.totalsThen, payout.currency, payout.minor);
      count += 1;
    }
    return count;
  }

  /** Whether rows need their payee's keyed identity: not when the previous batch names no payee. */
  get needsPayees(): boolean {
    return this.payees.size > 0;
  }

  /** A valid row of this sheet: its payee's keyed identity (undefined: none), amount and currency. */
  add(payee: string | undefined, minor: bigint, currency: string): void {
    BatchSummary.add(this.totalsNow, currency, minor);
    if (payee !== undefined) this.payees.addSheet(payee, minor, currency);
  }

  /**
   * The comparison, once every row was added. The payees it lists (missing, or paid another
   * amount) are named from a second reading of the previous batch: the name of the first payout
   * read of each, the reference of the last, in the order the payees were first read.
   */
  async finish(kept = Number.POSITIVE_INFINITY): Promise<SincePrevious> {
    const listed = await this.readListed(kept);
    return {
      batch: this.batch,
      totals: this.totalsCompared(),
      missingPayees: this.missingPayees(listed, kept),
      changedAmounts: this.changedAmounts(listed, kept),
    };
  }

  /** Each currency's total then and now, and the change. */
  private totalsCompared(): SincePrevious['totals'] {
    const currencies = [...new Set([...this.totalsThen.keys(), ...this.totalsNow.keys()])].sort();
    const totals: SincePrevious['totals'] = {};
    for (const currency of currencies) {
      const then = this.totalsThen.get(currency) ?? 0n;
      const now = this.totalsNow.get(currency) ?? 0n;
      totals[currency] = {
        previous: formatMinor(then),
        current: formatMinor(now),
        change: signed(now - then),
      };
    }
    return totals;
  }

  /**
   * The payees listed, named from a second reading of the previous batch. Each, the first time
   * it is read, joins its list's candidates: all of them for the JSON summary; for people, only
   * those that may still be among the first `kept` (a sheet the register refuses whole lists
   * every payee, and their names would cost tens of megabytes).
   */
  private async readListed(kept: number): Promise<Found> {
    const names: (string | undefined)[] = [];
    const listed: Found = {
      names,
      lastReferences: [],
      missing: new Candidates<number>(kept, (a, b) => names[a]!.localeCompare(names[b]!)),
      changed: new Candidates<Change>(
        kept,
        (a, b) => bySize(a, b) || names[a.entry]!.localeCompare(names[b.entry]!),
      ),
      missingCount: 0,
      changedCount: 0,
    };
    // A month like the last (every payee paid again, the same amounts) lists nobody: the
    // previous batch is not read again.
    if (!this.payees.anyListed()) return listed;
    const read = new Uint8Array(this.payees.size);
    const offer = new Offer(listed, Number.isFinite(kept));
    for await (const page of this.readAgain()) {
      for (const payout of page) {
        const entry = this.payees.find(payout.payee);
        if (entry < 0 || !this.payees.listed(entry)) continue;
        if (read[entry] === 0) {
          read[entry] = 1;
          // Copies: a page's texts are slices of one long text, which any of them kept would keep.
          names[entry] = detached(payout.name);
          if (!this.payees.seen(entry)) {
            listed.missingCount += this.payees.currenciesPaid(entry);
            offer.missing(entry);
          } else offer.changed(entry, this.payees.amountsOf(entry));
        }
        // The last reference read of a candidate; one that left the candidates is forgotten.
        if (names[entry] !== undefined) listed.lastReferences[entry] = detached(payout.reference);
      }
    }
    return listed;
  }

  /** The missing payees in order, by name, then reference; a payee's currencies as first read. */
  private missingPayees({ missing, names, lastReferences, missingCount }: Found, kept: number) {
    const list = new ListedPayees<MissingPayee>(MISSING_FIELDS, kept);
    for (const entry of missing.sorted((a, b) => lastReferences[a]!.localeCompare(lastReferences[b]!))) {
      const name = names[entry]!;
      const lastReference = lastReferences[entry]!;
      for (const [currency, minor] of this.payees.amountsOf(entry).paid) {
        if (list.full) break;
        list.push({ name, lastReference, amount: formatMinor(minor), currency });
      }
    }
    // The others are only counted.
    while (list.length < missingCount) list.skip();
    return list;
  }

  /** The changed amounts, largest change first; of equal changes, by name. */
  private changedAmounts({ changed, names, changedCount }: Found, kept: number) {
    const list = new ListedPayees<ChangedAmount>(CHANGED_FIELDS, kept);
    for (const { entry, currency, then, now } of changed.sorted()) {
      if (list.full) break;
      list.push({
        name: names[entry]!,
        currency,
        previous: formatMinor(then),
        current: formatMinor(now),
        change: signed(now - then),
      });
    }
    while (list.length < changedCount) list.skip();
    return list;
  }
}

/** What the second reading of the previous batch found: the candidates and their names. */
interface Found {
  /** By payee entry: the name of its first payout read, while it is a candidate. */
  names: (string | undefined)[];
  /** By payee entry: the reference of its last payout read, while it is a candidate. */
  lastReferences: (string | undefined)[];
  missing: Candidates<number>;
  changed: Candidates<Change>;
  missingCount: number;
  changedCount: number;
}

/**
 * Payees offered to the lists' candidates as they are read. A payee's changed amounts are
 * candidates one by one: its name goes with the last, once all of them were offered (the payee
 * being read). Without a bound, none goes.
 */
class Offer {
  private readonly pending = new Map<number, number>();
  private reading = -1;

  constructor(
    private readonly listed: Found,
    private readonly bounded: boolean,
  ) {}

  private readonly forget = (entry: number): void => {
    this.listed.names[entry] = undefined;
    this.listed.lastReferences[entry] = undefined;
  };

  private readonly forgetChange = ({ entry }: Change): void => {
    const left = this.pending.get(entry)! - 1;
    if (left > 0) this.pending.set(entry, left);
    else {
      this.pending.delete(entry);
      if (entry !== this.reading) this.forget(entry);
    }
  };

  missing(entry: number): void {
    if (!this.listed.missing.add(entry, this.forget)) this.forget(entry);
  }

  changed(entry: number, { paid, sheet }: PayeeAmountsOf): void {
    this.reading = entry;
    for (const currency of new Set([...paid.keys(), ...sheet.keys()])) {
      const then = paid.get(currency) ?? 0n;
      const now = sheet.get(currency) ?? 0n;
      if (then === now) continue;
      this.listed.changedCount += 1;
      const difference = now - then;
      const change = { entry, currency, then, now, size: difference < 0n ? -difference : difference };
      if (!this.bounded) this.listed.changed.add(change, this.forgetChange);
      else {
        this.pending.set(entry, (this.pending.get(entry) ?? 0) + 1);
        if (!this.listed.changed.add(change, this.forgetChange)) this.forgetChange(change);
      }
    }
    this.reading = -1;
    if (this.bounded && !this.pending.has(entry)) this.forget(entry);
  }
}

/** A payee's amount in one currency, other now than then. */
interface Change {
  entry: number;
  currency: string;
  then: bigint;
  now: bigint;
  /** How far apart, either way. */
  size: bigint;
}

/** Larger changes first. */
function bySize(a: Change, b: Change): number {
  return a.size === b.size ? 0 : a.size > b.size ? -1 : 1;
}

/**
 * The entries of a list that may be among its first `kept` in `order`, added in the order of
 * the entries' numbers: past twice `kept`, those after the kept-th are let go (`forget`), but
 * for its equals, which a further order (`sorted`) tells apart. With no bound, every entry.
 */
class Candidates<T> {
  private entries: T[] = [];
  /** The kept-th entry when the entries were last cut: none after it can be among the first. */
  private last: T | undefined;

  constructor(
    private readonly kept: number,
    private readonly order: (a: T, b: T) => number,
  ) {}

  /**
   * Adds an entry; false when it cannot be among the first `kept` (it is not added). One added
   * may be let go at once, past the kept-th of the entries it joined.
   */
  add(entry: T, forget: (entry: T) => void): boolean {
    if (this.kept < 1 || (this.last !== undefined && this.order(entry, this.last) > 0)) return false;
    this.entries.push(entry);
    if (this.entries.length >= 2 * this.kept) {
      this.entries.sort(this.order);
      const last = this.entries[this.kept - 1]!;
      let end = this.kept;
      while (end < this.entries.length && this.order(this.entries[end]!, last) === 0) end += 1;
      for (const gone of this.entries.slice(end)) forget(gone);
      this.entries.length = end;
      this.last = last;
    }
    return true;
  }

  /** The entries in order, equals by `then`, else in the order they were added; call once. */
  sorted(then?: (a: T, b: T) => number): T[] {
    return this.entries.sort((a, b) => this.order(a, b) || (then?.(a, b) ?? 0));
  }
}

/**
 * A text of its own: V8 cuts texts out of a longer one as slices that keep the longer one alive,
 * and a copy made by concatenation, then cut, keeps only itself.
 */
function detached(text: string): string {
  return `${text} `.slice(0, -1);
}

/** What changed since the previous batch again after a structured clone (a worker's message). */
export function sinceFrom(data: SincePrevious | null): SincePrevious | null {
  if (data === null) return null;
  return {
    ...data,
    missingPayees: ListedPayees.from(data.missingPayees as ListedPayees<MissingPayee>),
    changedAmounts: ListedPayees.from(data.changedAmounts as ListedPayees<ChangedAmount>),
  };
}

/** "+12.50" or "-3.00": a change reads as one. */
function signed(minor: bigint): string {
  return minor < 0n ? `-${formatMinor(-minor)}` : `+${formatMinor(minor)}`;
}

/**
 * How many of the latest batches the register paid a sheet is compared with: two, since this
 * sheet may be the latest itself (a resumed or re-validated batch), which only its digest, known
 * at the end of the reading, tells.
 */
export const COMPARED_BATCHES = 2;

/** How far back the register's paid batches are looked through for one of the same name. */
const LOOKED_BACK = 500;

/** Which earlier batch a sheet is compared with: the sheet's file name, and `--compare-with`. */
export interface CompareChoice {
  sheet: string;
  /** A sheet file or name as `status` lists it (the latest batch of it), or a batch digest. */
  compareWith?: string | undefined;
}

/**
 * The batches a sheet is compared with, with why (README "--compare-with"): the one asked for;
 * else the latest (COMPARED_BATCHES) of a sheet whose name is this one's but for its digits
 * (payroll-2026-11.csv for payroll-2026-12.csv), so a one-off sheet between two payrolls is no
 * payroll's previous batch; else the latest of any name. A `--compare-with` that names no batch
 * of this service is a usage error (exit 2), before anything is sent.
 */
export async function comparedBatches(
  store: Pick<ScopeStore, 'paidBatches'>,
  choice: CompareChoice,
): Promise<(PaidBatch & { chosenBy: ChosenBy })[]> {
  const paid = await store.paidBatches(choice.compareWith === undefined ? LOOKED_BACK : LOOKED_BACK * 4);
  if (choice.compareWith !== undefined) {
    const asked = choice.compareWith.trim();
    const name = basename(asked);
    const found = /^[0-9a-f]{64}$/i.test(asked)
      ? paid.find((batch) => batch.digest === asked.toLowerCase())
      : paid.find((batch) => batch.sheet === name);
    if (found === undefined) {
      throw new UsageError(
        `--compare-with ${asked} names no batch the register paid for this service: give a sheet's file or its name as payouts status lists it, or the batch digest a run recorded`,
      );
    }
    return [{ ...found, chosenBy: 'asked' }];
  }
  const family = nameWithoutDigits(choice.sheet);
  const sameName = paid.filter((batch) => nameWithoutDigits(batch.sheet) === family);
  return sameName.length > 0
    ? sameName.slice(0, COMPARED_BATCHES).map((batch) => ({ ...batch, chosenBy: 'name' as const }))
    : paid.slice(0, COMPARED_BATCHES).map((batch) => ({ ...batch, chosenBy: 'latest' as const }));
}

/** Why a batch was compared with, in words (the summary and the report). */
export function chosenInWords(chosenBy: ChosenBy | undefined): string {
  return chosenBy === 'asked'
    ? 'as --compare-with asked'
    : chosenBy === 'name'
      ? "the latest batch of this sheet's name (its digits aside)"
      : 'the latest batch paid, no earlier sheet having this name';
}

/** The choice of a command's options: its sheet, and `--compare-with` when given. */
export function compareChoiceOf(options: {
  sheetPath: string;
  compareWith?: string | undefined;
}): CompareChoice {
  return { sheet: basename(options.sheetPath), compareWith: options.compareWith };
}

/** A sheet's file name with every digit left out, in lower case: a month's sheet's family. */
function nameWithoutDigits(sheet: string): string {
  return basename(sheet).replace(/\d/g, '').toLowerCase();
}

/**
 * The comparisons a sheet is read with (COMPARED_BATCHES): `batches`, when the store was asked
 * for them already. `pause` is awaited between two pages of a batch: a thread with other work
 * (the main thread of `validate` reading the sheet) lets it run meanwhile.
 */
export async function sinceCandidates(
  store: Pick<ScopeStore, 'paidBatches' | 'batchPayouts'> | undefined,
  options: {
    batches?: readonly (PaidBatch & { chosenBy?: ChosenBy })[];
    pause?: () => Promise<void>;
    choice?: CompareChoice;
  } = {},
): Promise<SincePreviousComparison[]> {
  if (store === undefined) return [];
  const { pause } = options;
  const comparisons: SincePreviousComparison[] = [];
  const batches =
    options.batches ??
    (options.choice === undefined
      ? await store.paidBatches(COMPARED_BATCHES)
      : await comparedBatches(store, options.choice));
  for (const batch of batches) {
    const pages = () => earlierPages(store, batch.digest);
    const first = pause === undefined ? pages : () => paused(pages(), pause);
    comparisons.push(
      await SincePreviousComparison.read(batch, first, batch.digest, () => store.batchPayouts(batch.digest)),
    );
  }
  return comparisons;
}

/** The comparisons another thread read (`message`), each read again at the end from `store`. */
export function revivedComparisons(
  store: Pick<ScopeStore, 'batchPayouts'>,
  messages: readonly ComparisonMessage[],
): SincePreviousComparison[] {
  return messages.map((data) => SincePreviousComparison.revive(data, () => store.batchPayouts(data.digest)));
}

/** The pages, with `pause` awaited after each. */
async function* paused<T>(pages: AsyncIterable<T>, pause: () => Promise<void>): AsyncIterable<T> {
  for await (const page of pages) {
    yield page;
    await pause();
  }
}

/** A payout of the previous batch with its amount read, made by `new` as PagePayout is. */
class PaidAmount implements EarlierPayout {
  constructor(
    readonly payee: string,
    readonly name: string,
    readonly reference: string,
    readonly minor: bigint,
    readonly currency: string,
  ) {}
}

async function* earlierPages(
  store: Pick<ScopeStore, 'batchPayouts'>,
  digest: string,
): AsyncIterable<EarlierPayout[]> {
  for await (const page of store.batchPayouts(digest)) {
    yield page.map((p) => new PaidAmount(p.payee, p.name, p.reference, minorOf(p.amount), p.currency));
  }
}

/**
 * What changed since the previous batch for a sheet of `digest`: the comparison with the latest
 * batch that is not this one, finished (it reads that batch once more); null without one.
 */
export function sinceOf(
  comparisons: readonly SincePreviousComparison[],
  digest: string,
  /** Entries kept per list (LISTED_SHOWN when no JSON summary is written); all by default. */
  kept?: number,
): Promise<SincePrevious | null> {
  return comparisons.find((c) => c.digest !== digest)?.finish(kept) ?? Promise.resolve(null);
}
