import { createHash } from 'node:crypto';
/**
 * A raw sheet row to a typed payout (one stage of the pipeline: raw cells → mapped payout
 * request → validation issues). Reads the canonical columns (docs/sheets.md), builds the
 * beneficiary and recipient requests exactly as they would be sent, and collects every
 * finding on its cells: reference and amount, spreadsheet damage, then the service's
 * validation messages word for word. Needs no network: it is the dry run of one row (uniqueness
 * of the reference across rows and the reader's record problems are the batch's).
 */
import { type BeneficiaryRequest, MAX_REFERENCE_LENGTH } from '../api/contract.js';
import {
  ADDRESS_FIELDS,
  CANONICAL_COLUMNS,
  type CanonicalColumn,
  type ColumnIndex,
  IDENTIFIER_COLUMNS,
  RAIL_ADDRESSES,
  RAIL_DETAIL_FIELDS,
} from '../columns/columns.js';
import { parseRail, type Rail } from '../columns/rails.js';
import type { Cell, RawRow } from '../sheet/types.js';
import { validateBeneficiary } from './beneficiary.js';
import { amountCeilingProblem } from './ceiling.js';
import { damageOf } from './damage.js';
import { AMOUNT_MESSAGES, ROW_MESSAGES } from './messages.js';
import { parseAmount, parseSheetAmount, type SheetAmount, type SheetNumbers } from './money.js';
import { normaliseText } from './text.js';
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

/** The columns of each address object, in ADDRESS_FIELDS order. */
const ADDRESS_COLUMNS: Record<'recipientAddress' | 'bankAddress', readonly CanonicalColumn[]> = {
  recipientAddress: ADDRESS_FIELDS.map((field) => `recipientAddress.${field}` as const),
  bankAddress: ADDRESS_FIELDS.map((field) => `bankAddress.${field}` as const),
};

const DOT_DECIMALS: SheetNumbers = { decimalComma: false };

/** Maps one sheet row to a payout with every issue found on it. Never throws on cell content. */
export function mapRow(row: RawRow, columns: ColumnIndex, numbers: SheetNumbers = DOT_DECIMALS): PayoutRow {
  const cells = new RowCells(row.cells, positionsIn(columns));
  // row.problems (record-level findings of the reader) are the caller's to report, not ours.
  const issues: RowIssue[] = [];

  const reference = cells.text('reference') ?? '';
  if (reference === '') issues.push({ column: 'reference', message: ROW_MESSAGES.referenceRequired });
  else if (reference.length > MAX_REFERENCE_LENGTH)
    issues.push({ column: 'reference', message: ROW_MESSAGES.referenceTooLong });

  let amount: PayoutRow['amount'];
  const amountText = cells.text('amount');
  if (amountText === undefined) {
    issues.push({ column: 'amount', message: AMOUNT_MESSAGES.required });
  } else {
    // A number the file stored as one has no digit grouping to read: "10.005" has 3 decimals.
    const parsed: SheetAmount =
      cells.kind('amount') === 'number' ? parseAmount(amountText) : parseSheetAmount(amountText, numbers);
    const problem = parsed.ok ? amountCeilingProblem(parsed.minor, amountText) : parsed.message;
    if (problem !== undefined) issues.push({ column: 'amount', message: problem });
    else if (parsed.ok)
      amount = parsed.grouped
        ? { minor: parsed.minor, text: parsed.text, grouped: true }
        : { minor: parsed.minor, text: parsed.text };
  }

  // `usd` is USD; totals per currency are by this normalised code.
  const currency = cells.text('currency')?.toUpperCase();
  const typeText = cells.text('type');
  // docs/sheets.md: the rail may be written in any case; an unknown one is kept as given so that
  // validateRecipient names it.
  const rail = typeText === undefined ? undefined : parseRail(typeText);
  const type = rail ?? typeText;

  // The beneficiary's findings, then the recipient's.
  const mapped: RowIssue[] = [];
  const beneficiary = mapBeneficiary(cells, mapped);
  const recipient = mapRecipient(cells, beneficiary, currency, type, rail, mapped);

  // Damage first: it explains the service's messages that follow on the same column.
  for (const issue of cells.issues) issues.push(issue);
  for (const issue of mapped) issues.push(issue);
  const payout: PayoutRow = {
    rowNumber: row.rowNumber,
    reference,
    beneficiary,
    recipient,
    issues,
  };
  if (amount !== undefined) payout.amount = amount;
  if (currency !== undefined) payout.currency = currency;
  if (rail !== undefined) payout.rail = rail;
  return payout;
}

/** beneficiaryId → existing; integratorLevel true → integrator; beneficiary columns → new. */
function mapBeneficiary(cells: RowCells, issues: RowIssue[]): BeneficiaryRef {
  const id = cells.text('beneficiaryId');
  const integratorLevel = cells.boolean('integratorLevel');
  let namesNew = false;
  for (const column of NEW_BENEFICIARY_COLUMNS) {
    if (cells.text(column) !== undefined) {
      namesNew = true;
      break;
    }
  }

  if (integratorLevel === true && (id !== undefined || namesNew)) {
    issues.push({ column: 'integratorLevel', message: ROW_MESSAGES.integratorWithBeneficiary });
  }
  if (id !== undefined) return { kind: 'existing', id };
  if (integratorLevel === true) return { kind: 'integrator' };
  if (!namesNew) return { kind: 'missing' };

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
  return new NewBeneficiary(request);
}

