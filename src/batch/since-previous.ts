/**
 * What changed since the previous batch (README, "The approver's view"): the sheet compared
 * with the latest earlier batch this register paid for the service, the way a payroll variance
 * report reads: the totals then and now, the payees paid then and missing now, and the payees
 * whose amount changed, largest changes first. Built while the sheet streams: what is kept is
 * the previous batch's amounts per payee, a fixed few bytes each (payee-amounts.ts), never the
 * sheet's rows nor the previous batch's payouts, which are read again for the payees listed.
 */
import { minorOf } from '../register/rules.js';
import type { ScopeStore } from '../register/types.js';
import { formatMinor } from '../rows/money.js';
import { PayeeAmounts } from './payee-amounts.js';
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

/** The previous batch: which sheet, when, how many rows. */
export interface PreviousBatch {
  sheet: string;
  /** When it was paid (its last run's start, ISO 8601). */
  at: string;
  rows: number;
}

/** A payee paid last time and not in this sheet. */
export interface MissingPayee {
  name: string;
  lastReference: string;
  amount: string;
  currency: string;
}

/** A payee paid both times, with another amount now. */
export interface ChangedAmount {
  name: string;
  currency: string;
  previous: string;
  current: string;
  change: string;
}

/** The `sincePrevious` of the JSON summary. */
export interface SincePrevious {
  batch: PreviousBatch;
  totals: Record<string, { previous: string; current: string; change: string }>;
  missingPayees: MissingPayee[];
  changedAmounts: ChangedAmount[];
}

/** The previous batch's payouts, page by page; each call reads them anew. */
export type EarlierPages = () => AsyncIterable<Iterable<EarlierPayout>>;

/** Compares a sheet, row by row, with the previous batch's payouts. */
export class SincePreviousComparison {
  private readonly payees = new PayeeAmounts();
  private readonly totalsThen = new Map<string, bigint>();
  private readonly totalsNow = new Map<string, bigint>();
  /** Reads the payouts again at the end, for the names and references of the payees listed. */
  private readAgain: EarlierPages;

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
   * amounts per payee, never the payouts. `rows` null: the batch's payouts count as its rows.
   */
  static async read(
    batch: Omit<PreviousBatch, 'rows'> & { rows: number | null },
    pages: EarlierPages,
    digest = '',
  ): Promise<SincePreviousComparison> {
    const { sheet, at } = batch;
    const comparison = new SincePreviousComparison({ sheet, at, rows: batch.rows ?? 0 }, [], digest);
    comparison.readAgain = pages;
    let payouts = 0;
    for await (const page of pages()) payouts += comparison.take(page);
    if (batch.rows === null) comparison.batch = { sheet, at, rows: payouts };
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
  async finish(): Promise<SincePrevious> {
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
    const named = new Map<number, { name: string; lastReference: string }>();
    // A month like the last (every payee paid again, the same amounts) lists nobody: the
    // previous batch is not read again.
    if (this.payees.anyListed()) {
      for await (const page of this.readAgain()) {
        for (const payout of page) {
          const entry = this.payees.find(payout.payee);
          if (entry < 0 || !this.payees.listed(entry)) continue;
          const known = named.get(entry);
          if (known === undefined) named.set(entry, { name: payout.name, lastReference: payout.reference });
          else known.lastReference = payout.reference;
        }
      }
    }
    const missingPayees: MissingPayee[] = [];
    const changed: (ChangedAmount & { size: bigint })[] = [];
    for (const [entry, { name, lastReference }] of named) {
      const { paid, sheet, seen } = this.payees.amountsOf(entry);
      if (!seen) {
        for (const [currency, minor] of paid) {
          missingPayees.push({ name, lastReference, amount: formatMinor(minor), currency });
        }
        continue;
      }
      for (const currency of new Set([...paid.keys(), ...sheet.keys()])) {
        const then = paid.get(currency) ?? 0n;
        const now = sheet.get(currency) ?? 0n;
        if (then === now) continue;
        const difference = now - then;
        changed.push({
          name,
          currency,
          previous: formatMinor(then),
          current: formatMinor(now),
          change: signed(difference),
          size: difference < 0n ? -difference : difference,
        });
      }
    }
    missingPayees.sort(
      (a, b) => a.name.localeCompare(b.name) || a.lastReference.localeCompare(b.lastReference),
    );
    changed.sort((a, b) => (a.size === b.size ? a.name.localeCompare(b.name) : a.size > b.size ? -1 : 1));
    return {
      batch: this.batch,
      totals,
      missingPayees,
      changedAmounts: changed.map(({ size: _size, ...rest }) => rest),
    };
  }
}

/** "+12.50" or "-3.00": a change reads as one. */
function signed(minor: bigint): string {
  return minor < 0n ? `-${formatMinor(-minor)}` : `+${formatMinor(minor)}`;
}

/**
 * The comparisons a sheet is read with: the latest two batches the register paid, since this
 * sheet may be the latest itself (a resumed or re-validated batch), which only its digest, known
 * at the end of the reading, tells.
 */
export async function sinceCandidates(
  store: Pick<ScopeStore, 'paidBatches' | 'batchPayouts'> | undefined,
): Promise<SincePreviousComparison[]> {
  if (store === undefined) return [];
  const comparisons: SincePreviousComparison[] = [];
  for (const batch of await store.paidBatches(2)) {
    const pages = () => earlierPages(store, batch.digest);
    comparisons.push(await SincePreviousComparison.read(batch, pages, batch.digest));
  }
  return comparisons;
}

async function* earlierPages(
  store: Pick<ScopeStore, 'batchPayouts'>,
  digest: string,
): AsyncIterable<EarlierPayout[]> {
  for await (const page of store.batchPayouts(digest)) {
    yield page.map((p) => ({
      payee: p.payee,
      name: p.name,
      reference: p.reference,
      minor: minorOf(p.amount),
      currency: p.currency,
    }));
  }
}

/**
 * What changed since the previous batch for a sheet of `digest`: the comparison with the latest
 * batch that is not this one, finished (it reads that batch once more); null without one.
 */
export function sinceOf(
  comparisons: readonly SincePreviousComparison[],
  digest: string,
): Promise<SincePrevious | null> {
  return comparisons.find((c) => c.digest !== digest)?.finish() ?? Promise.resolve(null);
}
