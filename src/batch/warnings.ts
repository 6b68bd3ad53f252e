/**
 * The approver's warnings (README "The approver's view", docs/approval.md): signals computed
 * offline from the sheet and the register's payee history, one list per row. A warning never
 * blocks a row by itself (`--hold-changed-payees` holds rows by one of them); the batch digest
 * covers them, so `--approve` approves what the approver saw.
 */
import { detailsOf } from '../register/details.js';
import { historyFor, minorOf, paymentsOf } from '../register/rules.js';
import type { PayeeHistory, PayeeLayer, PayeePayday, ScopeStore } from '../register/types.js';
import { formatMinor } from '../rows/money.js';
import { SIGNALS, type Signal } from '../rows/signals.js';
import { boundCell } from '../sheet/quote.js';
import type { PreparedRow } from './prepare.js';

export { SIGNALS, type Signal };

/** One warning on a row: which signal, and what it says to a person. */
export interface RowWarning {
  signal: Signal;
  message: string;
}

/**
 * Without a usual interval (fewer than two earlier paydays), the same amount to the same payee
 * sooner than this many days after an earlier payout is a possible duplicate.
 */
export const DUPLICATE_FALLBACK_DAYS = 7;
/** An amount more than this many times the payee's largest earlier payout is unusual. */
export const UNUSUAL_FACTOR = 3n;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The list of a row without warnings: shared, never changed. */
export const NO_WARNINGS: readonly RowWarning[] = Object.freeze([]);

/**
 * The warning of a payee the register has never paid, as one shared value: a first sheet warns
 * on each of its rows, which then share it (nothing allocated per row). Its words name the
 * row's payee where they are written (messagesOf).
 */
export const NEW_PAYEE: RowWarning = Object.freeze({
  signal: 'newPayee',
  message: 'new payee: the register has no earlier payout to this payee',
});

/** The list of a row whose one warning is NEW_PAYEE: shared, never changed. */
export const NEW_PAYEE_ONLY: readonly RowWarning[] = Object.freeze([NEW_PAYEE]);

/** The new-payee warning in words, naming the payee. */
export function newPayeeMessage(name: string): string {
  return `new payee: the register has no earlier payout to ${name}`;
}

/** A row's warnings in words: the shared new-payee warning names the row's payee. */
export function messagesOf(warnings: readonly RowWarning[], payeeName: string | undefined): string[] {
  return warnings.map((w) =>
    w === NEW_PAYEE && payeeName !== undefined ? newPayeeMessage(payeeName) : w.message,
  );
}

/** What the warnings read of a register scope. */
export type HistoryReader = Pick<ScopeStore, 'fingerprint' | 'payeeHistory' | 'hasPayeeHistory'>;

/**
 * The warnings of valid rows, batch by batch: `load` reads the history of a batch's payees in
 * one query, then `of` gives each row its warnings. Without a register every payee is new.
 */
export class PayeeWarnings {
  private histories: ReadonlyMap<string, PayeeHistory> = new Map();
  /** The paydays of the batch's payees, read once per payee rather than once per row. */
  private rhythms = new Map<string, Rhythm>();
  /** Keyed hashes of the payee keys of the batch loaded last. */
  private hashed = new Map<string, string>();
  /**
   * The batches (sheet tags) that last changed the histories read, as the rows were judged:
   * those whose payouts were left out as this sheet's own, and those held against its rows.
   * Right only if the first is this sheet's tag at most and the second lacks it (judgedRight).
   */
  readonly judgedOwn = new Set<string>();
  readonly judgedOther = new Set<string>();
  /** Whether this sheet's own batch is still to be guessed (its tag is known only once read). */
  private guessing: boolean;

  constructor(
    private readonly register: HistoryReader | undefined,
    /** The moment earlier payouts are counted back from (ms since the epoch), fixed for a whole command. */
    private readonly asOf: number,
    /**
     * This sheet's tag (digest.ts): its own payouts are not held against its rows. Unknown (a
     * first reading), it is guessed from the rows the register holds (`load`).
     */
    private batch?: string,
  ) {
    this.guessing = batch === undefined;
  }

