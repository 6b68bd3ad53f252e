/**
 * One lifecycle for every command that logs (as oclif's Command: init, run, catch, finally; or
 * npm's exit handler): the runner opens the command's log, the command does its work and says
 * how it ended (an Ending) or throws, and the runner alone ends the log, says what a person and
 * a script read, and picks the exit code. A log file that cannot be written (a full disk) is
 * handled here, one way: said after the summary, and exit 2, or 6 once anything was sent.
 * A thrown error is the log's one fatal record, and main.ts's one top-level handler prints it
 * (or the JSON error object) and gives it its code.
 */

import type { StorageError } from '../errors.js';
import { exitCodeOfError } from './exit-code.js';
import type { CliIo } from './io.js';
import { type CommandLog, type LogArgs, logSettingsOf, openCommandLog } from './logging.js';

/** What the end of a command knows once its log is closed. */
export interface After {
  /** The command's exit code, the log's failure counted. */
  exitCode: number;
  /** The log file's failure (disk full), when writing it failed. */
  logFailure?: StorageError;
}

/** How a command ended, for the runner to finish it. */
export interface Ending {
  /** The exit code of how the command ended (runExitCode's), before its log's own failure. */
  exitCode: number;
  /** Whether anything that may move money left: a log file that failed is then exit 6, else 2. */
  sent?: boolean;
  /** The record that ends the command's log (`reconcile finished`), when it has one. */
  finished?: { msg: string; fields: Record<string, unknown> };
  /** The lines a person reads at the end: text on stderr, or one `summary` record of JSON logs. */
  tell?(after: After): string[];
  /** What a script reads on stdout (`--json`), last. */
  print?(after: After): Promise<void> | void;
}

/**
 * What a command does with its open log; it throws what ends it otherwise. `atEnd` keeps a
 * cleanup for the very end, after the summary is printed (signal handlers, an embedded sandbox):
 * a second signal while the summary is written still ends the command as it should.
 */
export type Work = (log: CommandLog, atEnd: (cleanup: () => unknown) => void) => Promise<Ending>;

/**
 * Runs a command through its lifecycle and resolves to its exit code; rethrows what ended it,
 * once it is the log's fatal record (`onError` may add records after it).
 */
export function runLifecycle(
  args: LogArgs,
  io: CliIo,
  work: Work,
  onError?: (error: unknown, log: CommandLog, exitCode: number) => Promise<void>,
): Promise<number> {
  return lifecycleOf(openCommandLog(logSettingsOf(args, io), io), work, onError);
}

/** The lifecycle of a command whose log is open already (a test's, or the defaults'). */
export async function lifecycleOf(
  log: CommandLog,
  work: Work,
  onError?: (error: unknown, log: CommandLog, exitCode: number) => Promise<void>,
): Promise<number> {
  const cleanups: (() => unknown)[] = [];
  try {
    return await finish(log, await work(log, (cleanup) => cleanups.unshift(cleanup)));
  } catch (error) {
    const exitCode = log.fail(error);
    // What the command adds to its log then must never hide what ended it.
    await onError?.(error, log, exitCode).catch(() => {});
    throw error;
  } finally {
    for (const cleanup of cleanups) await cleanup();
    await log.close();
  }
}

/** Ends the log, tells the person and the script, and gives the exit code. */
async function finish(log: CommandLog, ending: Ending): Promise<number> {
  const record = () => {
    if (ending.finished) log.logger.info(ending.finished.fields, ending.finished.msg);
  };
  let after: After = { exitCode: ending.exitCode };
  if (log.jsonOnStderr) {
    // stderr holds JSON lines only: the summary is one record, before the log's last one.
    log.tell(ending.tell?.(after) ?? []);
    record();
  } else {
    // The summary goes to stderr as text: the log (a --log-file) ends first, and what failed
    // in writing it is known once it is closed, said after the summary and in the exit code.
    record();
    await log.close();
    const logFailure = log.failure();
    if (logFailure !== undefined) {
      const failed = exitCodeOfError(ending.sent ? logFailure.sent() : logFailure);
      after = { exitCode: Math.max(ending.exitCode, failed), logFailure };
    }
    const lines = ending.tell?.(after) ?? [];
    log.tell(logFailure === undefined ? lines : [...lines, `payouts: ${after.logFailure!.message}`]);
  }
  await ending.print?.(after);
  return after.exitCode;
}
