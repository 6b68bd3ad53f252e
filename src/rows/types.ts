import type { BeneficiaryRequest, RecipientRequest } from '../api/contract.js';
import type { Rail } from '../columns/rails.js';

export type { Address, RecipientDetails, RecipientRequest } from '../api/contract.js';

/** One validation finding: the request path it is about and the message, word for word. */
export interface ValidationIssue {
  /** Dotted path in the RecipientRequest, e.g. `details.recipientAddress.city`; '' for the whole. */
  path: string;
  message: string;
}

/** One finding on a sheet row: the canonical column it is about (if any) and the message. */
export interface RowIssue {
  column?: string;
  message: string;
}

/**
 * Who the payout's recipient belongs to (docs/sheets.md): an existing beneficiary, a
 * new one (rows with the same `key` create it once), none because the recipient is
 * integrator-level, or none given at all (the row is then invalid).
 */
export type BeneficiaryRef =
  | { kind: 'existing'; id: string }
  | { kind: 'new'; key: string; request: BeneficiaryRequest }
  | { kind: 'integrator' }
  | { kind: 'missing' };

/**
 * The payout's recipient: an existing one, or a new one to create. A new recipient's
 * `request` has no beneficiaryId when the beneficiary is new: the run fills it in once the
 * beneficiary exists. Rows with the same `key` share one creation.
 */
export type RecipientRef =
  | { kind: 'existing'; id: string }
  | { kind: 'new'; key: string; request: RecipientRequest };

/**
 * A sheet row mapped to a payout. The requests are only fit to send when `issues` is empty;
 * otherwise they carry the row's values as given so that the messages can name them.
 */
export interface PayoutRow {
  /** The row number as the user sees it in the sheet. */
  rowNumber: number;
  /** The payout's own id from the sheet; '' when missing (then `issues` says so). */
  reference: string;
  /**
   * Minor units and the normalised decimal text ("1234.50"), `grouped` when the cell had digit
   * grouping ("1,234.50"); absent when the cell is invalid.
   */
  amount?: { minor: bigint; text: string; grouped?: true };
  /** The currency cell, normalised and upper-case (`usd` is USD); absent when empty. */
  currency?: string;
  /** The rail named by the type cell; absent when empty or not a rail. */
  rail?: Rail;
  beneficiary: BeneficiaryRef;
  recipient: RecipientRef;
  /** Every finding on the row, spreadsheet damage first, the service's messages word for word. */
  issues: RowIssue[];
}