  /** Whether the register has any payee history: asked once; none, and nothing is looked up. */
  private anyHistory: Promise<boolean> | undefined;

  /**
   * Reads the history of these rows' payees, but for rows the register refuses (`earlier`, the
   * register's result of each row, when there is one), which carry no warnings, and rows whose
   * warnings the register kept when it sent them (`stored`), which `of` is given instead; while
   * this sheet's own batch is still to be guessed, those are read too, since the guess needs a
   * history that names a batch.
   */
  async load(
    rows: readonly PreparedRow[],
    earlier?: readonly ({ status: string } | undefined)[],
    stored?: readonly (string | undefined)[],
  ): Promise<void> {
    if (this.register === undefined) return;
    // A register from before the approver's warnings, or a first month: every payee is new,
    // and a million rows need neither a keyed hash of their payee nor a look-up.
    this.anyHistory ??= this.register.hasPayeeHistory();
    if (!(await this.anyHistory)) return;
    const hashed = new Map<string, string>();
    for (let i = 0; i < rows.length; i++) {
      const key = rows[i]!.payee?.key;
      if (key === undefined || hashed.has(key) || earlier?.[i]?.status === 'invalid') continue;
      if (stored?.[i] !== undefined && !this.guessing) continue;
      hashed.set(key, this.register.fingerprint(`payee:${key}`));
    }
    this.hashed = hashed;
    this.rhythms = new Map();
    this.histories = hashed.size === 0 ? new Map() : await this.register.payeeHistory([...hashed.values()]);
    if (this.guessing && earlier !== undefined) this.guess(rows, earlier);
    for (const history of this.histories.values())
      (history.batch === this.batch ? this.judgedOwn : this.judgedOther).add(history.batch);
  }

  /**
   * Takes for this sheet's own batch the one that last changed the history of the first row the
   * register holds (paid already, or in doubt), unless rows were judged against that batch
   * already: a sheet a run paid in part is then read once, not twice. validate reads the sheet
   * again, knowing its tag, when the guess was wrong (judgedRight).
   */
  private guess(rows: readonly PreparedRow[], earlier: readonly ({ status: string } | undefined)[]): void {
    for (let i = 0; i < rows.length; i++) {
      const result = earlier[i];
      if (result === undefined || result.status === 'invalid') continue;
      const key = rows[i]!.payee?.key;
      const history = key === undefined ? undefined : this.histories.get(this.hashed.get(key) ?? '');
      if (history === undefined || this.judgedOther.has(history.batch)) continue;
      this.batch = history.batch;
      this.guessing = false;
      return;
    }
  }

  /** The keyed hash of a loaded row's payee, as the register keeps its history. */
  payeeHash(row: PreparedRow): string | undefined {
    const key = row.payee?.key;
    if (key === undefined || this.register === undefined) return undefined;
    return this.hashed.get(key) ?? this.register.fingerprint(`payee:${key}`);
  }

