/**
 * Who a payout pays, without its bank details (docs/approval.md "How a payee is recognised"): the
 * approver's signals compare the bank details of one payee over time, so the payee cannot be
 * named by them. Defined once, here.
 */
import { boundCell } from '../sheet/quote.js';
import type { PayoutRow } from './types.js';

/** A payee: `key` compares (hashed before the register keeps it), `name` is for people. */
export interface Payee {
  key: string;
  name: string;
}

/**
 * The payee of a mapped row: its `beneficiaryId` when given, else the normalised beneficiary
 * or recipient name with the e-mail, else with the country; an existing recipient named by id
 * alone is that id. Undefined when the row names nobody (it is invalid then).
 */
export function payeeOf(payout: PayoutRow): Payee | undefined {
  const { beneficiary, recipient } = payout;
  if (beneficiary.kind === 'existing') return { key: `beneficiary:${beneficiary.id}`, name: beneficiary.id };
  if (beneficiary.kind === 'new') {
    const { name, email, country } = beneficiary.request;
    return named(name, email, country);
  }
  if (recipient.kind === 'existing') return { key: `recipient:${recipient.id}`, name: recipient.id };
  const request = recipient.request;
  const details = request.details ?? {};
  const name = request.individualName || request.businessName;
  const address = details.recipientAddress;
  const country =
    request.countryOfIncorporation ||
    (typeof address === 'object' ? address.country : undefined) ||
    text(details.bankCountry);
  return name ? named(name, text(details.email), country) : undefined;
}

function named(name: string, email: string | undefined, country: string | undefined): Payee | undefined {
  const key = normaliseName(name);
  if (key === '') return undefined;
  const shown = boundCell(name.trim(), 60);
  if (email && email.trim() !== '')
    return { key: `name:${key}\nemail:${email.trim().toLowerCase()}`, name: shown };
  return { key: `name:${key}\ncountry:${(country ?? '').trim().toUpperCase()}`, name: shown };
}

const ASCII = /^[ -~]*$/;
const NOT_ALPHANUMERIC = /[^a-z0-9]+/g;

/** Whether a name is ASCII letters and digits in words one space apart, none at either end. */
function wordsApart(name: string): boolean {
  let space = true;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code === 0x20) {
      if (space) return false;
      space = true;
    } else if (
      (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x30 && code <= 0x39)
    ) {
      space = false;
    } else return false;
  }
  return !space;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A name as people write it more than one way: accents, case, punctuation and spacing do not
 * make another payee ("José  Pérez-Ruiz" is "jose perez ruiz").
 */
export function normaliseName(name: string): string {
  // Most names are letters and digits in words one space apart: lower case is all they need.
  if (wordsApart(name)) return name.toLowerCase();
  // Then plain printable ASCII: no decomposition, no Unicode classes (a million rows call this).
  if (ASCII.test(name)) return name.toLowerCase().replace(NOT_ALPHANUMERIC, ' ').trim();
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
