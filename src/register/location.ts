/**
 * Where the register lives (README "Options of `validate` and `run`", `--register`): the flag,
 * else PAYOUTS_REGISTER, else one file in the user's state directory,
 * `$XDG_STATE_HOME/payouts/register.db`, else `~/.local/state/payouts/register.db`. A
 * `postgres://` or `postgresql://` URL selects a PostgreSQL register shared by many machines;
 * anything else is a file path.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fromEnvironment } from '../environment.js';
import { RegisterError } from '../errors.js';

export const REGISTER_ENV = 'PAYOUTS_REGISTER';

/** Where a command's register location came from: said when there is no register there. */
export type RegisterSource = 'flag' | 'environment' | 'default';

/** A register's place, and how it may be shown to people (never with a password). */
export type RegisterLocation =
  | { kind: 'sqlite'; path: string; shown: string }
  | { kind: 'postgres'; url: string; shown: string };

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** The register's location text for these flags and environment: a URL as given, a path resolved against `cwd`. */
export function registerLocationText(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const given = nonBlank(flag) ?? fromEnvironment(env, REGISTER_ENV);
  if (given !== undefined) return POSTGRES_URL.test(given.trim()) ? given.trim() : path.resolve(cwd, given);
  const state = fromEnvironment(env, 'XDG_STATE_HOME');
  // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
  const base =
    state !== undefined && path.isAbsolute(state)
      ? state
      : path.join(nonBlank(env['HOME']) ?? homedir(), '.local', 'state');
  return path.join(base, 'payouts', 'register.db');
}

/** Which of the flag, the environment and the default named the register. */
export function registerSourceOf(flag: string | undefined, env: NodeJS.ProcessEnv): RegisterSource {
  if (nonBlank(flag) !== undefined) return 'flag';
  return fromEnvironment(env, REGISTER_ENV) !== undefined ? 'environment' : 'default';
}

/** How a register's source is said in a message. */
export function sourceInWords(from: RegisterSource): string {
  return from === 'flag'
    ? 'named by --register'
    : from === 'environment'
      ? `named by ${REGISTER_ENV}`
      : `the default location, as neither --register nor ${REGISTER_ENV} names one`;
}

/**
 * There is no register at `location` (a mistyped path, a volume that was not mounted, a database
 * without the payouts schema): said with where the location came from and what to do. A
 * register is made on purpose only (`payouts register init`), never by a command that found none.
 */
export function missingRegister(
  location: string,
  from: RegisterSource | undefined,
  what: string | undefined = absence(location),
): RegisterError {
  const shown = shownLocation(location);
  const source = from === undefined ? '' : ` (${sourceInWords(from)})`;
  // A URL's password is never shown: from the environment, init reads the same variable.
  const init =
    from === 'environment' || (from === 'default' && parseLocation(location).kind === 'sqlite')
      ? 'payouts register init'
      : `payouts register init ${parseLocation(location).kind === 'sqlite' ? location : shown}`;
  return new RegisterError(
    `there is no payouts register at ${shown}${source}${what ? `: ${what}` : ''}. Nothing was sent and nothing was created there. If a register should be there, check the location (a typo, a volume that is not mounted). To start a new one, create it once with: ${init}`,
    { path: shown },
  );
}

/** What is at a location that holds no register, in words. */
function absence(location: string): string {
  const where = parseLocation(location);
  if (where.kind === 'postgres') return 'the database holds no payouts schema';
  const size = sizeOf(where.path);
  if (size === 0) return 'the file there is empty';
  if (size !== undefined) return 'the SQLite file there holds no payouts schema';
  const folder = path.dirname(where.path);
  return sizeOf(folder) === undefined ? `its folder ${folder} does not exist either` : 'no such file';
}

/** The size of the file at `file`, or undefined when there is none (nor a folder on the way). */
export function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * What to say when `--register` holds a URL with a password: the command line of a process is
 * readable by every user of the machine (`ps`) and kept in shell histories.
 */
export function commandLinePasswordWarning(flag: string | undefined): string | undefined {
  if (flag === undefined || !POSTGRES_URL.test(flag.trim())) return undefined;
  if (withoutPassword(flag) === flag) return undefined;
  return `the register's password was given on the command line (--register), where other users of this machine can read it (ps) and shell histories keep it: pass the URL in ${REGISTER_ENV} instead`;
}

/** Reads a location text (a path or a PostgreSQL URL) as a RegisterLocation. */
export function parseLocation(text: string): RegisterLocation {
  if (POSTGRES_URL.test(text)) return { kind: 'postgres', url: text, shown: withoutPassword(text) };
  return { kind: 'sqlite', path: text, shown: text };
}

/** How a location is shown in output, logs and messages: a URL's password replaced. */
export function shownLocation(text: string): string {
  return parseLocation(text).shown;
}

/**
 * The URL with its password (user info and the `password` query parameter) replaced by `***`.
 * Done on the text, not through a URL parser, so that a URL that does not parse is still
 * masked: the user info ends at the last `@`, since a password may hold `# / ? @ :` or spaces
 * (masking too much of an odd URL is safe; showing part of a password is not).
 */
export function withoutPassword(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0];
  let shown = url;
  if (scheme !== undefined) {
    const rest = url.slice(scheme.length);
    const at = rest.lastIndexOf('@');
    const colon = at < 0 ? -1 : rest.slice(0, at).indexOf(':');
    if (colon >= 0) shown = `${scheme}${rest.slice(0, colon)}:***@${rest.slice(at + 1)}`;
  }
  return shown.replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** A value, or undefined where it is unset or blank. */
export function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
