/**
 * What changed since the previous batch (README, "The approver's view"): the sheet compared
 * with the latest earlier batch this register paid for the service, the way a payroll variance
 * report reads: the totals then and now, the payees paid then and missing now, and the payees
 * whose amount changed, largest changes first. Built while the sheet streams: what is kept is
 * the previous batch's payees (one entry each), never the sheet's rows.
 */
import { minorOf } from '../register/rules.js';
import type { PaidBatch, ScopeStore } from '../register/types.js';
import { formatMinor } from '../rows/money.js';
import { BatchSummary } from './summary.js';

/** One payout of the previous batch, as the register holds it. */
export interface EarlierPayout {
  /** The payee's keyed identity (the payee history's key). */
  payee: string;
  /** The name the sheet gave the payee (the last one the register knows). */
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

interface PayeeThen {
  name: string;
  lastReference: string;
  /** Per currency, minor units paid in the previous batch. */
  paid: Map<string, bigint>;
  /** Per currency, minor units in this sheet. */
  sheet: Map<string, bigint>;
}

/** Compares a sheet, row by row, with the previous batch's payouts. */
export class SincePreviousComparison {
  private readonly payees = new Map<string, PayeeThen>();
  private readonly totalsThen = new Map<string, bigint>();
  private readonly totalsNow = new Map<string, bigint>();

  constructor(
    private readonly batch: PreviousBatch,
    payouts: Iterable<EarlierPayout>,
    /** The batch digest of the batch compared with: this sheet's own is no previous batch. */
    readonly digest = '',
  ) {
    for (const payout of payouts) {
      let payee = this.payees.get(payout.payee);
      if (payee === undefined) {
        payee = { name: payout.name, lastReference: payout.reference, paid: new Map(), sheet: new Map() };
        this.payees.set(payout.payee, payee);
      }
      payee.lastReference = payout.reference;
      BatchSummary.add(payee.paid, payout.currency, payout.minor);
      BatchSummary.add(this.totalsThen, payout.currency, payout.minor);
    }
  }

  /** Whether rows need their payee's keyed identity: not when the previous batch names no payee. */
  get needsPayees(): boolean {
    return this.payees.size > 0;
  }

  /** A valid row of this sheet: its payee's keyed identity (undefined: none), amount and currency. */
  add(payee: string | undefined, minor: bigint, currency: string): void {
    BatchSummary.add(this.totalsNow, currency, minor);
    if (payee === undefined) return;
    const known = this.payees.get(payee);
    if (known !== undefined) BatchSummary.add(known.sheet, currency, minor);
  }

  /** The comparison, once every row was added. */
  finish(): SincePrevious {
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
    const missingPayees: MissingPayee[] = [];
    const changed: (ChangedAmount & { size: bigint })[] = [];
    for (const payee of this.payees.values()) {
      if (payee.sheet.size === 0) {
        for (const [currency, minor] of payee.paid) {
          missingPayees.push({
            name: payee.name,
            lastReference: payee.lastReference,
            amount: formatMinor(minor),
            currency,
          });
        }
        continue;
      }
      for (const currency of new Set([...payee.paid.keys(), ...payee.sheet.keys()])) {
        const then = payee.paid.get(currency) ?? 0n;
        const now = payee.sheet.get(currency) ?? 0n;
        if (then === now) continue;
        const difference = now - then;
        changed.push({
          name: payee.name,
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
  store: Pick<ScopeStore, 'paidBatches'> | undefined,
): Promise<SincePreviousComparison[]> {
  if (store === undefined) return [];
  return (await store.paidBatches(2)).map(comparisonOf);
}

function comparisonOf(batch: PaidBatch): SincePreviousComparison {
  return new SincePreviousComparison(
    { sheet: batch.sheet, at: batch.at, rows: batch.rows },
    batch.payouts.map((p) => ({
      payee: p.payee,
      name: p.name,
      reference: p.reference,
      minor: minorOf(p.amount),
      currency: p.currency,
    })),
    batch.digest,
  );
}

/** A comparison done, with the digest of the batch it compared with. */
export interface SinceFinding {
  digest: string;
  since: SincePrevious;
}

/** Finishes the comparisons (where the sheet was read: a worker sends these). */
export function finishAll(comparisons: readonly SincePreviousComparison[]): SinceFinding[] {
  return comparisons.map((c) => ({ digest: c.digest, since: c.finish() }));
}

/** The previous batch's comparison for a sheet of `digest`: the latest batch that is not this one; null without one. */
export function sincePreviousOf(findings: readonly SinceFinding[], digest: string): SincePrevious | null {
  return findings.find((f) => f.digest !== digest)?.since ?? null;
}
