/**
 * The exit code of every command, decided in one place from how it ended (README "Exit codes").
 * Exit 2 means nothing was sent; once anything was sent the code is 0, 1, 5 or 6, whatever
 * ended the run, so a cron wrapper that retries on 6 and alerts on 1 does the right thing.
 */
import {
  EXIT,
  EXIT_INTERNAL,
  NetworkError,
  PayoutsError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  StorageError,
} from '../errors.js';

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

// Errors that ended a command after something was sent: a run that stopped on refused
// credentials mid-run still leaves rows to run again, which is exit 6, not 3.
const thrownAfterSending = new WeakSet<object>();

/**
 * Marks an error as thrown after a request that may move money left, so that the one exit
 * path gives 0, 1, 5 or 6 for it; a storage error becomes its after-sending self (exit 6).
 */
export function afterSending(error: unknown): unknown {
  if (error instanceof StorageError) return error.sent();
  if (typeof error === 'object' && error !== null) thrownAfterSending.add(error);
  return error;
}

/** The exit code of an error that ended a command (sent or not, as `afterSending` noted). */
export function exitCodeOfError(error: unknown): number {
  const sent = typeof error === 'object' && error !== null && thrownAfterSending.has(error);
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

/** Answers in which the service understood a request and refused it. */
const REFUSALS = new Set([400, 409, 422]);

/** TLS failures where the client refused the server's certificate (not a handshake cut short). */
const CERTIFICATE_REFUSED = /CERT|UNABLE_TO_VERIFY|SELF_SIGNED/;

/**
 * What a failure to reach or understand the service means for a run (README "Exit codes"):
 * `certificate` when the client refused the service's certificate (configuration: exit 2,
 * nothing sent), `outage` for everything else that kept payouts from the service (DNS,
 * refused, reset, TLS handshake, stall, an unreadable, invalid or oversized answer, a 429
 * longer than --max-outage: exit 6, results written), undefined for any other error.
 */
export function serviceFailureOf(error: unknown): 'certificate' | 'outage' | undefined {
  if (error instanceof NetworkError)
    return CERTIFICATE_REFUSED.test(error.errorCode) ? 'certificate' : 'outage';
  if (error instanceof RateLimitError || error instanceof ServiceUnavailableError) return 'outage';
  // The service understood the request and refused it in words (400, 409, 422): not an outage.
  if (error instanceof ServiceError) return REFUSALS.has(error.status) ? undefined : 'outage';
  return undefined;
}
