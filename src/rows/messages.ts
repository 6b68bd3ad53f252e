import { MAX_REFERENCE_LENGTH } from '../api/contract.js';
/**
 * Every message the rows stage can give, in one place, so that the sheet pipeline, the
 * sandbox, the tests and the docs all use the same text.
 *
 * The recipient messages are the service's word for word (docs/service.md "Validation
 * messages", including its grammar, e.g. "iban must matches the regex"): users and scripts
 * match on them. The rest are ours and say what is wrong, where, and what to do, so a user can
 * fix the row without asking anyone.
 */
import type { AddressField } from '../columns/columns.js';
import { RAIL_CURRENCY, RAILS, type Rail } from '../columns/rails.js';
import { boundCell, quoteCell } from '../sheet/quote.js';

/** Common to every rail (docs/service.md "Validation messages"). */
export const COMMON_MESSAGES = {
  nameRequired: 'The field recipient.individualName or recipient.businessName is required',
  countryOfIncorporationRequired:
    'The field recipient.countryOfIncorporation is required when recipient.businessName is provided',
  beneficiaryIdRequired: 'The field recipient.beneficiaryId is required',
  currencyRequired: 'The field recipient.currency is required',
  typeRequired: 'The field recipient.type is required',
  detailsRequired: 'The field recipient.details is required',
  countryOfIncorporationIso: 'The field recipient.countryOfIncorporation should follow ISO 3166-2',
  nicknameMaxLength: 'recipient.nickname-max-length',
  nicknameInvalidCharacters: 'recipient.nickname-invalid-characters',
} as const;

/**
 * A `type` that is not one of the seven rails. The service does not give its message
 * for it, so this one is ours, phrased like the service's.
 */
export const TYPE_NOT_A_RAIL = `The field recipient.type must be one of ${RAILS.join(', ')}`;

/**
 * Template of the (ours) message for a currency that is not the rail's (docs/service.md "The
 * recipient request").
 */
export const CURRENCY_NOT_THE_RAILS = 'The field recipient.currency must be <CUR> for <RAIL>';

/** CURRENCY_NOT_THE_RAILS filled in for one rail, e.g. "... must be MXN for SPEI". */
export function currencyNotTheRails(rail: Rail): string {
  return CURRENCY_NOT_THE_RAILS.replace('<CUR>', RAIL_CURRENCY[rail]).replace('<RAIL>', rail);
}

/** The two address objects (docs/service.md "Rail details"). */
export type AddressName = 'recipientAddress' | 'bankAddress';

/** The address messages (docs/service.md "Validation messages") for one address object. */
export function addressMessages(addr: AddressName): { missing: string } & Record<AddressField, string> {
  return {
    missing: `${addr} must be provided`,
    street1: `${addr}.street1 must be provided`,
    city: `${addr}.city must be provided`,
    state: `${addr}.state must be provided and must be 1-3 letter ISO state code`,
    postalCode: `${addr}.postalCode must be provided`,
    country: `${addr}.country must be provided and must be 2-letter ISO country code`,
  };
}

/**
 * The per-rail `details` messages (docs/service.md "Validation messages"; ACH, WIRE, SWIFT, RTP,
 * SPEI, PIX, COP).
 */
export const DETAIL_MESSAGES = {
  accountNumberRequired: 'accountNumber must be provided',
  routingNumberRequired: 'routingNumber must be provided',
  routingNumberLength: 'routingNumber must be 9 characters long',
  routingNumberInvalid: 'routingNumber is invalid',
  bankNameRequired: 'bankName must be provided',
  bankCountryRequired: 'bankCountry must be provided',
  achAccountType: 'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
  swiftCodeFormat: 'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
  swiftCodeInvalid: 'swiftCode is invalid',
  swiftBankInUs: 'bankAddress.country should be WIRE not SWIFT when country is US',
  accountNumberOrIbanRequired: 'accountNumber or iban must be provided',
  ibanFormat: 'iban must matches the regex: ^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
  ibanInvalid: 'iban is invalid',
  clabeRequired: 'clabe must be provided',
  clabeLength: 'clabe must be 18 digits long',
  clabeChecksum: 'clabe has an invalid checksum',
  bankCodeRequired: 'bankCode must be provided',
  receiverNameRequired: 'receiverName must be provided',
  pixKeyRequired: 'pixKey must be provided',
  documentNumberRequired: 'documentNumber must be provided',
  documentNumberLength: 'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
  copAccountType: 'accountType must be CHECKING or SAVINGS',
  bankAccountRequired: 'bankAccount must be provided',
  documentIdThirdParty: 'documentId must be provided for third party withdrawals',
  documentTypeThirdParty: 'documentType must be provided for third party withdrawals',
  emailThirdParty: 'email must be provided for third party withdrawals',
} as const;

