/**
 * Every test's own register (`--register`, docs/register.md): commands that read or write one get
 * PAYOUTS_REGISTER pointing into a temporary directory removed when the test ends, so no test
 * touches the user's state directory or sees another test's payouts. The register is created
 * there on purpose, as `payouts register init` would: no command creates one it did not find.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { createSqliteRegister } from '../../src/register/sqlite.js';

/** Creates an empty SQLite register at `file` (its folder too), as `payouts register init` does. */
export function initTestRegister(file: string): string {
  createSqliteRegister(file);
  return file;
}

let current: string | undefined;

/** The register of the running test (made, empty, on first use). */
export function testRegisterPath(): string {
  if (current === undefined) {
    const dir = mkdtempSync(path.join(tmpdir(), 'payouts-register-'));
    current = initTestRegister(path.join(dir, 'register.db'));
    onTestFinished(() => {
      rmSync(dir, { recursive: true, force: true });
      current = undefined;
    });
  }
  return current;
}

/** `env` with the test's register, unless it names one already. */
export function withTestRegister(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env['PAYOUTS_REGISTER'] !== undefined ? env : { ...env, PAYOUTS_REGISTER: testRegisterPath() };
}
