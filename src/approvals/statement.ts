/**
 * The approval statement: the short text an approver signs (docs/approval.md, "The statement").
 * One `field: value` a line, in a fixed order, after the line `payouts approval v1`; money as
 * decimal strings, never floats; the same input gives the same bytes. parseStatement reads one
 * back strictly: only a text approvalStatement could have written is accepted.
 */
import { formatMinor } from '../rows/money.js';
import { StatementError } from './errors.js';

/** The first line: the format and its version. */
export const STATEMENT_HEADER = 'payouts approval v1';

/** What an approver signs. */
export interface ApprovalStatement {
  /** The batch digest `validate` printed: 64 lowercase hex characters. */
  readonly digest: string;
  /** The payments service's origin (`https://host[:port]`), the register's scope. */
  readonly origin: string;
  /** The sheet's file name, without its folder. */
  readonly sheet: string;
  /** How many rows are valid. */
  readonly validRows: number;
  /** The valid rows' total per currency, in minor units (cents). */
  readonly validTotals: ReadonlyMap<string, bigint>;
  /** The day the statement was made, UTC, YYYY-MM-DD. */
  readonly day: string;
}

const DIGEST = /^[0-9a-f]{64}$/;
const CURRENCY = /^[A-Z]{3}$/;
const AMOUNT = /^(0|[1-9][0-9]*)\.[0-9]{2}$/;
const COUNT = /^(0|[1-9][0-9]*)$/;
const DAY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
/** Whether a name holds a control character or a line separator: a line break would make it two fields. */
function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return true;
  }
  return false;
}

/** The fields in the order they are written; `total XXX` lines stand between rows and day. */
const FIELDS = ['digest', 'origin', 'sheet', 'valid rows', 'day'] as const;

/** The first line of a withdrawal: the approval statement withdrawn, under this format line. */
export const REVOKED_HEADER = 'payouts approval revoked v1';

/** The withdrawal of an approval statement: the same text under the format line REVOKED_HEADER. */
export function revokedStatement(approval: string): string {
  return `${REVOKED_HEADER}${approval.slice(STATEMENT_HEADER.length)}`;
}

/** The approval statement a withdrawal names (undefined: the text is no withdrawal). */
export function withdrawnStatement(withdrawal: string): string | undefined {
  const first = withdrawal.slice(0, withdrawal.indexOf('\n'));
  return first === REVOKED_HEADER
    ? `${STATEMENT_HEADER}${withdrawal.slice(REVOKED_HEADER.length)}`
    : undefined;
}

/** The UTC day of a moment, YYYY-MM-DD: the statement's `day`. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The statement's text: byte-stable, one field a line, ending with a newline. */
export function approvalStatement(statement: ApprovalStatement): string {
  const sheet = checkSheet(statement.sheet.normalize('NFC'));
  checkDigest(statement.digest);
  checkOrigin(statement.origin);
  if (!Number.isSafeInteger(statement.validRows) || statement.validRows < 0) {
    throw new StatementError(`valid rows must be a whole number of rows, not ${statement.validRows}`);
  }
  checkDay(statement.day);
  const lines = [
    STATEMENT_HEADER,
    `digest: ${statement.digest}`,
    `origin: ${statement.origin}`,
    `sheet: ${sheet}`,
    `valid rows: ${statement.validRows}`,
  ];
  // Sorted by code point, not by locale: the same bytes on every machine.
  for (const currency of [...statement.validTotals.keys()].sort(byCodePoint)) {
    const minor = statement.validTotals.get(currency)!;
    if (!CURRENCY.test(currency))
      throw new StatementError(`"${currency}" is not a currency code (three capital letters)`);
    if (minor < 0n) throw new StatementError(`the ${currency} total is negative (${formatMinor(minor)})`);
    lines.push(`total ${currency}: ${formatMinor(minor)}`);
  }
  lines.push(`day: ${statement.day}`);
  return `${lines.join('\n')}\n`;
}

