/**
 * The approval policy a register holds for a service (docs/approval.md "The policy"): who may
 * sign (allowed-signers lines), groups of them, the rules a batch must meet and who must sign a
 * change of the policy. Read strictly, as sudo reads sudoers: a policy that does not parse, names
 * something that does not exist, or could never be met is refused whole, naming the place (a JSON
 * pointer) and what was expected there, so that a typo never lowers the guard.
 */
import { createHash } from 'node:crypto';
import { CURRENCIES, type Currency, RAILS, type Rail } from '../columns/rails.js';
import { SIGNALS, type Signal } from '../rows/signals.js';
import { type AllowedSigners, parseAllowedSigners, principalsOf } from './allowed-signers.js';
import { AllowedSignersError, PolicyError } from './errors.js';

/** When a rule applies: every condition given holds (none: always). */
export interface PolicyConditions {
  /** The batch's total to send in one of these currencies is over its amount (minor units). */
  readonly sendTotalOver?: ReadonlyMap<Currency, bigint>;
  /** A row to send is over the amount of its currency (minor units). */
  readonly rowOver?: ReadonlyMap<Currency, bigint>;
  /** A row to send carries one of these warnings. */
  readonly warnings?: readonly Signal[];
  /** A row to send is on one of these rails. */
  readonly rails?: readonly Rail[];
}

/** A rule: when it applies, `require` distinct principals of the group `from` must have approved. */
export interface PolicyRule {
  readonly name: string;
  readonly when: PolicyConditions;
  readonly require: number;
  readonly from: string;
}

