/**
 * The register as `validate` reads it: read-only and offline, each valid row
 * is given the verdict `run` would give it (skipped when paid, invalid for a reference used
 * for other details, unknown when in doubt), so the dry run shows exactly what would be sent.
 */
import { detailsOf } from '../register/details.js';
import { holderAlive, newSelf, type Self } from '../register/lease.js';
import type { PayoutRecord, ScopeStore } from '../register/types.js';
import { registerVerdict } from '../register/verdict.js';
import { normaliseText } from '../rows/text.js';
import type { RawRow } from '../sheet/types.js';
import { type EarlierResult, earlierResult } from './earlier.js';
import type { PreparedRow } from './prepare.js';

/** What the check reads of a register scope. */
export type RegisterReader = Pick<ScopeStore, 'fingerprint' | 'lookup'>;

export class RegisterCheck {
  /** Validate is no run: any run that holds a claim is someone else's. */
  private readonly self: Self = newSelf();

  constructor(private readonly store: RegisterReader) {}

  /**
   * What the register holds for a batch of rows not yet checked, looked up by the text of
   * their reference cells (column `referenceAt`): one query for the batch, and the rows can
   * then be checked one at a time, none kept alive for the others.
   */
  async lookAhead(rows: readonly RawRow[], referenceAt: number): Promise<RegisterLookup> {
    const references: string[] = [];
    for (const row of rows) {
      const cell = row.cells[referenceAt];
      if (cell !== undefined && cell.kind !== 'empty') references.push(normaliseText(cell.text));
    }
    return this.lookup(references);
  }

  /** The register's result for each row (undefined: nothing known, or the row is invalid). */
  async results(rows: readonly PreparedRow[]): Promise<(EarlierResult | undefined)[]> {
    return (await this.heldRows(rows)).earlier;
  }

  /**
   * The register's result for each row, and the warnings it was sent with where the register
   * kept them (RegisterLookup.storedOf), in one look-up.
   */
  async heldRows(rows: readonly PreparedRow[]): Promise<HeldRows> {
    const found = await this.lookup(
      rows.filter((row) => row.issues.length === 0).map((row) => row.payout.reference),
    );
    const earlier = await Promise.all(rows.map((row) => found.resultOf(row)));
    return {
      earlier,
      stored: rows.map((row, i) => (earlier[i] === undefined ? undefined : found.storedOf(row))),
    };
  }

  private async lookup(references: readonly string[]): Promise<RegisterLookup> {
    const records = references.length === 0 ? new Map() : await this.store.lookup(references);
    return new RegisterLookup(this, new Set(references), records);
  }

  /** The result of a valid row whose record (if any) is at hand. */
  judge(row: PreparedRow, record: PayoutRecord | undefined): EarlierResult | undefined {
    if (record === undefined) return undefined;
    const details = detailsOf(row.payout, (canonical) => this.store.fingerprint(canonical));
    const verdict = registerVerdict(record, details, {
      holderAlive: holderAlive(record.run, this.self),
      retryUnknown: false,
    });
    return earlierResult(verdict, details);
  }
}

/** A batch's rows as the register holds them (RegisterCheck.heldRows), by the rows' places. */
export interface HeldRows {
  earlier: (EarlierResult | undefined)[];
  stored: (string | undefined)[];
}

/** The records of one batch's references, and the results they give its rows. */
export class RegisterLookup {
  constructor(
    private readonly check: RegisterCheck,
    private readonly asked: ReadonlySet<string>,
    private readonly records: ReadonlyMap<string, PayoutRecord>,
  ) {}

  /**
   * The register's result for a checked row; undefined when it knows nothing of the row or the
   * row is invalid. A row whose reference was not among those looked up (its cell read another
   * way by the mapper) is looked up on its own: a promise then, else the result itself.
   */
  resultOf(row: PreparedRow): EarlierResult | undefined | Promise<EarlierResult | undefined> {
    if (row.issues.length > 0 || row.totals !== undefined) return undefined;
    const reference = row.payout.reference;
    if (this.asked.has(reference)) return this.check.judge(row, this.records.get(reference));
    return this.check.results([row]).then((results) => results[0]);
  }

  /**
   * The warnings the run that sent this row's reference judged (PayoutRecord.warnings), when it
   * kept them: a row the register holds is then counted as it was approved.
   */
  storedOf(row: PreparedRow): string | undefined {
    return this.records.get(row.payout.reference)?.warnings;
  }
}
