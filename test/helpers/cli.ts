import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { withTestRegister } from './register.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the payouts CLI in-process with captured streams (no TTY). A command that reads or writes
 * the register gets the test's own (made on first use), unless `exactEnv` asks for `env` as is.
 */
export async function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; exactEnv?: boolean } = {},
): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  stderr.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const code = await main(args, {
    stdout,
    stderr,
    env: usesRegister(args) && !options.exactEnv ? withTestRegister(options.env ?? {}) : (options.env ?? {}),
    cwd: options.cwd ?? process.cwd(),
  });
  return { code, stdout: out, stderr: err };
}

/** Commands that read or write the register. */
export function usesRegister(args: readonly string[]): boolean {
  return ['run', 'validate', 'reconcile', 'status', 'webhooks'].includes(args[0] ?? '');
}

/** A temporary directory removed after the callback, whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
