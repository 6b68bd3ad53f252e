/**
 * Opening a register by its location (`--register`, docs/register.md "SQLite or PostgreSQL"): a
 * `postgres://` or `postgresql://` URL opens the PostgreSQL store, anything else the SQLite file.
 * Callers get the Register contract (types.ts), never a path check, SQL or a driver.
 */
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
