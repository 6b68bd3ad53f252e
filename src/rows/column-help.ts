import {
  ADDRESS_FIELDS,
  CANONICAL_COLUMNS,
  type CanonicalColumn,
  RAIL_ADDRESSES,
  RAIL_DETAIL_FIELDS,
} from '../columns/columns.js';
import { RAIL_CURRENCY, type Rail } from '../columns/rails.js';

/** What each canonical column means, with an example value: the notes of the templates. */
export interface ColumnHelp {
  column: CanonicalColumn;
  required: string;
  meaning: string;
  example: string;
}

const addressHelp = (prefix: 'recipientAddress' | 'bankAddress', owner: string): ColumnHelp[] =>
  ADDRESS_FIELDS.map((field) => ({
    column: `${prefix}.${field}` as CanonicalColumn,
    required: prefix === 'recipientAddress' ? 'ACH, WIRE, SWIFT' : 'WIRE, SWIFT',
    meaning: {
      street1: `Street and number of the ${owner}.`,
      city: `City of the ${owner}.`,
      state: `State or region of the ${owner}: 1 to 3 letter ISO code (e.g. NY).`,
      postalCode: `Postal code of the ${owner} - keep leading zeros (format the column as Text).`,
      country: `Country of the ${owner}: 2-letter ISO code (e.g. US).`,
    }[field],
    example: { street1: '1 Main St', city: 'New York', state: 'NY', postalCode: '10001', country: 'US' }[
      field
    ],
  }));

const HELP: ColumnHelp[] = [
  {
    column: 'reference',
    required: 'always',
    meaning:
      'Your own unique id for the payout (invoice, payroll line). Unique within the sheet - it makes re-runs safe.',
    example: 'INV-2026-0001',
  },
  {
    column: 'amount',
    required: 'always',
    meaning:
      'Amount the recipient receives, in the rail currency: digits with a "." and at most 2 decimals, greater than 0, no thousands separators.',
    example: '1250.00',
  },
  {
    column: 'currency',
    required: 'always',
    meaning: 'The rail currency: USD for ACH, WIRE, SWIFT and RTP, MXN for SPEI, BRL for PIX, COP for COP.',
    example: 'USD',
  },
  {
    column: 'type',
    required: 'always',
    meaning: 'The payment rail: ACH, WIRE, SWIFT, RTP, SPEI, PIX or COP (any case).',
    example: 'ACH',
  },
  {
    column: 'beneficiaryId',
    required: 'one of beneficiaryId, the beneficiary columns, or integratorLevel',
    meaning: 'Id of an existing beneficiary. Leave empty to create one from the four beneficiary columns.',
    example: '',
  },
  {
    column: 'beneficiaryType',
    required: 'to create a beneficiary',
    meaning: 'INDIVIDUAL or BUSINESS.',
    example: 'INDIVIDUAL',
  },
  {
    column: 'beneficiaryName',
    required: 'to create a beneficiary',
    meaning: 'Name of the new beneficiary. Rows with the same four beneficiary values share one beneficiary.',
    example: 'Ana Lopez',
  },
  {
    column: 'beneficiaryEmail',
    required: 'no',
    meaning: 'E-mail of the new beneficiary.',
    example: 'ana@example.com',
  },
  {
    column: 'beneficiaryCountry',
    required: 'to create a beneficiary',
    meaning: 'Country of the new beneficiary: 2-letter ISO code.',
    example: 'US',
  },
  {
    column: 'integratorLevel',
    required: 'no',
    meaning: 'true for a recipient of your own (integrator-level), with no beneficiary.',
    example: 'false',
  },
  {
    column: 'recipientId',
    required: 'no',
    meaning: 'Id of an existing recipient. Leave empty to create one from the recipient columns.',
    example: '',
  },
  {
    column: 'individualName',
    required: 'this or businessName',
    meaning: 'Name of a person recipient. Give exactly one of individualName and businessName.',
    example: 'Ana Lopez',
  },
  {
    column: 'businessName',
    required: 'this or individualName',
    meaning: 'Name of a business recipient - needs countryOfIncorporation.',
    example: '',
  },
  {
    column: 'countryOfIncorporation',
    required: 'with businessName',
    meaning: 'Country where the business is incorporated: 2-letter ISO code.',
    example: '',
  },
  {
    column: 'nickname',
    required: 'no',
    meaning: "Up to 50 characters: letters, numbers, spaces and - ( ) . , _ '",
    example: 'Ana payroll',
  },
  {
    column: 'accountNumber',
    required: 'ACH, WIRE and RTP, and SWIFT unless iban is given',
    meaning: 'Bank account number, as text (keep leading zeros).',
    example: '000123456789',
  },
  {
    column: 'routingNumber',
    required: 'ACH, WIRE and RTP (optional for SWIFT)',
    meaning: 'US ABA routing number: exactly 9 digits, as text.',
    example: '021000021',
  },
  {
    column: 'bankName',
    required: 'ACH, WIRE, SWIFT',
    meaning: 'Name of the recipient bank.',
    example: 'JPMorgan Chase',
  },
  { column: 'bankCountry', required: 'ACH', meaning: 'Country of the recipient bank.', example: 'US' },
  {
    column: 'accountType',
    required: 'ACH, COP',
    meaning: 'ACH: Checking, Savings, GeneralLedger or Loan. COP: CHECKING or SAVINGS.',
    example: 'Checking',
  },
  {
    column: 'swiftCode',
    required: 'SWIFT',
    meaning: 'BIC of the recipient bank: 8 or 11 characters, capital letters and digits.',
    example: 'DEUTDEFF',
  },
  {
    column: 'iban',
    required: 'SWIFT (or accountNumber)',
    meaning: 'IBAN without spaces, capital letters.',
    example: 'DE89370400440532013000',
  },
  {
    column: 'clabe',
    required: 'SPEI',
    meaning: 'Mexican CLABE: 18 digits with a valid check digit, as text.',
    example: '002010077777777771',
  },
  {
    column: 'bankCode',
    required: 'SPEI, COP',
    meaning: 'Bank code of the recipient bank, as text (keep leading zeros).',
    example: '002',
  },
  { column: 'receiverName', required: 'SPEI', meaning: 'Name of the account holder.', example: 'Ana Lopez' },
  {
    column: 'pixKey',
    required: 'PIX',
    meaning: 'PIX key: CPF/CNPJ, e-mail, phone or random key, as text.',
    example: 'ana@example.com',
  },
  {
    column: 'documentNumber',
    required: 'PIX',
    meaning: 'CPF (11 digits) or CNPJ (14 digits) - dots, dashes and slashes are ignored.',
    example: '123.456.789-09',
  },
  {
    column: 'bankAccount',
    required: 'COP',
    meaning: 'Colombian bank account number, as text.',
    example: '1234567890',
  },
  {
    column: 'thirdPartyWithdrawal',
    required: 'no (COP)',
    meaning: 'true or false (empty is false). When true, documentId, documentType and email are required.',
    example: 'false',
  },
  {
    column: 'documentId',
    required: 'COP third-party withdrawals',
    meaning: 'Identity document number of the person withdrawing.',
    example: '',
  },
  {
    column: 'documentType',
    required: 'COP third-party withdrawals',
    meaning: 'Identity document type (e.g. CC).',
    example: '',
  },
  {
    column: 'email',
    required: 'COP third-party withdrawals',
    meaning: 'E-mail of the person withdrawing.',
    example: '',
  },
  ...addressHelp('recipientAddress', 'recipient'),
  ...addressHelp('bankAddress', "recipient's bank"),
];

