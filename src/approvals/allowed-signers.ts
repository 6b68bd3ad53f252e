/**
 * The allowed-signers file: who a key belongs to (OpenSSH's format, `man ssh-keygen`, ALLOWED
 * SIGNERS, as git uses for signed commits). A line is `principals [options] keytype base64key
 * [comment]`; the options payouts reads are `namespaces="..."`, `valid-after="..."` and
 * `valid-before="..."`. Read as ssh-keygen reads it, and stricter where a loose reading could
 * let the wrong person count: principal patterns and `cert-authority` are refused by name
 * (docs/approval.md, "The allowed-signers file"). Errors name the file and the line.
 */
import { readFile } from 'node:fs/promises';
import { errnoInWords, errnoOf } from '../errors.js';
import { AllowedSignersError, SignatureError } from './errors.js';
import { parsePublicKeyText, type SshPublicKey } from './keys.js';

/** One line of the file. */
export interface AllowedSigner {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly principals: readonly string[];
  /** The namespaces pattern-list as written, when the line limits the key to some. */
  readonly namespaces?: string;
  /** Seconds since the epoch: the key is valid at or after this moment. */
  readonly validAfter?: number;
  /** Seconds since the epoch: the key is valid at or before this moment. */
  readonly validBefore?: number;
  readonly key: SshPublicKey;
}

/** The whole file. */
export interface AllowedSigners {
  readonly file: string;
  readonly signers: readonly AllowedSigner[];
}

/** Why a listed key may not sign now: the line limits its namespaces or its time. */
export type SignerRefusal =
  | { reason: 'namespace'; message: string }
  | { reason: 'not-yet-valid'; message: string }
  | { reason: 'expired'; message: string };

const OPTION_NAMES = ['namespaces', 'valid-after', 'valid-before'] as const;
type OptionName = (typeof OPTION_NAMES)[number];

/** Reads and parses an allowed-signers file. */
export async function readAllowedSigners(path: string): Promise<AllowedSigners> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    const code = errnoOf(cause);
    throw new AllowedSignersError(
      path,
      undefined,
      `cannot read the allowed-signers file: ${code === undefined ? String(cause) : errnoInWords(code)}`,
      { cause },
    );
  }
  return parseAllowedSigners(text, path);
}

/** Parses the text of an allowed-signers file; `file` names it in errors. */
export function parseAllowedSigners(text: string, file: string): AllowedSigners {
  if (text.startsWith('\ufeff')) {
    throw new AllowedSignersError(
      file,
      1,
      'the file starts with a byte-order mark, which ssh-keygen does not read: save it as plain UTF-8',
    );
  }
  const signers: AllowedSigner[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    signers.push(parseLine(trimmed, file, index + 1));
  }
  if (signers.length === 0) {
    throw new AllowedSignersError(
      file,
      undefined,
      'the allowed-signers file lists no key: add a line "principal keytype key" per approver',
    );
  }
  return { file, signers };
}

/** The lines that list this key (the same public key blob). */
export function linesForKey(allowed: AllowedSigners, key: SshPublicKey): AllowedSigner[] {
  return allowed.signers.filter((signer) => signer.key.blob.equals(key.blob));
}

/** Every principal the file names, in the order it first names them. */
export function principalsOf(allowed: AllowedSigners): string[] {
  return [...new Set(allowed.signers.flatMap((signer) => signer.principals))];
}

/**
 * Whether a listed key may sign in `namespace` at `nowMs`, as ssh-keygen -Y verify decides
 * (valid at valid-after and at valid-before, to the second); undefined when it may.
 */
export function signerRefusal(
  signer: AllowedSigner,
  namespace: string,
  nowMs: number,
  file: string,
): SignerRefusal | undefined {
  const where = `${file}:${signer.line}`;
  if (signer.namespaces !== undefined && !matchPatternList(namespace, signer.namespaces)) {
    return {
      reason: 'namespace',
      message: `${where} does not allow this key to sign "${namespace}" (namespaces="${signer.namespaces}")`,
    };
  }
  const now = Math.floor(nowMs / 1000);
  if (signer.validAfter !== undefined && now < signer.validAfter) {
    return {
      reason: 'not-yet-valid',
      message: `${where}: the key is not valid before ${isoSeconds(signer.validAfter)} (valid-after)`,
    };
  }
  if (signer.validBefore !== undefined && now > signer.validBefore) {
    return {
      reason: 'expired',
      message: `${where}: the key expired at ${isoSeconds(signer.validBefore)} (valid-before)`,
    };
  }
  return undefined;
}

