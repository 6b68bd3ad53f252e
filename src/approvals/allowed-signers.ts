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

/** How the file is read where the machine matters. */
export interface AllowedSignersOptions {
  /**
   * The IANA time zone a valid-after / valid-before without `Z` is read in; the machine's own
   * (the TZ variable), as ssh-keygen reads it, unless a test names another.
   */
  readonly timeZone?: string;
}

/** Reads and parses an allowed-signers file. */
export async function readAllowedSigners(
  path: string,
  options: AllowedSignersOptions = {},
): Promise<AllowedSigners> {
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
  return parseAllowedSigners(text, path, options);
}

/** Parses the text of an allowed-signers file; `file` names it in errors. */
export function parseAllowedSigners(
  text: string,
  file: string,
  options: AllowedSignersOptions = {},
): AllowedSigners {
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
    signers.push(parseLine(trimmed, file, index + 1, options));
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

function parseLine(
  line: string,
  file: string,
  number: number,
  options: AllowedSignersOptions,
): AllowedSigner {
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
  let lineOptions: Partial<Record<OptionName, string>> = {};
  if (rest[0] !== undefined && !looksLikeKeyType(rest[0])) {
    // Every OpenSSH key's base64 starts with AAAA (the length of its type name).
    if (/^AAAA[A-Za-z0-9+/]{8}/.test(rest[0])) {
      fail(
        `expected a key type such as ssh-ed25519 before the key, found the key itself ("${rest[0].slice(0, 12)}..."): a line is "principals [options] keytype base64key [comment]", with spaces between them`,
      );
    }
    lineOptions = parseOptions(rest.shift()!, fail);
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
  const time = (option: 'valid-after' | 'valid-before'): number | undefined => {
    const value = lineOptions[option];
    return value === undefined ? undefined : timestamp(value, option, options.timeZone, fail);
  };
  const validAfter = time('valid-after');
  const validBefore = time('valid-before');
  if (validAfter !== undefined && validBefore !== undefined && validBefore <= validAfter) {
    fail('valid-before is not after valid-after');
  }
  return {
    line: number,
    principals,
    key,
    ...(lineOptions.namespaces === undefined ? {} : { namespaces: lineOptions.namespaces }),
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
 * YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, in UTC with a Z (or UTC) suffix, else in the
 * machine's local standard time (localStandardSeconds). A date that is not in the calendar
 * (20270230, a 60th second) is refused rather than rolled over into the next month or minute
 * as ssh-keygen rolls it: a mistyped expiry is fixed, not moved.
 */
function timestamp(
  value: string,
  option: string,
  timeZone: string | undefined,
  fail: (message: string) => never,
): number {
  const utc = /(?:z|utc)$/i.exec(value);
  const digits = utc ? value.slice(0, utc.index) : value;
  const match = /^([0-9]{4})([0-9]{2})([0-9]{2})(?:([0-9]{2})([0-9]{2})([0-9]{2})?)?$/.exec(digits);
  if (match === null) {
    return fail(
      `${option}="${value}" is not a time written YYYYMMDD[Z], YYYYMMDDHHMM[Z] or YYYYMMDDHHMMSS[Z]`,
    );
  }
  const fields = match.slice(1).map((part) => Number(part ?? '0')) as WallClock;
  const wall = wallClockAsUtc(fields);
  if (wall === undefined) return fail(`${option}="${value}" is not a real date and time`);
  // No zone is a day away from UTC: a wall clock a day before 1970 is before it everywhere.
  const seconds = utc || wall < -DAY_SECONDS ? wall : localStandardSeconds(wall, timeZone);
  if (seconds <= 0) return fail(`${option}="${value}" is not after 1970`);
  return seconds;
}

const DAY_SECONDS = 86_400;

/** Year, month (1 to 12), day, hour, minute, second. */
type WallClock = [number, number, number, number, number, number];

/** The wall-clock time read as UTC, in seconds; undefined when it is not in the calendar. */
function wallClockAsUtc([year, month, day, hour, minute, second]: WallClock): number | undefined {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Year 0 to 99 would be read as 1900 to 1999 by Date.UTC: set it again, whole.
  date.setUTCFullYear(year, month - 1, day);
  const read = [
    date.getUTCFullYear(),
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ];
  if (read.join(',') !== [year, month, day, hour, minute, second].join(',')) return undefined;
  return Math.floor(date.getTime() / 1000);
}

/**
 * A wall-clock time without Z as ssh-keygen reads it: parse_absolute_time zeroes its struct tm,
 * so mktime sees tm_isdst = 0 and reads the time as the zone's standard time even in summer
 * (under Europe/Berlin, "20260701" is 2026-06-30T23:00:00Z, not 22:00). Standard time is the
 * smaller of the zone's offsets on 1 January and 1 July of that year; a time outside summer
 * time keeps its own offset, which follows a zone that changed its standard offset that year.
 * JavaScript cannot see the tm_isdst flag itself, so where the zone's data calls the other season
 * the exception (Europe/Dublin, Africa/Casablanca in Ramadan) this reads an hour off
 * ssh-keygen (docs/approval.md, "The allowed-signers file").
 */
function localStandardSeconds(wall: number, timeZone: string | undefined): number {
  const year = new Date(wall * 1000).getUTCFullYear();
  const standard = Math.min(
    offsetSeconds(Date.UTC(year, 0, 1) / 1000, timeZone),
    offsetSeconds(Date.UTC(year, 6, 1) / 1000, timeZone),
  );
  const around = offsetSeconds(wall - standard, timeZone);
  return wall - Math.min(around, standard);
}

const zoneClocks = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in seconds (east positive). */
function offsetSeconds(instant: number, timeZone: string | undefined): number {
  const key = timeZone ?? '';
  let clock = zoneClocks.get(key);
  if (clock === undefined) {
    clock = new Intl.DateTimeFormat('en-US', {
      ...(timeZone === undefined ? {} : { timeZone }),
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneClocks.set(key, clock);
  }
  const part = (parts: Intl.DateTimeFormatPart[], type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((p) => p.type === type)?.value);
  const parts = clock.formatToParts(instant * 1000);
  const wall = Date.UTC(
    part(parts, 'year'),
    part(parts, 'month') - 1,
    part(parts, 'day'),
    part(parts, 'hour'),
    part(parts, 'minute'),
    part(parts, 'second'),
  );
  return wall / 1000 - instant;
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