  /**
   * The warnings of a row of the batch loaded last (none for an invalid row or a totals row):
   * `stored`, those its payout was sent with (encodeWarnings), when the register kept
   * them, so a resumed or re-read batch hashes as the run that sent it did.
   */
  of(row: PreparedRow, stored?: string): readonly RowWarning[] {
    const { payee, payout } = row;
    if (payee === undefined || row.issues.length > 0 || row.totals !== undefined) return NO_WARNINGS;
    if (stored !== undefined) return decodeWarnings(stored);
    // No history loaded (none in the register): no payee needs its keyed hash.
    const hash = this.histories.size === 0 ? undefined : this.payeeHash(row);
    const full = hash === undefined ? undefined : this.histories.get(hash);
    const held = historyFor(full, this.batch);
    // A payee whose every payout failed was never paid: new, with no known account.
    const history = held === undefined || held.accounts.length === 0 ? undefined : held;
    const twins = row.sameAs !== undefined && row.sameAs.length > 0;
    // Most rows of a first sheet: one shared list, nothing allocated.
    if (history === undefined && !twins) return NEW_PAYEE_ONLY;
    const warnings: RowWarning[] = [];
    const amount = payout.amount;
    const currency = payout.currency ?? '';
    const name = payee.name;
    if (history === undefined) {
      warnings.push({ signal: 'newPayee', message: newPayeeMessage(name) });
    } else if (this.register !== undefined && hash !== undefined) {
      let rhythm = this.rhythms.get(hash);
      if (rhythm === undefined) {
        rhythm = rhythmOf(history);
        this.rhythms.set(hash, rhythm);
      }
      const details = detailsOf(payout, (canonical) => this.register!.fingerprint(canonical));
      // Another account than any the payee was paid to before; a payee with two accounts has both.
      // The one named is the last paid on this row's rail, where the payee has one.
      const last = history.accounts.find((paid) => paid.rail === payout.rail) ?? history.accounts[0];
      if (last !== undefined && !history.accounts.some((paid) => paid.account === details.payee)) {
        warnings.push({
          signal: 'changedBankDetails',
          message: `bank details changed: ${name} was last paid to ${last.accountHint} on ${day(last.paidAt)} (reference ${boundCell(last.reference)}), this row pays ${details.payeeHint}`,
        });
      }
      // A row this batch paid already is judged as of when it was paid, against the payouts
      // before it: a resumed run weeks later warns as the first did, and its digest stays the one
      // approved.
      const paidAt =
        full !== undefined && full.batch === this.batch ? ownPaidAt(full, payout.reference) : undefined;
      const twin =
        amount === undefined
          ? undefined
          : twinIn(
              rhythm,
              payout.reference,
              currency,
              amount.minor,
              paidAt ?? this.asOf,
              paidAt !== undefined,
            );
      if (twin !== undefined) {
        warnings.push({
          signal: 'possibleDuplicate',
          message: `possible duplicate: ${name} was paid ${twin.amount} ${currency} on ${day(twin.paidAt)} under reference ${boundCell(twin.reference)}`,
        });
      }
      const largest = history.largest[currency];
      if (
        amount !== undefined &&
        largest !== undefined &&
        amount.minor > UNUSUAL_FACTOR * rhythm.largest(currency)
      ) {
        warnings.push({
          signal: 'unusualAmount',
          message: `unusual amount: ${amount.text} ${currency} is more than ${UNUSUAL_FACTOR} times the largest earlier payout to ${name} (${largest} ${currency})`,
        });
      }
    }
    if (twins && amount !== undefined) {
      const others = row.sameAs ?? [];
      warnings.push({
        signal: 'possibleDuplicate',
        message: `possible duplicate: row${others.length === 1 ? '' : 's'} ${others.slice(0, 5).join(', ')}${others.length > 5 ? ' and more' : ''} of this sheet also pay${others.length === 1 ? 's' : ''} ${name} ${formatMinor(amount.minor)} ${currency}`,
      });
    }
    return warnings;
  }
}

/**
 * How soon after an earlier payout the same amount to the same payee is a possible duplicate:
 * sooner than half the payee's usual interval (the median between its earlier paydays, when it
 * has at least two), else sooner than DUPLICATE_FALLBACK_DAYS. A monthly salary a month later is
 * no duplicate; the same salary two days later is. Payouts on one day (a payee paid to two
 * accounts at once) are one payday: they say nothing of the payee's rhythm.
 */
export function duplicateWindowMs(paidAt: readonly number[]): number {
  const days = [...new Set(paidAt.map((time) => Math.floor(time / DAY_MS)))].sort((a, b) => a - b);
  if (days.length < 2) return DUPLICATE_FALLBACK_DAYS * DAY_MS;
  const gaps = days
    .slice(1)
    .map((day, i) => day - days[i]!)
    .sort((a, b) => a - b);
  const middle = gaps.length >> 1;
  const median = gaps.length % 2 === 1 ? gaps[middle]! : (gaps[middle - 1]! + gaps[middle]!) / 2;
  return (median / 2) * DAY_MS;
}