/** A policy as payouts reads it. */
export interface ApprovalPolicy {
  /** Its signers, read as an allowed-signers file. */
  readonly signers: AllowedSigners;
  readonly groups: ReadonlyMap<string, readonly string[]>;
  readonly rules: readonly PolicyRule[];
  /** Who must sign a change of the policy, and how many of them. */
  readonly admins: { readonly require: number; readonly from: string };
  /** Its canonical JSON (canonicalJson): what its digest and the register keep. */
  readonly canonical: string;
  /** SHA-256 (hex) of the canonical JSON: what a policy statement names. */
  readonly digest: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TOP_KEYS = ['signers', 'groups', 'rules', 'admins'] as const;
const RULE_KEYS = ['name', 'when', 'require', 'from'] as const;
const CONDITION_KEYS = ['sendTotalOver', 'rowOver', 'warnings', 'rails'] as const;
const ADMIN_KEYS = ['require', 'from'] as const;
/** An amount in a policy: a decimal string with at most two decimals, never a JSON number. */
const AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$/;

/** Parses and checks a policy's text; `file` names it in errors (PolicyError). */
export function parsePolicy(text: string, file: string): ApprovalPolicy {
  const value = parseJson(text, file);
  const fail = (pointer: string, message: string): never => {
    throw new PolicyError(file, pointer, message);
  };
  const top = objectAt(value, '', fail);
  onlyKeys(top, TOP_KEYS, '', fail);
  for (const key of TOP_KEYS) if (!(key in top)) fail('', `expected the key "${key}"`);
  const signers = signersAt(top['signers']!, file, fail);
  const known = new Set(principalsOf(signers));
  const groups = groupsAt(top['groups']!, known, fail);
  const rules = rulesAt(top['rules']!, groups, fail);
  const admins = adminsAt(top['admins']!, groups, fail);
  const canonical = canonicalJson(value);
  return { signers, groups, rules, admins, canonical, digest: policyDigest(canonical) };
}

/** JSON with every object's keys sorted by code point and no white space: one text per policy. */
export function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 (hex) of a policy's canonical JSON. */
export function policyDigest(canonical: string): string {
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

function parseJson(text: string, file: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    throw new PolicyError(file, '', `not JSON (${jsonPlace(text)}): expected one JSON object`, {
      cause: error,
    });
  }
}

/** A JSON string: no raw control character inside, escapes as the grammar has them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids these characters unescaped in a string, which is what is matched
const JSON_STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/**
 * Where a text stops being JSON, as line and column: JSON.parse says so only in some Node versions,
 * so the text is walked here (a reader of the grammar that only finds the first wrong character).
 */
function jsonPlace(text: string): string {
  const at = firstNonJson(text);
  if (at >= text.length) return text.trim() === '' ? 'the file is empty' : 'it ends too soon';
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, column ${at - before.lastIndexOf('\n')}`;
}

/** The offset of the first character that cannot continue a JSON text (its length: it ends too soon). */
function firstNonJson(text: string): number {
  let i = 0;
  const space = () => {
    while (/[ \t\r\n]/.test(text[i] ?? '')) i += 1;
  };
  const token = (pattern: RegExp) => {
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (match === null) throw i;
    i += match[0].length;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === undefined) throw i;
    if (c === '{')
      members('}', () => {
        space();
        token(JSON_STRING);
        space();
        token(/:/y);
        value();
      });
    else if (c === '[') members(']', value);
    else if (c === '"') token(JSON_STRING);
    else token(/-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y);
  };
  const members = (close: string, member: () => void) => {
    i += 1;
    space();
    if (text[i] === close) {
      i += 1;
      return;
    }
    for (;;) {
      member();
      space();
      if (text[i] === close) {
        i += 1;
        return;
      }
      token(/,/y);
    }
  };
  try {
    value();
    space();
    return i;
  } catch (at) {
    return at as number;
  }
}

type Fail = (pointer: string, message: string) => never;

function kindOf(value: Json | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function objectAt(value: Json | undefined, pointer: string, fail: Fail): { [key: string]: Json } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail(pointer, `expected an object, found ${kindOf(value)}`);
  return value;
}

function arrayAt(value: Json | undefined, pointer: string, fail: Fail): Json[] {
  if (!Array.isArray(value)) return fail(pointer, `expected an array, found ${kindOf(value)}`);
  if (value.length === 0) return fail(pointer, 'expected at least one entry, found an empty array');
  return value;
}

function stringAt(value: Json | undefined, pointer: string, fail: Fail): string {
  if (typeof value !== 'string' || value.trim() === '')
    return fail(pointer, `expected a non-empty string, found ${kindOf(value)}`);
  return value;
}

function countAt(value: Json | undefined, pointer: string, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    return fail(pointer, `expected a whole number of signatures, 1 or more, found ${kindOf(value)}`);
  return value;
}

function onlyKeys(object: { [key: string]: Json }, known: readonly string[], pointer: string, fail: Fail) {
  for (const key of Object.keys(object))
    if (!known.includes(key))
      fail(`${pointer}/${pointerKey(key)}`, `unknown key "${key}": expected one of ${known.join(', ')}`);
}

/** A key as a JSON pointer writes it (RFC 6901). */
function pointerKey(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function signersAt(value: Json, file: string, fail: Fail): AllowedSigners {
  const lines = arrayAt(value, '/signers', fail).map((line, i) => {
    const text = stringAt(line, `/signers/${i}`, fail);
    if (/[\r\n]/.test(text)) fail(`/signers/${i}`, 'expected one allowed-signers line, found a line break');
    try {
      parseAllowedSigners(text, file);
    } catch (error) {
      if (!(error instanceof AllowedSignersError)) throw error;
      const message = error.message.replace(/^.*?:\d+: /, '');
      fail(
        `/signers/${i}`,
        `expected an allowed-signers line "principals [options] keytype key": ${message}`,
      );
    }
    return text;
  });
  // Read together, so that each signer's line number is its place in the list (one-based).
  return parseAllowedSigners(lines.join('\n'), file);
}

function groupsAt(value: Json, known: ReadonlySet<string>, fail: Fail): Map<string, readonly string[]> {
  const object = objectAt(value, '/groups', fail);
  if (Object.keys(object).length === 0) fail('/groups', 'expected at least one group, found none');
  const groups = new Map<string, readonly string[]>();
  for (const [name, members] of Object.entries(object)) {
    const pointer = `/groups/${pointerKey(name)}`;
    const list = arrayAt(members, pointer, fail).map((member, i) => {
      const principal = stringAt(member, `${pointer}/${i}`, fail);
      if (!known.has(principal))
        fail(
          `${pointer}/${i}`,
          `unknown principal "${principal}": expected one that a line of "signers" names`,
        );
      return principal;
    });
    const twice = list.find((principal, i) => list.indexOf(principal) !== i);
    if (twice !== undefined) fail(pointer, `the principal "${twice}" is listed twice`);
    groups.set(name, list);
  }
  return groups;
}

function groupAt(
  value: Json | undefined,
  pointer: string,
  groups: ReadonlyMap<string, readonly string[]>,
  fail: Fail,
) {
  const name = stringAt(value, pointer, fail);
  if (!groups.has(name))
    fail(pointer, `unknown group "${name}": expected one of ${[...groups.keys()].join(', ')}`);
  return name;
}

/** `require` of a group: a whole number no larger than the group, or the rule could never be met. */
function requireOf(
  object: { [key: string]: Json },
  pointer: string,
  group: string,
  groups: ReadonlyMap<string, readonly string[]>,
  fail: Fail,
): number {
  const require = countAt(object['require'], `${pointer}/require`, fail);
  const size = groups.get(group)!.length;
  if (require > size)
    fail(
      `${pointer}/require`,
      `${require} signatures can never be met by the group "${group}" of ${size}: expected at most ${size}`,
    );
  return require;
}

function rulesAt(value: Json, groups: ReadonlyMap<string, readonly string[]>, fail: Fail): PolicyRule[] {
  const names = new Set<string>();
  return arrayAt(value, '/rules', fail).map((item, i) => {
    const pointer = `/rules/${i}`;
    const rule = objectAt(item, pointer, fail);
    onlyKeys(rule, RULE_KEYS, pointer, fail);
    const name = stringAt(rule['name'], `${pointer}/name`, fail);
    if (names.has(name))
      fail(`${pointer}/name`, `the rule name "${name}" is used twice: expected each rule named once`);
    names.add(name);
    const from = groupAt(rule['from'], `${pointer}/from`, groups, fail);
    const require = requireOf(rule, pointer, from, groups, fail);
    const when = rule['when'] === undefined ? {} : conditionsAt(rule['when'], `${pointer}/when`, fail);
    return { name, when, require, from };
  });
}

function conditionsAt(value: Json, pointer: string, fail: Fail): PolicyConditions {
  const object = objectAt(value, pointer, fail);
  onlyKeys(object, CONDITION_KEYS, pointer, fail);
  if (Object.keys(object).length === 0)
    fail(pointer, `expected at least one condition (${CONDITION_KEYS.join(', ')}), or no "when" for always`);
  const conditions: {
    sendTotalOver?: Map<Currency, bigint>;
    rowOver?: Map<Currency, bigint>;
    warnings?: Signal[];
    rails?: Rail[];
  } = {};
  if ('sendTotalOver' in object)
    conditions.sendTotalOver = amountsAt(object['sendTotalOver']!, `${pointer}/sendTotalOver`, fail);
  if ('rowOver' in object) conditions.rowOver = amountsAt(object['rowOver']!, `${pointer}/rowOver`, fail);
  if ('warnings' in object)
    conditions.warnings = namesAt(object['warnings']!, `${pointer}/warnings`, SIGNALS, 'warning', fail);
  if ('rails' in object)
    conditions.rails = namesAt(object['rails']!, `${pointer}/rails`, RAILS, 'rail', fail);
  return conditions;
}

function amountsAt(value: Json, pointer: string, fail: Fail): Map<Currency, bigint> {
  const object = objectAt(value, pointer, fail);
  if (Object.keys(object).length === 0) fail(pointer, 'expected at least one currency with its amount');
  const amounts = new Map<Currency, bigint>();
  for (const [currency, amount] of Object.entries(object)) {
    const at = `${pointer}/${pointerKey(currency)}`;
    if (!(CURRENCIES as readonly string[]).includes(currency))
      fail(at, `unknown currency "${currency}": expected one of ${CURRENCIES.join(', ')}`);
    if (typeof amount !== 'string' || !AMOUNT.test(amount))
      fail(
        at,
        `expected an amount as a decimal string with at most two decimals, such as "50000.00", found ${kindOf(amount)}`,
      );
    const [units, decimals = ''] = (amount as string).split('.');
    amounts.set(currency as Currency, BigInt(units!) * 100n + BigInt(decimals.padEnd(2, '0')));
  }
  return amounts;
}

function namesAt<T extends string>(
  value: Json,
  pointer: string,
  known: readonly T[],
  what: string,
  fail: Fail,
): T[] {
  return arrayAt(value, pointer, fail).map((item, i) => {
    const name = stringAt(item, `${pointer}/${i}`, fail);
    if (!(known as readonly string[]).includes(name))
      fail(`${pointer}/${i}`, `unknown ${what} "${name}": expected one of ${known.join(', ')}`);
    return name as T;
  });
}

function adminsAt(value: Json, groups: ReadonlyMap<string, readonly string[]>, fail: Fail) {
  const admins = objectAt(value, '/admins', fail);
  onlyKeys(admins, ADMIN_KEYS, '/admins', fail);
  const from = groupAt(admins['from'], '/admins/from', groups, fail);
  return { require: requireOf(admins, '/admins', from, groups, fail), from };
}
