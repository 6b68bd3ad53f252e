/**
 * The register as `validate` reads it (issue 7, item 5): read-only and offline, each valid row
 * is given the verdict `run` would give it (skipped when paid, invalid for a reference used
 * for other details, unknown when in doubt), so the dry run shows exactly what would be sent.
 */
import { detailsOf } from '../register/details.js';
import { holderAlive, newSelf, type Self } from '../register/owner.js';
import type { ScopeStore } from '../register/types.js';
import { registerVerdict } from '../register/verdict.js';
import { type EarlierResult, earlierResult } from './earlier.js';
import type { PreparedRow } from './prepare.js';

export class RegisterCheck {
  /** Validate is no run: any run that holds a claim is someone else's. */
  private readonly self: Self = newSelf();

  constructor(
    private readonly store: ScopeStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The register's result for each row (undefined: nothing known, or the row is invalid). */
  async results(rows: readonly PreparedRow[]): Promise<(EarlierResult | undefined)[]> {
    const valid = rows.filter((row) => row.issues.length === 0);
    const out: (EarlierResult | undefined)[] = new Array(rows.length);
    if (valid.length === 0) return out;
    const records = await this.store.lookup(valid.map((row) => row.payout.reference));
    if (records.size === 0) return out;
    const now = this.now();
    rows.forEach((row, i) => {
      if (row.issues.length > 0) return;
      const record = records.get(row.payout.reference);
      if (record === undefined) return;
      const details = detailsOf(row.payout, (canonical) => this.store.fingerprint(canonical));
      const verdict = registerVerdict(record, details, {
        holderAlive: holderAlive(record.run, this.self, now),
        retryUnknown: false,
      });
      out[i] = earlierResult(verdict, details);
    });
    return out;
  }
}