/** A payee's paydays as the checks read them: amounts in minor units, times in ms, its window. */
interface Rhythm {
  /** How soon a repeat is a possible duplicate (duplicateWindowMs). */
  window: number;
  paydays: readonly { payday: PayeePayday; minor: bigint; at: number }[];
  /** The largest earlier payout in a currency, in minor units. */
  largest(currency: string): bigint;
}

function rhythmOf(layer: PayeeLayer): Rhythm {
  const paydays = paymentsOf(layer).map((payday) => ({
    payday,
    minor: minorOf(payday.amount),
    at: Date.parse(payday.paidAt),
  }));
  const largest = new Map<string, bigint>();
  return {
    window: duplicateWindowMs(paydays.map((paid) => paid.at)),
    paydays,
    largest(currency) {
      let minor = largest.get(currency);
      if (minor === undefined) {
        minor = minorOf(layer.largest[currency] ?? '0');
        largest.set(currency, minor);
      }
      return minor;
    },
  };
}

/**
 * The latest earlier payout to this payee, to any of its accounts, of the same amount and
 * currency under another reference, sooner than the payee's usual interval allows; or none.
 */
export function earlierTwin(
  history: PayeeLayer,
  reference: string,
  currency: string,
  minor: bigint,
  asOf: number,
): PayeePayday | undefined {
  return twinIn(rhythmOf(history), reference, currency, minor, asOf);
}

function twinIn(
  rhythm: Rhythm,
  reference: string,
  currency: string,
  minor: bigint,
  asOf: number,
  /** Only paydays before `asOf` count: it is when the row itself was paid. */
  earlierOnly = false,
): PayeePayday | undefined {
  return rhythm.paydays.find(
    (paid) =>
      paid.payday.reference !== reference &&
      paid.payday.currency === currency &&
      paid.minor === minor &&
      asOf - paid.at < rhythm.window &&
      (!earlierOnly || paid.at < asOf),
  )?.payday;
}

/** When this batch paid the reference, as the payee's history records it (ms); undefined if not. */
function ownPaidAt(history: PayeeHistory, reference: string): number | undefined {
  const paid =
    paymentsOf(history).find((payday) => payday.reference === reference) ??
    history.accounts.find((payment) => payment.reference === reference);
  return paid === undefined ? undefined : Date.parse(paid.paidAt);
}

/**
 * Whether rows were judged with exactly this sheet's own payouts left out of its payees'
 * histories, `tag` being the sheet's: no other batch left out, and this one never held against
 * them.
 */
export function judgedRight(own: readonly string[], other: readonly string[], tag: string): boolean {
  return own.every((batch) => batch === tag) && !other.includes(tag);
}

/**
 * Why `--hold-changed-payees` holds a row with these warnings, or undefined when it does not:
 * the reason on the row, in words.
 */
export function heldReason(warnings: readonly RowWarning[]): string | undefined {
  const changed = warnings.find((w) => w.signal === 'changedBankDetails');
  if (changed === undefined) return undefined;
  return `held by --hold-changed-payees, not sent: ${changed.message} - confirm the new bank details with the payee, then run again without --hold-changed-payees to pay it`;
}

/** "2026-10-25" of an ISO time. */
function day(iso: string): string {
  return iso.slice(0, 10);
}

/** A row with a warning, for the approver's report and the terminal. */
export interface WarnedRow {
  rowNumber: number;
  reference: string;
  message: string;
}

/** Rows kept per signal for people (the report, the terminal); the count and the JSON have all. */
export const WARNED_ROWS_KEPT = 50;

/** References joined into one flat text this many at a time: no row's cells are kept alive. */
const REFERENCES_PER_CHUNK = 4096;

/**
 * The warnings of a sheet, signal by signal: how many rows, the first rows for people, and
 * (for `--json`) every reference, kept as flat text rather than a million small strings.
 */
