/**
 * Process warnings (`process.emitWarning`: a DeprecationWarning of node-postgres, a security
 * notice of a library) said the way the command says everything else. Node prints them itself as
 * `(node:PID) Warning: ...` text, several lines at times, which breaks a stderr that holds JSON
 * lines only and reads like a crash to a person. Node's own printer is a 'warning' listener
 * (none under --no-warnings); once it is removed, each warning goes to the open command's logger
 * as one `warn` record, or, when no command log is open (status, template, or before a command
 * opened its log), to the form the command's errors take: a JSON record or a `payouts:` line.
 */
import type { Logger } from 'pino';

/** Where one warning goes. */
export type WarningSink = (warning: Error & { code?: string }) => void;

let commandSink: WarningSink | undefined;
let fallbackSink: WarningSink | undefined;
let routed = false;

/**
 * Takes over the process's warnings: Node's printer is removed and warnings go to the sinks
 * below. Called once by the command line's entry point only, so that a test process that imports
 * the CLI keeps its own warnings as they were.
 */
export function routeProcessWarnings(fallback: WarningSink): void {
  fallbackSink = fallback;
  if (routed) return;
  routed = true;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => (commandSink ?? fallbackSink)?.(warning));
}

/** Sets where warnings go while no command log is open (from the options, once parsed). */
export function warningsFallback(fallback: WarningSink): void {
  if (routed) fallbackSink = fallback;
}

/** Sends warnings to a command's logger until the returned function is called (its log closes). */
export function warningsTo(logger: Logger): () => void {
  const sink: WarningSink = (warning) => logger.warn(warningFields(warning), warning.message);
  commandSink = sink;
  return () => {
    if (commandSink === sink) commandSink = undefined;
  };
}

/** The fields of a warning's log record: its kind and code, never a stack. */
export function warningFields(warning: Error & { code?: string }): Record<string, string> {
  return {
    warning: warning.name,
    ...(typeof warning.code === 'string' ? { warningCode: warning.code } : {}),
  };
}
