/**
 * Recipient validation (docs/service.md "Validation messages"): the one implementation, used by
 * the sheet pipeline (dry run, src/rows/map.ts) and by the sandbox's POST/PUT recipient endpoint.
 *
 * It takes untrusted JSON of any shape and never throws. Every message that applies is
 * returned (not only the first), word for word as the service writes it, with the dotted
 * request path it is about. How the values are read:
 * - "must be provided" fails for a missing field, null, a string that is blank after trimming,
 *   or a value that is not a string (a number or object cannot be a name or an account);
 * - an optional field (nickname, iban, countryOfIncorporation, SWIFT routingNumber) that is
 *   given but is not a string fails its format message;
 * - formats are checked on the value as sent, untrimmed, because that is what the service
 *   stores (the sheet pipeline trims cells before building the request).
 */

import { ADDRESS_FIELDS } from '../columns/columns.js';
import { RAIL_CURRENCY, RAILS, type Rail } from '../columns/rails.js';
import { isValidRoutingNumber } from './checks/aba.js';
import { BIC_PATTERN, isValidBic } from './checks/bic.js';
import { CLABE_PATTERN, hasValidClabeChecksum } from './checks/clabe.js';
import { IBAN_PATTERN, isValidIban } from './checks/iban.js';
import { isCountryCode } from './countries.js';
import {
  type AddressName,
  addressMessages,
  COMMON_MESSAGES,
  currencyNotTheRails,
  DETAIL_MESSAGES,
  TYPE_NOT_A_RAIL,
} from './messages.js';
import type { ValidationIssue } from './types.js';

type JsonObject = Record<string, unknown>;

/**
 * Nickname limit and allowed characters: letters in any script, digits, ` -(),._'`
 * (docs/service.md "The recipient request").
 */
const NICKNAME_MAX_LENGTH = 50;
const NICKNAME_ALLOWED = /^[\p{L}\p{M}\p{N} \-().,_']*$/u;

/**
 * docs/service.md "Rail details": 1 to 3 letter ISO state code (ISO 3166-2 subdivision part,
 * uppercase).
 */
const STATE_PATTERN = /^[A-Z]{1,3}$/;
const COUNTRY_PATTERN = /^[A-Z]{2}$/;

/** ACH accountType values, spelled exactly as in the service's message. */
export const ACH_ACCOUNT_TYPES = ['Checking', 'Savings', 'GeneralLedger', 'Loan'] as const;
/** COP accountType values (docs/service.md "Rail details"). */
export const COP_ACCOUNT_TYPES = ['CHECKING', 'SAVINGS'] as const;

/**
 * PIX (docs/service.md "Rail details"): the formatting characters removed before counting a
 * CPF/CNPJ.
 */
const DOCUMENT_FORMATTING = /[/.-]/g;

/** Options of `validateRecipient`. */
export interface RecipientValidationOptions {
  /**
   * The recipient's beneficiary is one the caller will create first and whose id it fills in
   * then: the body is checked as if `beneficiaryId` were given (the sheet's dry run).
   */
  beneficiaryToCreate?: boolean;
}

/**
 * All validation messages that apply to a RecipientRequest body, in the order of the service's
 * lists in docs/service.md "Validation messages" (common fields, then the rail's details). Never
 * throws, whatever `body` is.
 */
export function validateRecipient(body: unknown, options?: RecipientValidationOptions): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const recipient: JsonObject = isObject(body) ? body : {};

  const hasIndividual = isProvided(recipient['individualName']);
  const hasBusiness = isProvided(recipient['businessName']);
  if (hasIndividual === hasBusiness) report(issues, 'individualName', COMMON_MESSAGES.nameRequired);
  if (hasBusiness && !isProvided(recipient['countryOfIncorporation'])) {
    report(issues, 'countryOfIncorporation', COMMON_MESSAGES.countryOfIncorporationRequired);
  }
  // docs/service.md "The recipient request": an integrator-level recipient has no beneficiary.
  if (
    recipient['integratorLevel'] !== true &&
    options?.beneficiaryToCreate !== true &&
    !isProvided(recipient['beneficiaryId'])
  ) {
    report(issues, 'beneficiaryId', COMMON_MESSAGES.beneficiaryIdRequired);
  }
  checkTypeAndCurrency(recipient['type'], recipient['currency'], issues);
  const details = recipient['details'];
  if (!isObject(details)) report(issues, 'details', COMMON_MESSAGES.detailsRequired);

  const countryOfIncorporation = recipient['countryOfIncorporation'];
  if (isGiven(countryOfIncorporation)) {
    // The service gives one cause only: longer than 2 characters.
    if (typeof countryOfIncorporation !== 'string' || countryOfIncorporation.length > 2) {
      report(issues, 'countryOfIncorporation', COMMON_MESSAGES.countryOfIncorporationIso);
    }
  }
  const nickname = recipient['nickname'];
  if (isGiven(nickname)) {
    if (typeof nickname !== 'string') {
      report(issues, 'nickname', COMMON_MESSAGES.nicknameInvalidCharacters);
    } else {
      // Both can apply at once; length counts characters, not UTF-16 units.
      if (longerThan(nickname, NICKNAME_MAX_LENGTH))
        report(issues, 'nickname', COMMON_MESSAGES.nicknameMaxLength);
      if (!NICKNAME_ALLOWED.test(nickname))
        report(issues, 'nickname', COMMON_MESSAGES.nicknameInvalidCharacters);
    }
  }

  const rail = asRail(recipient['type']);
  if (rail !== undefined && isObject(details)) RAIL_VALIDATORS[rail](details, issues);
  return issues;
}