export class WarningTally {
  readonly counts: Record<Signal, number> = {
    newPayee: 0,
    changedBankDetails: 0,
    possibleDuplicate: 0,
    unusualAmount: 0,
  };
  readonly rows: Record<Signal, WarnedRow[]> = {
    newPayee: [],
    changedBankDetails: [],
    possibleDuplicate: [],
    unusualAmount: [],
  };
  private readonly chunks: Record<Signal, string[]> = {
    newPayee: [],
    changedBankDetails: [],
    possibleDuplicate: [],
    unusualAmount: [],
  };
  private readonly pending: Record<Signal, string[]> = {
    newPayee: [],
    changedBankDetails: [],
    possibleDuplicate: [],
    unusualAmount: [],
  };

  constructor(private readonly keepReferences = true) {}

  /** Counts a row's warnings (a signal once per row); `payeeName` for the words of the shared ones. */
  add(rowNumber: number, reference: string, warnings: readonly RowWarning[], payeeName?: string): void {
    let seen: Signal | undefined;
    for (const warning of warnings) {
      const { signal } = warning;
      if (signal === seen) continue;
      seen = signal;
      this.counts[signal] += 1;
      if (this.rows[signal].length < WARNED_ROWS_KEPT) {
        const [message = warning.message] = messagesOf([warning], payeeName);
        this.rows[signal].push({ rowNumber, reference, message });
      }
      if (!this.keepReferences) continue;
      const pending = this.pending[signal];
      pending.push(reference);
      if (pending.length === REFERENCES_PER_CHUNK) {
        this.chunks[signal].push(pending.join('\u0000'));
        pending.length = 0;
      }
    }
  }

  get total(): number {
    return SIGNALS.reduce((n, s) => n + this.counts[s], 0);
  }

  /**
   * Every reference per signal, in sheet order (`warnings` of the `--json` summary: README
   * "Options of `validate` and `run`").
   */
  references(): Record<Signal, string[]> {
    const all = {} as Record<Signal, string[]>;
    for (const signal of SIGNALS) all[signal] = [...this.referenceChunks(signal)].flat();
    return all;
  }

  /**
   * The references of one signal a few thousand at a time, in sheet order: what a summary
   * written as a stream reads, so that a million references are never one array.
   */
  *referenceChunks(signal: Signal): Generator<string[]> {
    for (const text of this.chunks[signal]) yield text.split('\u0000');
    if (this.pending[signal].length > 0) yield [...this.pending[signal]];
  }

  /** The tally again after a structured clone (a worker's message), which keeps fields only. */
  static from(data: WarningTally): WarningTally {
    return Object.assign(new WarningTally(), data);
  }
}

/** The text of a row without warnings. */
const NONE_TEXT = '0';
/** The text of a row whose one warning is NEW_PAYEE_ONLY (a first month: most rows). */
const NEW_PAYEE_TEXT = '1';

/**
 * A row's warnings as one short text, kept in a run's judged warnings (judged.ts) and in the
 * register with each payout sent
 * (`warnings`): "0" none, "1" the shared new-payee warning, else JSON. Read back, the shared
 * lists are the same objects again, which the digest tells apart from the warnings spelt out.
 */
export function encodeWarnings(warnings: readonly RowWarning[]): string {
  if (warnings.length === 0) return NONE_TEXT;
  if (warnings === NEW_PAYEE_ONLY) return NEW_PAYEE_TEXT;
  return JSON.stringify(warnings.map((w) => [w.signal, w.message]));
}

/** The warnings `encodeWarnings` wrote. */
export function decodeWarnings(text: string): readonly RowWarning[] {
  if (text === NONE_TEXT) return NO_WARNINGS;
  if (text === NEW_PAYEE_TEXT) return NEW_PAYEE_ONLY;
  return (JSON.parse(text) as [Signal, string][]).map(([signal, message]) => ({ signal, message }));
}
