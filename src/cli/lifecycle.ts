/**
 * One lifecycle for every command that logs (as oclif's Command: init, run, catch, finally; or
 * npm's exit handler): the runner opens the command's log, the command does its work and says
 * how it ended (an Ending) or throws, and the runner alone ends the log, says what a person and
 * a script read, and picks the exit code. A log file that cannot be written (a full disk) is
 * handled here, one way: said after the summary, and exit 2, or 6 once anything was sent.
 * A thrown error is the log's one fatal record, and main.ts's one top-level handler prints it
 * (or the JSON error object) and gives it its code. The signals for cron of the commands that
 * ask (run, reconcile) go from here too, once, however the command ended.
 */
import { systemClock } from '../clock.js';
// Types only: validate runs through here and never loads the HTTP client (cron/http.ts).
import type { CronEnd, CronSignals } from '../cron/send.js';
import type { StorageError } from '../errors.js';
import { exitCodeOfError } from './exit-code.js';
import type { CliIo } from './io.js';
import {
  type CommandLog,
  errorJson,
  fatalMessage,
  type LogArgs,
  logSettingsOf,
  openCommandLog,
} from './logging.js';
import { firstStopAt, STOP_WITHIN_MS } from './signals.js';

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
  /** What the signals for cron say of this end: counts, amounts and the `--json` summary. */
  cron?(after: After): Omit<CronEnd, 'exitCode'>;
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
  cron?: () => CronSignals | undefined,
): Promise<number> {
  return lifecycleOf(openCommandLog(logSettingsOf(args, io), io), work, onError, cron);
}

/**
 * The lifecycle of a command whose log is open already (a test's, or the defaults'). `cron`
 * reads the command's signals for cron first: once they are known, every end sends them.
 */
export async function lifecycleOf(
  log: CommandLog,
  work: Work,
  onError?: (error: unknown, log: CommandLog, exitCode: number) => Promise<void>,
  cron?: () => CronSignals | undefined,
): Promise<number> {
  const cleanups: (() => unknown)[] = [];
  let signals: CronSignals | undefined;
  try {
    signals = cron?.();
    const ending = await work(log, (cleanup) => cleanups.unshift(cleanup));
    const sending = signals;
    // Once: an error while the end is said must not send them a second time.
    signals = undefined;
    return await finish(log, ending, sending);
  } catch (error) {
    const exitCode = log.fail(error);
    if (signals !== undefined) await sendSignals(signals, log, errorEnd(signals.command, error, exitCode));
    // What the command adds to its log then must never hide what ended it.
    await onError?.(error, log, exitCode).catch(() => {});
    throw error;
  } finally {
    for (const cleanup of cleanups) await cleanup();
    await log.close();
  }
}

/**
 * Ends the log, tells the person and the script, and gives the exit code. The signals for cron
 * go first, while the log is open for their warnings (and before its last record); they know
 * the exit code as the command gave it (a --log-file that fails as it closes is said after).
 */
async function finish(log: CommandLog, ending: Ending, signals?: CronSignals): Promise<number> {
  const record = () => {
    if (ending.finished) log.logger.info(ending.finished.fields, ending.finished.msg);
  };
  let after: After = { exitCode: ending.exitCode };
  const cron = ending.cron?.(after);
  if (cron !== undefined && signals !== undefined)
    await sendSignals(signals, log, { ...cron, exitCode: ending.exitCode });
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

/** What a stopped command keeps of its 10 s for after the signals: the summary, the log, the exit. */
const AFTER_SIGNALS_MS = 1_000;

/**
 * Sends the signals for cron within their own deadline (cron/send.ts), or after a stop signal
 * within what is left of the 10 s a stopped command has to end (README "Exit codes", 5), if
 * that is less. They never throw.
 */
async function sendSignals(signals: CronSignals, log: CommandLog, end: CronEnd): Promise<void> {
  const stoppedAt = firstStopAt();
  const leftMs =
    stoppedAt === undefined ? undefined : stoppedAt + STOP_WITHIN_MS - AFTER_SIGNALS_MS - systemClock.now();
  await signals.send(end, log.logger, leftMs).catch(() => {});
}

/** The end of a command that threw: its code, its message, and the object `--json` prints for it. */
function errorEnd(command: string, error: unknown, exitCode: number): CronEnd {
  return {
    exitCode,
    error: fatalMessage(error),
    writeSummary: async (out, extra) => {
      out.write(`${JSON.stringify({ ...errorJson(command, error, exitCode), ...extra })}\n`);
    },
  };
}
