/**
 * "Same details": what makes a second row with a paid reference the same
 * payout (then it is `skipped`) or another one under a used reference (then it is `invalid`).
 * Defined once, here, and used by `run`, `validate` and `status` alike.
 */
import { mask } from '../redact.js';
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
 * The fields of a recipient (docs/service.md "A recipient") that say where the money goes (not
 * who receives it): a payee with a corrected name or address is the same payee; another account
 * is not.
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
  // Built by hand, not with arrays: `validate` against a register runs this on every row.
  let canonical = `rail:${payout.rail ?? ''}`;
  for (const field of ACCOUNT_FIELDS) {
    const value = details[field];
    if (typeof value === 'string' && value !== '') canonical += `\n${field}:${compact(value)}`;
  }
  let shown: string | undefined;
  for (const field of HINT_FIELDS) {
    const value = details[field];
    if (typeof value === 'string' && value !== '') {
      shown = value;
      break;
    }
  }
  return { canonical, hint: shown === undefined ? 'the payee' : `account ${mask(compact(shown))}` };
}

/** Spaces and case do not make another account ("GB82 WEST ..." is "GB82WEST..."). */
function compact(value: string): string {
  return (SPACE.test(value) ? value.replace(SPACES, '') : value).toUpperCase();
}

const SPACE = /\s/;
const SPACES = /\s+/g;

/**
 * A row's details for the register, with the payee account hashed by `fingerprint`. The hash
 * is taken when `payee` is first read: a row whose amount, currency or rail already differ from
 * the register's never needs it, and `validate` of a big sheet meets many such rows.
 */
export function detailsOf(payout: PayoutRow, fingerprint: (canonical: string) => string): PayoutDetails {
  const account = payeeAccountOf(payout);
  return new RowDetails(
    payout.amount?.text ?? '',
    (payout.currency ?? '').toUpperCase(),
    payout.rail ?? '',
    account,
    fingerprint,
  );
}

/**
 * PayoutDetails whose payee is hashed on first read. A class, not an object literal with a
 * getter: V8 builds such literals on a slow path, a microsecond each. `payee` lives on the
 * prototype, so spread and JSON leave it out: read the fields by name.
 */
class RowDetails implements PayoutDetails {
  // Private fields (#): the canonical account text stays out of JSON, logs and spreads.
  #hashed: string | undefined;
  readonly #canonical: string;
  readonly #fingerprint: (canonical: string) => string;
  readonly payeeHint: string;

  constructor(
    readonly amount: string,
    readonly currency: string,
    readonly rail: string,
    account: { canonical: string; hint: string },
    fingerprint: (canonical: string) => string,
  ) {
    this.payeeHint = account.hint;
    this.#canonical = account.canonical;
    this.#fingerprint = fingerprint;
  }

  get payee(): string {
    this.#hashed ??= this.#fingerprint(this.#canonical);
    return this.#hashed;
  }
}