/**
 * OpenSSH's pattern-list match (match.c match_pattern_list): comma-separated patterns with `*`
 * and `?`; a matching `!pattern` refuses whatever else matches. Case-sensitive.
 */
export function matchPatternList(text: string, list: string): boolean {
  let positive = false;
  for (const item of list.split(',')) {
    const negated = item.startsWith('!');
    const pattern = negated ? item.slice(1) : item;
    if (!matchPattern(text, pattern)) continue;
    if (negated) return false;
    positive = true;
  }
  return positive;
}

function matchPattern(text: string, pattern: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(text);
}

function parseLine(line: string, file: string, number: number): AllowedSigner {
  const fail = (message: string): never => {
    throw new AllowedSignersError(file, number, message);
  };
  const tokens = tokenize(line);
  if (tokens === undefined) return fail('a double quote is not closed');
  const [principalsField, ...rest] = tokens;
  // ssh-keygen reads a principals field in double quotes as the text inside them.
  const quoted = /^"(.*)"$/.exec(principalsField!);
  const principals = (quoted ? quoted[1]! : principalsField!).split(',');
  for (const principal of principals) {
    if (principal === '') fail('an empty principal (two commas, or a comma at an end, in the principals)');
    if (/[*?!]/.test(principal)) {
      fail(
        `principal patterns are not accepted ("${principal}"): list each approver by name, so that no pattern counts a stranger`,
      );
    }
  }
  // A key type joined to the principals (`alice@corp,ssh-ed25519 AAAA...`) leaves the key where
  // options or the key type belong: said as the mistake it is, with the form of a line.
  const joined = principals.find(looksLikeKeyType);
  if (joined !== undefined) {
    fail(
      `the key type ${joined} is joined to the principals by a comma: a line is "principals [options] keytype base64key [comment]", with spaces between them`,
    );
  }
  let options: Partial<Record<OptionName, string>> = {};
  if (rest[0] !== undefined && !looksLikeKeyType(rest[0])) {
    // Every OpenSSH key's base64 starts with AAAA (the length of its type name).
    if (/^AAAA[A-Za-z0-9+/]{8}/.test(rest[0])) {
      fail(
        `expected a key type such as ssh-ed25519 before the key, found the key itself ("${rest[0].slice(0, 12)}..."): a line is "principals [options] keytype base64key [comment]", with spaces between them`,
      );
    }
    options = parseOptions(rest.shift()!, fail);
  }
  const [type, base64] = rest;
  if (type === undefined) return fail('no key: a line is "principals [options] keytype base64key [comment]"');
  if (base64 === undefined) return fail(`no key after the key type ${type}`);
  let key: SshPublicKey;
  try {
    key = parsePublicKeyText(type, base64, 'the key');
  } catch (error) {
    if (error instanceof SignatureError) return fail(error.message);
    throw error;
  }
  const validAfter =
    options['valid-after'] === undefined ? undefined : timestamp(options['valid-after'], 'valid-after', fail);
  const validBefore =
    options['valid-before'] === undefined
      ? undefined
      : timestamp(options['valid-before'], 'valid-before', fail);
  if (validAfter !== undefined && validBefore !== undefined && validBefore <= validAfter) {
    fail('valid-before is not after valid-after');
  }
  return {
    line: number,
    principals,
    key,
    ...(options.namespaces === undefined ? {} : { namespaces: options.namespaces }),
    ...(validAfter === undefined ? {} : { validAfter }),
    ...(validBefore === undefined ? {} : { validBefore }),
  };
}

/** Splits on spaces and tabs outside double quotes; undefined when a quote is left open. */
function tokenize(line: string): string[] | undefined {
  const tokens: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i]!;
    if (quoted && char === '\\' && line[i + 1] === '"') {
      current += '\\"';
      i += 1;
    } else if (char === '"') {
      quoted = !quoted;
      current += char;
    } else if (!quoted && (char === ' ' || char === '\t')) {
      if (current !== '') tokens.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (quoted) return undefined;
  if (current !== '') tokens.push(current);
  return tokens;
}

