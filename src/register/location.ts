/**
 * Where the register lives (PRODUCT.md `--register`): the flag, else PAYOUTS_REGISTER, else one
 * file in the user's state directory, `$XDG_STATE_HOME/payouts/register.db`, else
 * `~/.local/state/payouts/register.db`.
 */
import { homedir } from 'node:os';
import path from 'node:path';

export const REGISTER_ENV = 'PAYOUTS_REGISTER';

/** The register's path for these flags and environment, resolved against `cwd`. */
export function registerPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const given = nonBlank(flag) ?? nonBlank(env[REGISTER_ENV]);
  if (given !== undefined) return path.resolve(cwd, given);
  const state = nonBlank(env['XDG_STATE_HOME']);
  // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
  const base =
    state !== undefined && path.isAbsolute(state)
      ? state
      : path.join(nonBlank(env['HOME']) ?? homedir(), '.local', 'state');
  return path.join(base, 'payouts', 'register.db');
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
