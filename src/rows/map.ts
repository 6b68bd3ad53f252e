import { createHash } from 'node:crypto';
/**
 * A raw sheet row to a typed payout (STYLE.md pipeline: raw cells → mapped payout request →
 * validation issues). Reads the canonical columns of PRODUCT.md "The sheet", builds the
 * beneficiary and recipient requests exactly as they would be sent, and collects every
 * finding on its cells: reference and amount, spreadsheet damage, then the SPEC.md 7.2
 * messages word for word. Needs no network: it is the dry run of one row (uniqueness of the
 * reference across rows and the reader's record problems are the batch's).
 */
import { type BeneficiaryRequest, MAX_REFERENCE_LENGTH } from '../api/contract.js';
import type { Cell, RawRow } from '../sheet/types.js';
import { validateBeneficiary } from './beneficiary.js';
import {
  ADDRESS_FIELDS,
  CANONICAL_COLUMNS,
  type CanonicalColumn,
  type ColumnIndex,
  IDENTIFIER_COLUMNS,
  RAIL_ADDRESSES,
  RAIL_DETAIL_FIELDS,
} from './columns.js';
import { identifierDamage } from './damage.js';
import { AMOUNT_MESSAGES, ROW_MESSAGES } from './messages.js';
import { parseAmount } from './money.js';
import { parseRail, type Rail } from './rails.js';
import type {
  Address,
  BeneficiaryRef,
  PayoutRow,
  RecipientDetails,
  RecipientRef,
  RecipientRequest,
  RowIssue,
  ValidationIssue,
} from './types.js';
import { validateRecipient, validateTypeAndCurrency } from './validate.js';

export type { BeneficiaryRef, PayoutRow, RecipientRef } from './types.js';

/**
 * Stands in for the id of a beneficiary the run has yet to create, so that the dry run says
 * "The field recipient.beneficiaryId is required" only for rows that name no beneficiary.
 */
export const NEW_BENEFICIARY_PLACEHOLDER = '<new beneficiary>';

const NEW_BENEFICIARY_COLUMNS = [
  'beneficiaryType',
  'beneficiaryName',
  'beneficiaryEmail',
  'beneficiaryCountry',
] as const satisfies readonly CanonicalColumn[];

const RECIPIENT_TOP_LEVEL_COLUMNS = [
  'individualName',
  'businessName',
  'countryOfIncorporation',
  'nickname',
] as const satisfies readonly CanonicalColumn[];

const canonical: ReadonlySet<string> = new Set(CANONICAL_COLUMNS);
const identifiers: ReadonlySet<CanonicalColumn> = new Set(IDENTIFIER_COLUMNS);

/** Maps one sheet row to a payout with every issue found on it. Never throws on cell content. */
export function mapRow(row: RawRow, columns: ColumnIndex): PayoutRow {
  const cells = new RowCells(row, columns);
  // row.problems (record-level findings of the reader) are the caller's to report, not ours.
  const own: RowIssue[] = [];

  const reference = cells.text('reference') ?? '';
  if (reference === '') own.push({ column: 'reference', message: ROW_MESSAGES.referenceRequired });
  else if (reference.length > MAX_REFERENCE_LENGTH)
    own.push({ column: 'reference', message: ROW_MESSAGES.referenceTooLong });

  let amount: PayoutRow['amount'];
  const amountText = cells.text('amount');
  if (amountText === undefined) {
    own.push({ column: 'amount', message: AMOUNT_MESSAGES.required });
  } else {
    const parsed = parseAmount(amountText);
    if (parsed.ok) amount = { minor: parsed.minor, text: parsed.text };
    else own.push({ column: 'amount', message: parsed.message });
  }

  const currency = cells.text('currency');
  const typeText = cells.text('type');
  // PRODUCT.md: the rail may be written in any case; an unknown one is kept as given so that
  // validateRecipient names it.
  const rail = typeText === undefined ? undefined : parseRail(typeText);
  const type = rail ?? typeText;

  const beneficiary = mapBeneficiary(cells);
  const recipient = mapRecipient(cells, beneficiary.ref, { currency, type, rail });

  const payout: PayoutRow = {
    rowNumber: row.rowNumber,
    reference,
    beneficiary: beneficiary.ref,
    recipient: recipient.ref,
    // Damage first (PRODUCT.md): it explains the spec messages that follow on the same column.
    issues: [...own, ...cells.issues, ...beneficiary.issues, ...recipient.issues],
  };
  if (amount !== undefined) payout.amount = amount;
  if (currency !== undefined) payout.currency = currency;
  if (rail !== undefined) payout.rail = rail;
  return payout;
}

