import type { Writable } from 'node:stream';

/** What a command may touch outside itself; injected so commands are testable in-process. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The real process's streams and environment. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Writes a line to a stream. */
export function println(stream: Writable, line = ''): void {
  stream.write(`${line}\n`);
}