/**
 * The `type` and `currency` messages alone: required, a known rail, the rail's currency
 * (docs/service.md "The recipient request"). Also used for rows that pay an existing recipient,
 * whose other fields are the service's business.
 */
export function validateTypeAndCurrency(type: unknown, currency: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  checkTypeAndCurrency(type, currency, issues);
  return issues;
}

function checkTypeAndCurrency(type: unknown, currency: unknown, issues: ValidationIssue[]): void {
  if (!isGiven(currency)) report(issues, 'currency', COMMON_MESSAGES.currencyRequired);
  if (!isGiven(type)) {
    report(issues, 'type', COMMON_MESSAGES.typeRequired);
    return;
  }
  const rail = asRail(type);
  if (rail === undefined) {
    report(issues, 'type', TYPE_NOT_A_RAIL);
  } else if (isGiven(currency) && currency !== RAIL_CURRENCY[rail]) {
    report(issues, 'currency', currencyNotTheRails(rail));
  }
}

function report(issues: ValidationIssue[], path: string, message: string): void {
  issues.push({ path, message });
}

/** A finding inside `details`: its path is `details.<field>`. */
function reportDetail(issues: ValidationIssue[], field: string, message: string): void {
  issues.push({ path: `details.${field}`, message });
}

/** True when `text` has more than `max` characters as `[...text]` counts them (code points). */
function longerThan(text: string, max: number): boolean {
  // Never more code points than UTF-16 units: a short text needs no counting (nor an array).
  if (text.length <= max) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count > max;
}

type Issues = ValidationIssue[];

const RAIL_VALIDATORS: Record<Rail, (details: JsonObject, issues: Issues) => void> = {
  ACH(d, issues) {
    requireField(d, 'accountNumber', DETAIL_MESSAGES.accountNumberRequired, issues);
    checkUsRoutingNumber(d, issues);
    requireField(d, 'bankName', DETAIL_MESSAGES.bankNameRequired, issues);
    requireField(d, 'bankCountry', DETAIL_MESSAGES.bankCountryRequired, issues);
    if (!isOneOf(d['accountType'], ACH_ACCOUNT_TYPES))
      reportDetail(issues, 'accountType', DETAIL_MESSAGES.achAccountType);
    // ACH does not require a bankAddress (docs/service.md "Validation messages").
    checkAddress(d, 'recipientAddress', issues);
  },

  WIRE(d, issues) {
    requireField(d, 'accountNumber', DETAIL_MESSAGES.accountNumberRequired, issues);
    checkUsRoutingNumber(d, issues);
    requireField(d, 'bankName', DETAIL_MESSAGES.bankNameRequired, issues);
    checkAddress(d, 'bankAddress', issues);
    checkAddress(d, 'recipientAddress', issues);
  },

  SWIFT(d, issues) {
    const swiftCode = d['swiftCode'];
    if (typeof swiftCode !== 'string' || !BIC_PATTERN.test(swiftCode)) {
      reportDetail(issues, 'swiftCode', DETAIL_MESSAGES.swiftCodeFormat);
    } else if (!isValidBic(swiftCode)) {
      reportDetail(issues, 'swiftCode', DETAIL_MESSAGES.swiftCodeInvalid);
    }
    requireField(d, 'bankName', DETAIL_MESSAGES.bankNameRequired, issues);
    checkAddress(d, 'bankAddress', issues);
    checkAddress(d, 'recipientAddress', issues);
    const bankAddress = d['bankAddress'];
    if (isObject(bankAddress) && bankAddress['country'] === 'US') {
      reportDetail(issues, 'bankAddress.country', DETAIL_MESSAGES.swiftBankInUs);
    }
    if (!isProvided(d['accountNumber']) && !isProvided(d['iban'])) {
      reportDetail(issues, 'accountNumber', DETAIL_MESSAGES.accountNumberOrIbanRequired);
    }
    const iban = d['iban'];
    if (isGiven(iban)) {
      if (typeof iban !== 'string' || !IBAN_PATTERN.test(iban))
        reportDetail(issues, 'iban', DETAIL_MESSAGES.ibanFormat);
      else if (!isValidIban(iban)) reportDetail(issues, 'iban', DETAIL_MESSAGES.ibanInvalid);
    }
    // Optional for SWIFT; when given it must be a real US routing number.
    const routingNumber = d['routingNumber'];
    if (
      isGiven(routingNumber) &&
      !(typeof routingNumber === 'string' && isValidRoutingNumber(routingNumber))
    ) {
      reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberInvalid);
    }
  },

  RTP(d, issues) {
    requireField(d, 'accountNumber', DETAIL_MESSAGES.accountNumberRequired, issues);
    // The service gives RTP no "is invalid" message: only presence and length are checked.
    const routingNumber = d['routingNumber'];
    if (!isProvided(routingNumber))
      reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberRequired);
    else if (routingNumber.length !== 9)
      reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberLength);
  },

  SPEI(d, issues) {
    const clabe = d['clabe'];
    if (!isProvided(clabe)) reportDetail(issues, 'clabe', DETAIL_MESSAGES.clabeRequired);
    else if (!CLABE_PATTERN.test(clabe)) reportDetail(issues, 'clabe', DETAIL_MESSAGES.clabeLength);
    else if (!hasValidClabeChecksum(clabe)) reportDetail(issues, 'clabe', DETAIL_MESSAGES.clabeChecksum);
    requireField(d, 'bankCode', DETAIL_MESSAGES.bankCodeRequired, issues);
    requireField(d, 'receiverName', DETAIL_MESSAGES.receiverNameRequired, issues);
  },

  PIX(d, issues) {
    requireField(d, 'pixKey', DETAIL_MESSAGES.pixKeyRequired, issues);
    const documentNumber = d['documentNumber'];
    if (!isProvided(documentNumber)) {
      reportDetail(issues, 'documentNumber', DETAIL_MESSAGES.documentNumberRequired);
    } else {
      const length = [...documentNumber.replace(DOCUMENT_FORMATTING, '')].length;
      if (length !== 11 && length !== 14)
        reportDetail(issues, 'documentNumber', DETAIL_MESSAGES.documentNumberLength);
    }
  },

  COP(d, issues) {
    if (!isOneOf(d['accountType'], COP_ACCOUNT_TYPES))
      reportDetail(issues, 'accountType', DETAIL_MESSAGES.copAccountType);
    requireField(d, 'bankAccount', DETAIL_MESSAGES.bankAccountRequired, issues);
    requireField(d, 'bankCode', DETAIL_MESSAGES.bankCodeRequired, issues);
    // thirdPartyWithdrawal is a boolean (docs/service.md "Rail details"); only a JSON true asks
    // for the three fields.
    if (d['thirdPartyWithdrawal'] === true) {
      requireField(d, 'documentId', DETAIL_MESSAGES.documentIdThirdParty, issues);
      requireField(d, 'documentType', DETAIL_MESSAGES.documentTypeThirdParty, issues);
      requireField(d, 'email', DETAIL_MESSAGES.emailThirdParty, issues);
    }
  },
};