/** validateRecipient's view of a row whose beneficiary the run creates first. */
const BENEFICIARY_TO_CREATE = { beneficiaryToCreate: true } as const;

/** recipientId → existing (only type and currency checked); otherwise the RecipientRequest to create. */
function mapRecipient(
  cells: RowCells,
  beneficiary: BeneficiaryRef,
  currency: string | undefined,
  type: string | undefined,
  rail: Rail | undefined,
  issues: RowIssue[],
): RecipientRef {
  const id = cells.text('recipientId');
  if (id !== undefined) {
    // The recipient's own fields are the service's business; the payout still needs a rail
    // and the rail's currency for its simulation (docs/service.md "The recipient request").
    pushRowIssues(issues, validateTypeAndCurrency(type, currency));
    return { kind: 'existing', id };
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

  // A new beneficiary's id is filled in by the run once it exists: checked as if given.
  pushRowIssues(
    issues,
    validateRecipient(request, beneficiary.kind === 'new' ? BENEFICIARY_TO_CREATE : undefined),
  );
  return new NewRecipient(request, beneficiary);
}

/**
 * The rail's own `details` (docs/service.md "Rail details"; a rail uses only its own columns). An
 * address object is there only when one of its cells is filled, so that an empty one gives
 * "<addr> must be provided". With none of the rail's cells filled, details is null, which the
 * service answers with "The field recipient.details is required".
 */
function mapDetails(cells: RowCells, rail: Rail): RecipientDetails | null {
  const details: RecipientDetails = {};
  let filled = false;
  for (const column of RAIL_DETAIL_FIELDS[rail]) {
    if (column === 'thirdPartyWithdrawal') {
      // A JSON boolean for the service (docs/service.md "Rail details"). An empty cell means
      // false; an unreadable one is reported by boolean() and left out rather than guessed.
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
    const columns = ADDRESS_COLUMNS[addr];
    let address: Address | undefined;
    for (let i = 0; i < ADDRESS_FIELDS.length; i++) {
      const value = cells.text(columns[i]!);
      if (value === undefined) continue;
      address ??= {};
      address[ADDRESS_FIELDS[i]!] = value;
    }
    if (address === undefined) continue;
    details[addr] = address;
    filled = true;
  }
  return filled ? details : null;
}

/** Where each canonical column sits in a sheet's cells (-1 when absent): one lookup table per sheet. */
type Positions = Readonly<Record<CanonicalColumn, number>>;
const positionsOf = new WeakMap<ColumnIndex, Positions>();

function positionsIn(columns: ColumnIndex): Positions {
  let positions = positionsOf.get(columns);
  if (positions === undefined) {
    const table: Partial<Record<CanonicalColumn, number>> = {};
    for (const column of CANONICAL_COLUMNS) table[column] = columns.get(column) ?? -1;
    positions = table as Positions;
    positionsOf.set(columns, positions);
  }
  return positions;
}

/**
 * The cells of one row by canonical column: normalised text (text.ts), or undefined when the column is
 * absent, the cell empty or blank. Reading an identifier column also checks it for spreadsheet
 * damage, so only the columns a row actually uses are reported; each column at most once.
 */
class RowCells {
  readonly issues: RowIssue[] = [];
  // Made on the first report: most rows have none.
  private reported: Set<CanonicalColumn> | undefined;

  constructor(
    private readonly cells: readonly Cell[],
    private readonly positions: Positions,
  ) {}

  text(column: CanonicalColumn): string | undefined {
    const index = this.positions[column];
    if (index < 0) return undefined;
    const cell = this.cells[index];
    if (cell === undefined || cell.kind === 'empty') return undefined;
    // Requests and dedupe keys see the normalised text (text.ts); results keep the cell.
    const text = normaliseText(cell.text);
    if (text === '') return undefined;
    if (identifiers.has(column)) {
      const damage = damageOf(column, text, cell.kind);
      if (damage !== undefined) this.report(column, damage);
    }
    return text;
  }

  /** What kind of value the file stored in the column's cell (`empty` when there is none). */
  kind(column: CanonicalColumn): Cell['kind'] {
    const index = this.positions[column];
    return index < 0 ? 'empty' : (this.cells[index]?.kind ?? 'empty');
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
 * Validation issues as row issues: the path names the canonical column
 * (`details.recipientAddress.city` → `recipientAddress.city`); a path that is no single column
 * (`details`, a whole address) gives none. Messages are kept word for word.
 */
function pushRowIssues(rowIssues: RowIssue[], issues: readonly ValidationIssue[]): void {
  for (const { path, message } of issues) {
    const column = path.startsWith('details.') ? path.slice('details.'.length) : path;
    rowIssues.push(canonical.has(column) ? { column, message } : { message });
  }
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
