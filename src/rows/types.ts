import type { AddressField } from './columns.js';

/** SPEC.md 2.4 address object (recipientAddress, bankAddress). */
export type Address = Partial<Record<AddressField, string>>;

/** SPEC.md 2.4 rail details: the fields a rail uses; values as the service receives them. */
export type RecipientDetails = Record<string, string | boolean | Address | undefined>;

/**
 * SPEC.md 2.3 RecipientRequest as sent to the service. `integratorLevel` marks an
 * integrator-level recipient (no beneficiary); how the real service learns that is "not
 * shown" and assumed in docs/api-assumptions.md.
 */
export interface RecipientRequest {
  individualName?: string;
  businessName?: string;
  countryOfIncorporation?: string;
  beneficiaryId?: string;
  integratorLevel?: boolean;
  currency?: string;
  type?: string;
  details?: RecipientDetails | null;
  nickname?: string;
}

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
