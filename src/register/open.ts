/**
 * Opening a register by its location (`--register`, docs/register.md "SQLite or PostgreSQL"): a
 * `postgres://` or `postgresql://` URL opens the PostgreSQL store, anything else the SQLite file.
 * Callers get the Register contract (types.ts), never a path check, SQL or a driver.
 */
import { InterruptedError } from '../errors.js';
import { missingRegister, parseLocation, type RegisterSource, sizeOf } from './location.js';
import type { OpenOptions, Register } from './types.js';

export type { OpenOptions } from './types.js';

/**
 * Opens the register at `location`, creating it only with `create`: a missing one is a
 * RegisterError (exit 2) naming the location and where it came from. Throws RegisterError,
 * never a driver error.
 */
export async function openRegister(location: string, options: OpenOptions = {}): Promise<Register> {
  const where = parseLocation(location);
  if (where.kind === 'postgres') {
    // Loaded only for a PostgreSQL register: a person with a file register never loads pg.
    const { openPostgresRegister } = await import('./postgres.js');
    return openPostgresRegister(where.url, options);
  }
  const { openSqliteRegisterWaiting } = await import('./sqlite.js');
  return openSqliteRegisterWaiting(where.path, options);
}

/**
 * The register at `location` opened read-only, or undefined when there is none yet (no run has
 * written one): a missing register knows nothing, which is no error.
 */
export async function openExistingRegister(
  location: string,
  options: Omit<OpenOptions, 'readonly'> = {},
): Promise<Register | undefined> {
  const where = parseLocation(location);
  if (where.kind === 'postgres') {
    const { openPostgresRegister } = await import('./postgres.js');
    return openPostgresRegister(where.url, { ...options, readonly: true, missingOk: true });
  }
  // An empty file is what a register's creation leaves when it was cut short: no register yet.
  if (!sizeOf(where.path)) return undefined;
  const { openSqliteRegisterWaiting } = await import('./sqlite.js');
  return openSqliteRegisterWaiting(where.path, { ...options, readonly: true });
}

/**
 * The register at `location` opened read-only; a missing one is a RegisterError naming the
 * location and where it came from (`from`), as for openRegister.
 */
export async function openNamedRegister(
  location: string,
  from: RegisterSource | undefined,
  options: Omit<OpenOptions, 'readonly'> = {},
): Promise<Register> {
  const register = await openExistingRegister(location, options);
  if (register === undefined) throw missingRegister(location, from);
  return register;
}

/**
 * `payouts register init`: creates the register at `location` (a SQLite file with its folder,
 * private to its user; the schema in a PostgreSQL database), or finds one there already and
 * changes nothing. Resolves to whether it was created.
 */
export async function initRegister(location: string, options: Omit<OpenOptions, 'readonly' | 'create'> = {}) {
  const existing = await openExistingRegister(location, options);
  if (existing !== undefined) {
    await existing.close();
    return { created: false };
  }
  const where = parseLocation(location);
  if (where.kind === 'sqlite') {
    const { createSqliteRegister } = await import('./sqlite.js');
    createSqliteRegister(where.path);
  } else {
    await (await openRegister(location, { ...options, create: true })).close();
  }
  return { created: true };
}

export interface UntilStoppedOptions {
  from?: RegisterSource | undefined;
  /** Told once of something a person should know about the connection. */
  warn: (message: string) => void;
  /** Told once per outage of the register, in words, when it begins. */
  onOutage: (words: string) => void;
  /** Aborted when the stop's grace is over: register operations end at once. */
  abandon: AbortSignal;
  /** Resolves when the server is stopped: the wait to open the register ends then. */
  stopped: Promise<void>;
}

/**
 * The register at `location` as a server opens its store (`webhooks listen`): waited for while
 * another process holds it locked, for as long as the server is not stopped, and waited through
 * an outage for ever after; or why it was stopped before it opened.
 */
export async function openRegisterUntilStopped(
  location: string,
  options: UntilStoppedOptions,
): Promise<{ register: Register } | { stopped: string }> {
  const opening = new AbortController();
  void options.stopped.then(() => opening.abort());
  try {
    const register = await openRegister(location, {
      ...(options.from ? { from: options.from } : {}),
      warn: options.warn,
      abandon: options.abandon,
      keepTrying: true,
      stop: opening.signal,
      onOutage: options.onOutage,
    });
    return { register };
  } catch (error) {
    if (error instanceof InterruptedError && opening.signal.aborted) return { stopped: error.message };
    throw error;
  }
}
