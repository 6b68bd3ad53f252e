/**
 * SIGINT, SIGTERM and SIGHUP, wired once for every command (run, reconcile, sandbox, webhooks
 * listen). The first stops taking new work and ends every wait while what is under way gets
 * its grace; a second cuts what is under way at once and ends the process (exit 5) a moment
 * later, whatever still holds it. SIGHUP is a closed terminal or session: a cron job's command
 * must not die of it unrecorded.
 */
import { systemClock, systemTimers } from '../clock.js';
import { runExitCode } from './exit-code.js';

export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** After a second signal, the moment left to write the results before the process ends. */
export const SECOND_SIGNAL_MS = 1_500;

/** How long a stopped command has, from the first signal, to end (README "Exit codes", 5). */
export const STOP_WITHIN_MS = 10_000;

/** When the process got its first stop signal, if it got one. */
let stoppedAt: number | undefined;

/** When the process got its first stop signal (what is left of the grace is measured from it). */
export function firstStopAt(): number | undefined {
  return stoppedAt;
}

/** A command's way to be stopped. */
export interface Stop {
  /** Aborted at the first signal: take no new work, let what is under way finish. */
  signal: AbortSignal;
  /** Aborted at the second signal: cut what is under way at once. */
  abandon: AbortSignal;
  /** Resolves at the first signal. */
  stopped: Promise<void>;
  /** Stops listening for the signals. */
  dispose(): void;
}

/**
 * Listens for the stop signals until disposed; `onFirst` is told the first one (to log it).
 * Given `signal` (tests), that stands for the first signal and the process is left alone.
 */
export function stopOnSignals(
  options: { onFirst?: (name: NodeJS.Signals) => void; signal?: AbortSignal | undefined } = {},
): Stop {
  const first = new AbortController();
  const second = new AbortController();
  const stopped = new Promise<void>((resolve) => {
    if (first.signal.aborted) resolve();
    first.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  if (options.signal) {
    const given = options.signal;
    if (given.aborted) first.abort();
    else given.addEventListener('abort', () => first.abort(), { once: true });
    return { signal: first.signal, abandon: second.signal, stopped, dispose: () => {} };
  }
  const onSignal = (name: NodeJS.Signals) => {
    if (first.signal.aborted) {
      second.abort();
      systemTimers.once(
        SECOND_SIGNAL_MS,
        () => process.exit(runExitCode({ sent: false, interrupted: true })),
        {
          unref: true,
        },
      );
      return;
    }
    stoppedAt ??= systemClock.now();
    options.onFirst?.(name);
    first.abort();
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    signal: first.signal,
    abandon: second.signal,
    stopped,
    dispose() {
      // Once stopped, the process is on its way out: a second signal in the moment left (the
      // summary written, the process not yet gone) still ends it with exit 5, never the
      // kernel's default kill.
      if (first.signal.aborted) return;
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}

/** The first stop signal, for a command that serves until stopped (sandbox, webhooks listen). */
export function untilStopped(given: Promise<void> | undefined): { stopped: Promise<void>; dispose(): void } {
  if (given) return { stopped: given, dispose: () => {} };
  const stop = stopOnSignals();
  return { stopped: stop.stopped, dispose: () => stop.dispose() };
}

/**
 * stdout or stderr closed by its reader (`payouts run --json | head -c 1`) fails every later
 * write with EPIPE, which would end a run that is paying with an unhandled error. What cannot be
 * printed is dropped instead: the results file, the register and a --log-file still record
 * everything.
 */
export function tolerateClosedOutput(
  streams: NodeJS.WritableStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) stream.on('error', ignoreOutputError);
}

function ignoreOutputError(): void {
  // Nowhere left to report it: the stream that failed is the report.
}

/**
 * Once a command has returned (results written, logs flushed), nothing may hold the process
 * open: a timer or socket left behind by a stopped run would otherwise delay its exit code.
 */
export function exitWhenIdle(afterMs = 2_000): void {
  systemTimers.once(afterMs, () => process.exit(), { unref: true });
}
