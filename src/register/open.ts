/**
 * Opening a register by its location (`--register`, docs/register.md "SQLite or PostgreSQL"): a
 * `postgres://` or `postgresql://` URL opens the PostgreSQL store, anything else the SQLite file.
 * Callers get the Register contract (types.ts), never a path check, SQL or a driver.
 */
import { parseLocation } from './location.js';
import type { OpenOptions, Register } from './types.js';

export type { OpenOptions } from './types.js';

/** Opens (creating when allowed) the register at `location`. Throws RegisterError, never a driver error. */
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
  const { existsSync } = await import('node:fs');
  if (!existsSync(where.path)) return undefined;
  const { openSqliteRegisterWaiting } = await import('./sqlite.js');
  return openSqliteRegisterWaiting(where.path, { ...options, readonly: true });
}
