/**
 * "Same details" (issue 7, item 2): what makes a second row with a paid reference the same
 * payout (then it is `skipped`) or another one under a used reference (then it is `invalid`).
 * Defined once, here, and used by `run`, `validate` and `status` alike.
 */
import type { PayoutRow } from '../rows/types.js';

/** What the register keeps of a payout's details: enough to compare, no account number in clear. */
export interface PayoutDetails {
  /** Normalised decimal text, "1234.50". */
  amount: string;
  /** Upper-case ISO code. */
  currency: string;
  rail: string;
  /** Keyed hash of the payee account (scope secret): equal accounts give equal hashes. */
  payee: string;
  /** The payee for people, masked: "account ****6789", "recipient rcp_1". */
  payeeHint: string;
}

/** The details that count: amount, currency, rail and payee account. Names and addresses do not. */
export function sameDetails(a: PayoutDetails, b: PayoutDetails): boolean {
  return a.amount === b.amount && a.currency === b.currency && a.rail === b.rail && a.payee === b.payee;
}

/** "USD 100.00 by ACH to account ****6789", for messages that show two versions side by side. */
export function describeDetails(d: PayoutDetails): string {
  return `${d.currency} ${d.amount} by ${d.rail} to ${d.payeeHint}`;
}

/**
 * The fields of SPEC.md 2.4 that say where the money goes (not who receives it): a payee with
 * a corrected name or address is the same payee; another account is not.
 */
const ACCOUNT_FIELDS = [
  'routingNumber',
  'accountNumber',
  'swiftCode',
  'iban',
  'clabe',
  'bankCode',
  'bankAccount',
  'pixKey',
] as const;

/** Which field's last characters show the account to people, in order of preference. */
const HINT_FIELDS = ['iban', 'accountNumber', 'clabe', 'bankAccount', 'pixKey'] as const;

/**
 * The payee account of a valid row as canonical text (to be hashed with the scope's key, never
 * stored) and a masked hint. An existing recipient is its id.
 */
export function payeeAccountOf(payout: PayoutRow): { canonical: string; hint: string } {
  const recipient = payout.recipient;
  if (recipient.kind === 'existing') {
    return { canonical: `recipient:${recipient.id}`, hint: `recipient ${recipient.id}` };
  }
  const details = recipient.request.details ?? {};
  const parts: string[] = [`rail:${payout.rail ?? ''}`];
  for (const field of ACCOUNT_FIELDS) {
    const value = details[field];
    if (typeof value === 'string' && value !== '') parts.push(`${field}:${compact(value)}`);
  }
  const shown = HINT_FIELDS.map((f) => details[f]).find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  return { canonical: parts.join('\n'), hint: shown ? `account ${mask(compact(shown))}` : 'the payee' };
}

/** Spaces and case do not make another account ("GB82 WEST ..." is "GB82WEST..."). */
function compact(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

/** The last four characters, the rest hidden: enough for a person to recognise the account. */
export function mask(value: string): string {
  return value.length <= 4 ? '****' : `****${value.slice(-4)}`;
}

/** A row's details for the register, with the payee account hashed by `fingerprint`. */
export function detailsOf(payout: PayoutRow, fingerprint: (canonical: string) => string): PayoutDetails {
  const account = payeeAccountOf(payout);
  return {
    amount: payout.amount?.text ?? '',
    currency: (payout.currency ?? '').toUpperCase(),
    rail: payout.rail ?? '',
    payee: fingerprint(account.canonical),
    payeeHint: account.hint,
  };
}
