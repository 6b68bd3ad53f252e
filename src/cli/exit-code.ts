/**
 * The exit code of every command, decided in one place from how it ended (README "Exit codes").
 * Exit 2 means nothing was sent; once anything was sent the code is 0, 1, 5 or 6, whatever
 * ended the run, so a cron wrapper that retries on 6 and alerts on 1 does the right thing.
 */
import { serviceFailureOf } from '../api/failure.js';
import { EXIT, EXIT_INTERNAL, PayoutsError, StorageError, thrownAfterSending } from '../errors.js';

export { EXIT_INTERNAL };

/** How a command ended, as far as its exit code is concerned. */
export interface Ending {
  /** Whether any request that may move money left (a transaction request, or one before it for a row). */
  sent: boolean;
  /** An error that ended the run, if one did. */
  error?: unknown;
  /** Stopped by SIGINT, SIGTERM or SIGHUP. */
  interrupted?: boolean;
  /** The service stayed unreachable or unavailable past --max-outage. */
  unavailable?: boolean;
  /** A log, events or results file failed after sending began (the run itself went on). */
  storageFailed?: boolean;
  /** Every row valid, submitted, completed or skipped (reconcile: nothing failed or unknown). */
  rowsOk?: boolean;
}

/** The ending of a run (the same facts). */
export type RunHappening = Ending;

/** The exit code of an error that ended a command (sent or not, as `afterSending` noted). */
export function exitCodeOfError(error: unknown): number {
  const sent = thrownAfterSending(error);
  return runExitCode({ sent, error });
}

/** The exit code for how a command ended: the one function that decides it. */
export function runExitCode(happened: Ending): number {
  const { error, sent } = happened;
  if (error !== undefined) {
    if (!(error instanceof PayoutsError)) return EXIT_INTERNAL;
    // Kept from the service, before or after sending: an outage (a refused certificate is
    // configuration, and nothing was sent over it).
    const failure = serviceFailureOf(error);
    if (failure === 'certificate' && !sent) return EXIT.usage;
    if (failure !== undefined) return EXIT.unavailable;
    if (!sent) return error.exitCode;
    if (error instanceof StorageError) return error.sent().exitCode;
    // After sending, refused credentials, a refused guard or a lost claim still leave rows to
    // run again: the run stopped early, which is 6 (or 5 when a signal stopped it).
    const code = error.exitCode;
    return code === EXIT.interrupted || code === EXIT.rowsNotOk ? code : EXIT.unavailable;
  }
  if (happened.interrupted) return EXIT.interrupted;
  if (happened.unavailable || happened.storageFailed) return EXIT.unavailable;
  return happened.rowsOk ? EXIT.ok : EXIT.rowsNotOk;
}

/**
 * The code of a command that moves no money (status, template, register copy, webhooks...):
 * 0 when it did what was asked, 1 when something it reports is not right.
 */
export function outcomeCode(ok: boolean): number {
  return runExitCode({ sent: false, rowsOk: ok });
}
