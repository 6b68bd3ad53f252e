/**
 * The canonical sheet columns (docs/sheets.md). Field names are the service's (docs/service.md
 * "The recipient request", "Rail details"), flattened: address fields are
 * `recipientAddress.street1` and so on.
 */
import { ADDRESS_FIELDS } from '../api/contract.js';
import type { Rail } from './rails.js';

export { ADDRESS_FIELDS, type AddressField } from '../api/contract.js';

const recipientAddressColumns = ADDRESS_FIELDS.map((f) => `recipientAddress.${f}` as const);
const bankAddressColumns = ADDRESS_FIELDS.map((f) => `bankAddress.${f}` as const);

export const CANONICAL_COLUMNS = [
  'reference',
  'amount',
  'currency',
  'type',
  'beneficiaryId',
  'beneficiaryType',
  'beneficiaryName',
  'beneficiaryEmail',
  'beneficiaryCountry',
  'integratorLevel',
  'recipientId',
  'individualName',
  'businessName',
  'countryOfIncorporation',
  'nickname',
  'accountNumber',
  'routingNumber',
  'bankName',
  'bankCountry',
  'accountType',
  'swiftCode',
  'iban',
  'clabe',
  'bankCode',
  'receiverName',
  'pixKey',
  'documentNumber',
  'bankAccount',
  'thirdPartyWithdrawal',
  'documentId',
  'documentType',
  'email',
  ...recipientAddressColumns,
  ...bankAddressColumns,
] as const;
export type CanonicalColumn = (typeof CANONICAL_COLUMNS)[number];

/** Headers a sheet must have (docs/sheets.md: "required"); a missing one is exit 2. */
export const REQUIRED_COLUMNS: readonly CanonicalColumn[] = ['reference', 'amount', 'currency', 'type'];

/**
 * Identifier columns: a spreadsheet that turns them into numbers loses leading zeros or
 * digits (docs/sheets.md: "Spreadsheet damage is reported, never repaired").
 */
export const IDENTIFIER_COLUMNS: readonly CanonicalColumn[] = [
  'accountNumber',
  'routingNumber',
  'clabe',
  'documentNumber',
  'bankAccount',
  'documentId',
  'bankCode',
  'iban',
  'pixKey',
];

/**
 * The flat `details` fields of each rail (docs/service.md "Rail details"), without the address
 * objects.
 */
export const RAIL_DETAIL_FIELDS: Record<Rail, readonly CanonicalColumn[]> = {
  ACH: ['accountNumber', 'routingNumber', 'bankName', 'bankCountry', 'accountType'],
  WIRE: ['accountNumber', 'routingNumber', 'bankName'],
  SWIFT: ['swiftCode', 'bankName', 'accountNumber', 'iban', 'routingNumber'],
  RTP: ['accountNumber', 'routingNumber'],
  SPEI: ['clabe', 'bankCode', 'receiverName'],
  PIX: ['pixKey', 'documentNumber'],
  COP: [
    'accountType',
    'bankAccount',
    'bankCode',
    'thirdPartyWithdrawal',
    'documentId',
    'documentType',
    'email',
  ],
};

/** The address objects inside each rail's `details` (docs/service.md "Rail details"). */
export const RAIL_ADDRESSES: Record<Rail, readonly ('recipientAddress' | 'bankAddress')[]> = {
  ACH: ['recipientAddress'],
  WIRE: ['bankAddress', 'recipientAddress'],
  SWIFT: ['bankAddress', 'recipientAddress'],
  RTP: [],
  SPEI: [],
  PIX: [],
  COP: [],
};

/** Where each canonical column sits in a sheet's rows (cell index); absent columns are not in the map. */
export type ColumnIndex = ReadonlyMap<CanonicalColumn, number>;