/**
 * ACH and WIRE: provided, 9 characters, then a known US bank (docs/service.md "Validation
 * messages").
 */
function checkUsRoutingNumber(d: JsonObject, issues: Issues): void {
  const routingNumber = d['routingNumber'];
  if (!isProvided(routingNumber))
    reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberRequired);
  else if (routingNumber.length !== 9)
    reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberLength);
  else if (!isValidRoutingNumber(routingNumber))
    reportDetail(issues, 'routingNumber', DETAIL_MESSAGES.routingNumberInvalid);
}

// The messages of each address object, made once rather than on every row.
const ADDRESS_MESSAGES: Record<AddressName, ReturnType<typeof addressMessages>> = {
  recipientAddress: addressMessages('recipientAddress'),
  bankAddress: addressMessages('bankAddress'),
};

/**
 * Address messages (docs/service.md "Validation messages"): a missing or malformed object gives
 * only "<addr> must be provided".
 */
function checkAddress(d: JsonObject, addr: AddressName, issues: Issues): void {
  const messages = ADDRESS_MESSAGES[addr];
  const address = d[addr];
  if (!isObject(address)) {
    reportDetail(issues, addr, messages.missing);
    return;
  }
  for (const field of ADDRESS_FIELDS) {
    const value = address[field];
    const ok =
      field === 'state'
        ? typeof value === 'string' && STATE_PATTERN.test(value)
        : field === 'country'
          ? typeof value === 'string' && COUNTRY_PATTERN.test(value) && isCountryCode(value)
          : isProvided(value);
    if (!ok) reportDetail(issues, `${addr}.${field}`, messages[field]);
  }
}

function requireField(d: JsonObject, field: string, message: string, issues: Issues): void {
  if (!isProvided(d[field])) reportDetail(issues, field, message);
}

const RAIL_NAMES: ReadonlySet<string> = new Set(RAILS);

function asRail(type: unknown): Rail | undefined {
  return typeof type === 'string' && RAIL_NAMES.has(type) ? (type as Rail) : undefined;
}

function isOneOf(value: unknown, allowed: readonly string[]): boolean {
  return typeof value === 'string' && allowed.includes(value);
}

/** A plain JSON object (not null, not an array). */
function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "must be provided": a string with something in it besides white space. */
function isProvided(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** Present at all: not missing, not null, not a blank string (a number or object counts). */
function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');
}