/** beneficiaryId → existing; integratorLevel true → integrator; beneficiary columns → new. */
function mapBeneficiary(cells: RowCells): { ref: BeneficiaryRef; issues: RowIssue[] } {
  const issues: RowIssue[] = [];
  const id = cells.text('beneficiaryId');
  const integratorLevel = cells.boolean('integratorLevel');
  const namesNew = NEW_BENEFICIARY_COLUMNS.some((column) => cells.text(column) !== undefined);

  if (integratorLevel === true && (id !== undefined || namesNew)) {
    issues.push({ column: 'integratorLevel', message: ROW_MESSAGES.integratorWithBeneficiary });
  }
  if (id !== undefined) return { ref: { kind: 'existing', id }, issues };
  if (integratorLevel === true) return { ref: { kind: 'integrator' }, issues };
  if (!namesNew) return { ref: { kind: 'missing' }, issues };

  const body: Record<string, string> = {};
  const type = cells.text('beneficiaryType');
  if (type !== undefined) body['type'] = type.toUpperCase();
  const name = cells.text('beneficiaryName');
  if (name !== undefined) body['name'] = name;
  const email = cells.text('beneficiaryEmail');
  if (email !== undefined) body['email'] = email;
  const country = cells.text('beneficiaryCountry');
  if (country !== undefined) body['country'] = country;

  for (const issue of validateBeneficiary(body)) {
    issues.push({ column: beneficiaryColumn(issue.path), message: issue.message });
  }
  // Only fit to send when the row has no issues (PayoutRow).
  const request = body as unknown as BeneficiaryRequest;
  return { ref: new NewBeneficiary(request), issues };
}

interface RailCells {
  currency: string | undefined;
  type: string | undefined;
  rail: Rail | undefined;
}

/** recipientId → existing (only type and currency checked); otherwise the RecipientRequest to create. */
function mapRecipient(
  cells: RowCells,
  beneficiary: BeneficiaryRef,
  { currency, type, rail }: RailCells,
): { ref: RecipientRef; issues: RowIssue[] } {
  const id = cells.text('recipientId');
  if (id !== undefined) {
    // The recipient's own fields are the service's business; the payout still needs a rail
    // and the rail's currency for its simulation (SPEC.md 2.3).
    return { ref: { kind: 'existing', id }, issues: toRowIssues(validateTypeAndCurrency(type, currency)) };
  }

  const request: RecipientRequest = {};
  for (const column of RECIPIENT_TOP_LEVEL_COLUMNS) {
    const value = cells.text(column);
    if (value !== undefined) request[column] = value;
  }
  if (beneficiary.kind === 'existing') request.beneficiaryId = beneficiary.id;
  if (beneficiary.kind === 'integrator') request.integratorLevel = true;
  if (currency !== undefined) request.currency = currency;
  if (type !== undefined) request.type = type;
  request.details = rail === undefined ? null : mapDetails(cells, rail);

  const checked =
    beneficiary.kind === 'new' ? { ...request, beneficiaryId: NEW_BENEFICIARY_PLACEHOLDER } : request;
  return { ref: new NewRecipient(request, beneficiary), issues: toRowIssues(validateRecipient(checked)) };
}

/**
 * The rail's own `details` (SPEC.md 2.4; PRODUCT.md "a rail uses only its own"). An address
 * object is there only when one of its cells is filled, so that an empty one gives "<addr>
 * must be provided". With none of the rail's cells filled, details is null, which the spec
 * answers with "The field recipient.details is required".
 */
function mapDetails(cells: RowCells, rail: Rail): RecipientDetails | null {
  const details: RecipientDetails = {};
  let filled = false;
  for (const column of RAIL_DETAIL_FIELDS[rail]) {
    if (column === 'thirdPartyWithdrawal') {
      // A JSON boolean for the service (SPEC.md 2.4). An empty cell means false; an unreadable
      // one is reported by boolean() and left out rather than guessed.
      const given = cells.text(column) !== undefined;
      const value = cells.boolean(column);
      if (!given) details[column] = false;
      else if (value !== undefined) details[column] = value;
      if (given) filled = true;
      continue;
    }
    const value = cells.text(column);
    if (value === undefined) continue;
    details[column] = value;
    filled = true;
  }
  for (const addr of RAIL_ADDRESSES[rail]) {
    const address: Address = {};
    for (const field of ADDRESS_FIELDS) {
      const value = cells.text(`${addr}.${field}`);
      if (value !== undefined) address[field] = value;
    }
    if (Object.keys(address).length === 0) continue;
    details[addr] = address;
    filled = true;
  }
  return filled ? details : null;
}