function looksLikeKeyType(token: string): boolean {
  return !token.includes('=') && /^(ssh-|ecdsa-|sk-|webauthn-|rsa-)/.test(token);
}

/** The options field: comma-separated, each `name="value"`; names are case-insensitive. */
function parseOptions(field: string, fail: (message: string) => never): Partial<Record<OptionName, string>> {
  const options: Partial<Record<OptionName, string>> = {};
  let rest = field;
  while (rest !== '') {
    const name = /^[A-Za-z-]+/.exec(rest)?.[0] ?? '';
    const lower = name.toLowerCase();
    if (lower === 'cert-authority' && (rest.length === name.length || rest[name.length] === ',')) {
      fail(
        "cert-authority is not supported: list each approver's own key instead of a certificate authority",
      );
    }
    if (!(OPTION_NAMES as readonly string[]).includes(lower)) {
      fail(
        `unknown option "${name || rest.slice(0, 20)}" (payouts reads namespaces, valid-after and valid-before)`,
      );
    }
    if (rest[name.length] !== '=') fail(`the option ${lower} needs a value: ${lower}="..."`);
    if (rest[name.length + 1] !== '"') {
      fail(`the value of ${lower} must be in double quotes, as ssh-keygen reads it: ${lower}="..."`);
    }
    let value = '';
    let i = name.length + 2;
    for (; i < rest.length && rest[i] !== '"'; i += 1) {
      if (rest[i] === '\\' && rest[i + 1] === '"') i += 1;
      value += rest[i];
    }
    if (i >= rest.length) fail(`the value of ${lower} has no closing double quote`);
    const option = lower as OptionName;
    if (options[option] !== undefined) fail(`the option ${option} is given twice`);
    options[option] = value;
    rest = rest.slice(i + 1);
    if (rest === '') break;
    if (rest[0] !== ',') fail(`options are separated by commas, without spaces (after ${option})`);
    rest = rest.slice(1);
    if (rest === '') fail('the options end with a comma');
  }
  if (options.namespaces === '') fail('namespaces="" allows no namespace at all');
  return options;
}

/**
 * A valid-after / valid-before time as ssh-keygen reads it (misc.c parse_absolute_time):
 * YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, in the machine's time zone, or UTC with a Z (or
 * UTC) suffix. A date that is not in the calendar is refused rather than rolled over.
 */
function timestamp(value: string, option: string, fail: (message: string) => never): number {
  const utc = /(?:z|utc)$/i.exec(value);
  const digits = utc ? value.slice(0, utc.index) : value;
  const match = /^([0-9]{4})([0-9]{2})([0-9]{2})(?:([0-9]{2})([0-9]{2})([0-9]{2})?)?$/.exec(digits);
  if (match === null) {
    return fail(
      `${option}="${value}" is not a time written YYYYMMDD[Z], YYYYMMDDHHMM[Z] or YYYYMMDDHHMMSS[Z]`,
    );
  }
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? '0')) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = utc
    ? new Date(Date.UTC(year, month - 1, day, hour, minute, second))
    : new Date(year, month - 1, day, hour, minute, second);
  // Year 0 to 99 would be read as 1900 to 1999 by Date: set it again, whole.
  if (utc) date.setUTCFullYear(year, month - 1, day);
  else date.setFullYear(year, month - 1, day);
  const parts = utc
    ? [
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        date.getUTCHours(),
        date.getUTCMinutes(),
        date.getUTCSeconds(),
      ]
    : [
        date.getFullYear(),
        date.getMonth() + 1,
        date.getDate(),
        date.getHours(),
        date.getMinutes(),
        date.getSeconds(),
      ];
  if (parts.join(',') !== [year, month, day, hour, minute, second].join(',')) {
    return fail(`${option}="${value}" is not a real date and time`);
  }
  const seconds = Math.floor(date.getTime() / 1000);
  if (seconds <= 0) return fail(`${option}="${value}" is not after 1970`);
  return seconds;
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