/** Reads a statement back; refuses any text approvalStatement would not have written. */
export function parseStatement(text: string): ApprovalStatement {
  if (text.includes('\r')) {
    throw new StatementError(
      'this approval statement has Windows line endings (CR LF): sign the text exactly as payouts printed it',
    );
  }
  if (!text.endsWith('\n')) {
    throw new StatementError(
      'this approval statement does not end with a line break: it is cut short or was edited',
    );
  }
  const lines = text.slice(0, -1).split('\n');
  const header = lines[0]!;
  if (header !== STATEMENT_HEADER) {
    const version = /^payouts approval (v.*)$/.exec(header);
    throw new StatementError(
      version
        ? `this approval statement is format ${version[1]}, but this payouts reads ${STATEMENT_HEADER.split(' ').pop()} (is payouts older than the one that printed it?)`
        : `this is not a payouts approval statement: its first line is not "${STATEMENT_HEADER}"`,
    );
  }
  const seen = new Map<string, string>();
  const totals = new Map<string, bigint>();
  const order: string[] = [];
  for (const [index, line] of lines.slice(1).entries()) {
    const where = `line ${index + 2}`;
    const match = /^([a-z]+(?: [A-Za-z]+)?): (.*)$/.exec(line);
    if (match === null) {
      throw new StatementError(
        line === ''
          ? `this approval statement has an empty ${where}`
          : `${where} of this approval statement is not "field: value"`,
      );
    }
    const [, field, value] = match as unknown as [string, string, string];
    const total = /^total ([A-Z]{3})$/.exec(field);
    const known = total !== null || (FIELDS as readonly string[]).includes(field);
    if (!known)
      throw new StatementError(`${where} of this approval statement has an unknown field "${field}"`);
    if (seen.has(field)) throw new StatementError(`this approval statement has the field "${field}" twice`);
    if (seen.has('day'))
      throw new StatementError(`this approval statement has text after its "day" line (${where})`);
    seen.set(field, value);
    order.push(field);
    if (total !== null) {
      if (!AMOUNT.test(value)) {
        throw new StatementError(
          `the ${field} of this approval statement is not an amount like 1234.50: "${value}"`,
        );
      }
      const [units, cents] = value.split('.') as [string, string];
      totals.set(total[1]!, BigInt(units) * 100n + BigInt(cents));
    }
  }
  for (const field of FIELDS) {
    if (!seen.has(field)) throw new StatementError(`this approval statement has no "${field}" line`);
  }
  const validRows = seen.get('valid rows')!;
  if (!COUNT.test(validRows) || !Number.isSafeInteger(Number(validRows))) {
    throw new StatementError(
      `the valid rows of this approval statement are not a whole number: "${validRows}"`,
    );
  }
  const statement: ApprovalStatement = {
    digest: seen.get('digest')!,
    origin: seen.get('origin')!,
    sheet: seen.get('sheet')!,
    validRows: Number(validRows),
    validTotals: totals,
    day: seen.get('day')!,
  };
  checkDigest(statement.digest);
  checkOrigin(statement.origin);
  checkSheet(statement.sheet);
  checkDay(statement.day);
  if (statement.sheet !== statement.sheet.normalize('NFC')) {
    throw new StatementError(
      'the sheet name of this approval statement is not in Unicode NFC form, as payouts writes it',
    );
  }
  // Every field is good on its own; what remains is their order (totals by currency, day last).
  if (approvalStatement(statement) !== text) {
    throw new StatementError(
      `the fields of this approval statement are not in payouts' order (${order.join(', ')}): sign the text exactly as payouts printed it`,
    );
  }
  return statement;
}

function checkDigest(digest: string): void {
  if (!DIGEST.test(digest)) {
    throw new StatementError(`the digest "${digest}" is not a batch digest (64 lowercase hex characters)`);
  }
}

function checkOrigin(origin: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.origin !== origin) {
    throw new StatementError(`"${origin}" is not a service origin like https://payments.example.com`);
  }
}

function checkSheet(sheet: string): string {
  if (sheet === '' || sheet.trim() !== sheet || hasControl(sheet)) {
    throw new StatementError(
      `the sheet name ${JSON.stringify(sheet)} cannot stand in an approval statement: rename the file without line breaks, control characters or spaces at its ends`,
    );
  }
  return sheet;
}

function checkDay(day: string): void {
  const match = DAY.exec(day);
  if (match === null || utcDay(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) !== day) {
    throw new StatementError(`"${day}" is not a day written YYYY-MM-DD`);
  }
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