/**
 * The cells of one row by canonical column: trimmed text, or undefined when the column is
 * absent, the cell empty or blank. Reading an identifier column also checks it for spreadsheet
 * damage, so only the columns a row actually uses are reported; each column at most once.
 */
class RowCells {
  readonly issues: RowIssue[] = [];
  // Made on the first report: most rows have none.
  private reported: Set<CanonicalColumn> | undefined;

  constructor(
    private readonly row: RawRow,
    private readonly columns: ColumnIndex,
  ) {}

  text(column: CanonicalColumn): string | undefined {
    const cell = this.cell(column);
    if (cell === undefined) return undefined;
    if (identifiers.has(column)) {
      const damage = identifierDamage(column, cell);
      if (damage !== undefined) this.report(column, damage);
    }
    return cell.text.trim();
  }

  /**
   * A yes/no cell: true/false, yes/no, 1/0 in any case, or an XLSX boolean. Undefined when
   * empty, and also when unreadable, which is then reported once as an issue on the column.
   */
  boolean(column: CanonicalColumn): boolean | undefined {
    const text = this.text(column);
    if (text === undefined) return undefined;
    const value = SHEET_BOOLEANS.get(text.toLowerCase());
    if (value === undefined) this.report(column, ROW_MESSAGES.notABoolean(column, text));
    return value;
  }

  private report(column: CanonicalColumn, message: string): void {
    this.reported ??= new Set();
    if (this.reported.has(column)) return;
    this.reported.add(column);
    this.issues.push({ column, message });
  }

  private cell(column: CanonicalColumn): Cell | undefined {
    const index = this.columns.get(column);
    const cell = index === undefined ? undefined : this.row.cells[index];
    if (cell === undefined || cell.kind === 'empty' || cell.text.trim() === '') return undefined;
    return cell;
  }
}

const SHEET_BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['yes', true],
  ['1', true],
  ['false', false],
  ['no', false],
  ['0', false],
]);

/**
 * SPEC.md 7.2 issues as row issues: the path names the canonical column
 * (`details.recipientAddress.city` → `recipientAddress.city`); a path that is no single column
 * (`details`, a whole address) gives none. Messages are kept word for word.
 */
function toRowIssues(issues: readonly ValidationIssue[]): RowIssue[] {
  return issues.map(({ path, message }) => {
    const column = path.startsWith('details.') ? path.slice('details.'.length) : path;
    return canonical.has(column) ? { column, message } : { message };
  });
}

/** validateBeneficiary paths (`name`) to the sheet's columns (`beneficiaryName`). */
function beneficiaryColumn(path: string): string | undefined {
  const column = `beneficiary${path.charAt(0).toUpperCase()}${path.slice(1)}`;
  return canonical.has(column) ? column : undefined;
}

/**
 * A stable key for rows that create the same thing: SHA-256 of the request as JSON. mapRow
 * builds every request in one fixed field order, so equal requests give equal text without
 * sorting keys. Hashed so that account numbers and names do not travel into logs and journals.
 */
function dedupeKey(kind: 'beneficiary' | 'recipient', value: unknown): string {
  return `${kind}:${createHash('sha256').update(JSON.stringify(value)).digest('base64url')}`;
}

/**
 * A new beneficiary to create. Its dedupe key is computed on first use, by a prototype getter:
 * only `run` needs keys, and hashing (or a closure) on every row would slow `validate` down.
 */
class NewBeneficiary {
  readonly kind = 'new';
  #key: string | undefined;
  constructor(readonly request: BeneficiaryRequest) {}
  get key(): string {
    this.#key ??= dedupeKey('beneficiary', this.request);
    return this.#key;
  }
}

/** A new recipient to create; its key covers its beneficiary's, computed on first use. */
class NewRecipient {
  readonly kind = 'new';
  #key: string | undefined;
  constructor(
    readonly request: RecipientRequest,
    private readonly beneficiary: BeneficiaryRef,
  ) {}
  get key(): string {
    this.#key ??= dedupeKey('recipient', {
      beneficiary: this.beneficiary.kind === 'new' ? this.beneficiary.key : null,
      request: this.request,
    });
    return this.#key;
  }
}