const HELP_BY_COLUMN = new Map(HELP.map((h) => [h.column, h]));

/** Help for one canonical column. */
export function columnHelp(column: CanonicalColumn): ColumnHelp {
  const help = HELP_BY_COLUMN.get(column);
  if (!help) throw new Error(`no help written for column ${column}`);
  return help;
}

// Columns every rail's template has: all canonical columns that are not a rail's details.
const RAIL_COLUMNS = new Set<string>([
  ...Object.values(RAIL_DETAIL_FIELDS).flat(),
  ...ADDRESS_FIELDS.flatMap((f) => [`recipientAddress.${f}`, `bankAddress.${f}`]),
]);
const COMMON_COLUMNS = CANONICAL_COLUMNS.filter((c) => !RAIL_COLUMNS.has(c));

/** The columns of a sheet for the given rails, in template order, without repeats. */
export function columnsForRails(rails: readonly Rail[]): CanonicalColumn[] {
  const columns = new Set<CanonicalColumn>(COMMON_COLUMNS);
  for (const rail of rails) for (const field of RAIL_DETAIL_FIELDS[rail]) columns.add(field);
  for (const rail of rails) {
    for (const address of RAIL_ADDRESSES[rail]) {
      for (const field of ADDRESS_FIELDS) columns.add(`${address}.${field}` as CanonicalColumn);
    }
  }
  return [...columns];
}

/** A one-line description of the rails a template covers, for its notes sheet. */
export function railsDescription(rails: readonly Rail[]): string {
  return rails.map((r) => `${r} (${RAIL_CURRENCY[r]})`).join(', ');
}