/**
 * POST /v1/beneficiaries validation (ours: the service does not show the beneficiary body;
 * the assumed body is BeneficiaryRequest in src/api/contract.ts). Phrased like the service's
 * validation messages.
 */
export const BENEFICIARY_MESSAGES = {
  typeRequired: 'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS',
  nameRequired: 'beneficiary.name must be provided',
  emailInvalid: 'beneficiary.email must be a valid e-mail address',
  countryRequired: 'beneficiary.country must be provided and must be 2-letter ISO country code',
} as const;

/** Amount cell messages (docs/sheets.md, `amount`: decimal with `.`, > 0, at most 2 decimals). */
export const AMOUNT_MESSAGES = {
  required: 'amount is required: enter the amount the recipient receives, e.g. 1250.00',
  notDecimal: (text: string) =>
    `amount ${quoteCell(text)} is not a decimal number with a "." (e.g. 1250.00): fix the amount cell`,
  thousandsSeparator: (text: string) =>
    `amount ${quoteCell(text)} has a thousands separator: write it without separators and with a "." for the decimals (e.g. 1250.00)`,
  exponent: (text: string) =>
    `amount ${quoteCell(text)} is in scientific notation: write the full amount with a "." for the decimals (e.g. 1250.00)`,
  negative: (text: string) =>
    `amount ${quoteCell(text)} is negative: a payout amount must be greater than 0, so remove the row or fix the amount cell`,
  sign: (text: string) => `amount ${quoteCell(text)} has a sign: write the amount without "+" (e.g. 1250.00)`,
  tooManyDecimals: (text: string) =>
    `amount ${quoteCell(text)} has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)`,
  ambiguousGrouping: (text: string, grouped: string, decimal: string) =>
    `amount ${quoteCell(text)} is ambiguous: it is ${grouped} if the separator groups thousands, or ${decimal} if it marks the decimals. Write it without grouping (${grouped} or ${decimal})`,
  decimalComma: (text: string, reading: string) =>
    `amount ${quoteCell(text)} uses a decimal comma, which only a semicolon-delimited CSV makes certain: write it as ${reading} with a "." for the decimals`,
  dotGrouping: (text: string, reading: string) =>
    `amount ${quoteCell(text)} groups thousands with ".", which marks the decimals in this sheet: write it as ${reading}, without grouping`,
  notPositive: (text: string) =>
    `amount ${quoteCell(text)} is not greater than 0: enter the amount to pay, or remove the row`,
} as const;

/** Messages about a sheet row as a whole or about one of its cells (ours). */
export const ROW_MESSAGES = {
  referenceRequired: 'reference is required: give every payout a unique reference (invoice or payroll line)',
  referenceTooLong: `reference is longer than ${MAX_REFERENCE_LENGTH} characters, which the service refuses: shorten it`,
  notABoolean: (column: string, text: string) =>
    `${column} ${quoteCell(text)} is not true or false: write true or false (yes/no and 1/0 also work), or leave the cell empty for false`,
  integratorWithBeneficiary:
    'integratorLevel is true but the row also names a beneficiary (beneficiaryId or beneficiaryType, beneficiaryName, beneficiaryEmail, beneficiaryCountry): an integrator-level recipient has no beneficiary, so clear integratorLevel or the beneficiary cells',
  /** docs/sheets.md: "Spreadsheet damage is reported, never repaired". */
  arrivedAsNumber: (column: string, text: string) =>
    `${column} arrived as a number (${boundCell(text)}): a spreadsheet dropped its leading zeros or digits. Format the ${column} column as Text, re-enter the value and save again.`,
  arrivedInScientificNotation: (column: string, text: string) =>
    `${column} arrived in scientific notation (${boundCell(text)}): a spreadsheet rounded the number and its digits are lost. Format the ${column} column as Text, re-enter the full value and save again.`,
  arrivedWithTooManyDigits: (column: string, text: string) =>
    `${column} arrived as a number with more than 15 digits (${boundCell(text)}): a spreadsheet keeps only 15 digits and replaced the rest. Format the ${column} column as Text, re-enter the full value and save again.`,
} as const;
