/**
 * The one logging surface of the commands that talk to the service or write (validate, run,
 * reconcile, register copy, approve, template, the webhooks commands but verify): one option
 * builder (`logOptions`) and one setup (`openCommandLog`). Logs are pino's JSON lines when stderr is not a terminal (cron,
 * containers), short text lines when it is, or as `--log-format` says; `--log-file` sends them
 * to a file instead. With JSON logs on stderr, stderr holds JSON lines only: what a command
 * would print for a person there (its summary) becomes one record. Secrets are redacted by key
 * and account-like digit runs are masked in every string.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { Argv } from 'yargs';
import { BatchSummary, ROW_STATUSES } from '../batch/summary.js';
import { PayoutsError, StorageError } from '../errors.js';
import { SECRET_KEYS, scrub, scrubValue } from '../redact.js';
import { PRIVATE_FILE_MODE } from '../sheet/atomic-file.js';
import { exitCodeOfError } from './exit-code.js';
import { warningsTo } from './process-warnings.js';

export type LogFormat = 'json' | 'text';

export interface LoggerOptions {
  format?: LogFormat;
  level?: string;
  file?: string;
  /** Where logs go without --log-file. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Told once when the log file cannot be written mid-run (disk full): the run goes on, since
   * payments matter more than their log, and the caller ends with exit 6.
   */
  onStorageError?: (error: StorageError) => void;
}

/** The logging options as yargs hands them over. */
export interface LogArgs {
  'log-format'?: LogFormat;
  'log-file'?: string;
  'log-level'?: string;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Declares `--log-format`, `--log-file` and `--log-level` (README "Options"). */
export function logOptions<T>(y: Argv<T>) {
  return y
    .option('log-format', {
      choices: ['json', 'text'] as const,
      describe: 'default: text on a terminal, else json (stderr then holds JSON lines only)',
    })
    .option('log-file', { type: 'string', describe: 'write logs to this file instead of stderr' })
    .option('log-level', {
      choices: LOG_LEVELS,
      describe: 'least important log level shown (default: warn at a terminal, else info)',
    });
}

/** How a command logs, from its options: the format decided, the file resolved. */
export interface LogSettings {
  format: LogFormat;
  file?: string;
  level?: string;
}

/** The log settings of parsed options; a --log-file is resolved against `cwd`. */
export function logSettingsOf(args: LogArgs, io: { stderr: { isTTY?: boolean }; cwd: string }): LogSettings {
  const format =
    args['log-format'] === 'json' || args['log-format'] === 'text' ? args['log-format'] : undefined;
  const file = args['log-file'] ? path.resolve(io.cwd, args['log-file']) : undefined;
  const decided = logFormatOf({ format, file, stderr: io.stderr });
  // A person at a terminal reads the summary, warnings and errors: `info` records (one repeats
  // the summary) only when asked for. JSON lines and a --log-file keep them.
  const atTerminal = decided === 'text' && file === undefined && io.stderr.isTTY === true;
  const level = args['log-level'] ?? (atTerminal ? 'warn' : undefined);
  return { format: decided, ...(file ? { file } : {}), ...(level ? { level } : {}) };
}

/** True when the logs of these settings are JSON lines on stderr: stderr then holds nothing else. */
export function jsonOnStderr(settings: LogSettings): boolean {
  return settings.format === 'json' && settings.file === undefined;
}

/** A command's open log: the logger, where it writes, and what failed in writing it. */
export interface CommandLog {
  logger: Logger;
  /** JSON lines on stderr: a person's lines go there as one record, not as text. */
  jsonOnStderr: boolean;
  /** Text lines on stderr: the log and a person's lines are the same text there. */
  textOnStderr: boolean;
  /** The log file's failure (disk full), once one happened. */
  failure(): StorageError | undefined;
  /**
   * Tells `listener` of the log file's failure as it happens (at once if it happened already):
   * a command that serves for days says it then, not only when it stops.
   */
  onFailure(listener: (failure: StorageError) => void): void;
  /**
   * Lines for a person (a summary): printed on stderr, or one `summary` record when stderr
   * holds JSON lines; with --log-file they go to stderr as text and not into the file.
   */
  tell(lines: string[], msg?: string): void;
  /**
   * Logs the error that ends the command as one fatal record (in JSON on stderr, or in the
   * --log-file), so the top-level handler does not print it again on stderr; with text logs on
   * stderr it leaves the error to that handler's one `payouts: ...` line. Returns the exit code.
   */
  fail(error: unknown): number;
  /** Flushes, and closes a --log-file once its last record is written. */
  close(): Promise<void>;
}

/** Where a command's log goes without --log-file, and what a --log-file is resolved against. */
type LogIo = { stderr: NodeJS.WritableStream & { isTTY?: boolean }; cwd: string };

/** The log of a command run without its logging options (tests): as the defaults decide. */
export function defaultLog(io: LogIo): CommandLog {
  return openCommandLog(logSettingsOf({}, io), io);
}

/** Opens the log of a command: the one logger setup of the CLI. */
export function openCommandLog(
  settings: LogSettings,
  io: { stderr: NodeJS.WritableStream & { isTTY?: boolean } },
): CommandLog {
  let failure: StorageError | undefined;
  const listeners: ((failure: StorageError) => void)[] = [];
  const logger = createLogger({
    format: settings.format,
    ...(settings.file ? { file: settings.file } : {}),
    ...(settings.level ? { level: settings.level } : {}),
    stderr: io.stderr,
    onStorageError: (error) => {
      if (failure !== undefined) return;
      failure = error;
      for (const listener of listeners) listener(error);
    },
  });
  const json = jsonOnStderr(settings);
  // Process warnings (a library's deprecation notice) are records of this log while it is open.
  const releaseWarnings = warningsTo(logger);
  return {
    logger,
    jsonOnStderr: json,
    textOnStderr: settings.format === 'text' && settings.file === undefined,
    failure: () => failure,
    onFailure(listener) {
      if (failure === undefined) listeners.push(listener);
      else listener(failure);
    },
    tell(lines, msg = 'summary') {
      if (lines.length === 0) return;
      if (json) logger.info({ lines }, msg);
      else for (const line of lines) io.stderr.write(`${line}\n`);
    },
    fail(error) {
      const exitCode = exitCodeOfError(error);
      if (settings.format === 'text' && settings.file === undefined) return exitCode;
      logger.fatal(fatalFields(error, exitCode), fatalMessage(error));
      if (json) markLoggedOnStderr(error);
      return exitCode;
    },
    close: () => {
      releaseWarnings();
      return closeLogger(logger);
    },
  };
}

/** The format logs take: as asked, else text on a terminal and JSON for cron and files. */
export function logFormatOf(options: {
  format?: LogFormat | undefined;
  file?: string | undefined;
  stderr: { isTTY?: boolean | undefined };
}): LogFormat {
  return options.format ?? (options.stderr.isTTY && !options.file ? 'text' : 'json');
}

/** Builds the logger of a command. */
export function createLogger(options: LoggerOptions): Logger {
  const format = logFormatOf(options);
  const file = options.file ? openLogFile(options.file, options.onStorageError) : undefined;
  const target: NodeJS.WritableStream = file ?? options.stderr;
  const destination = format === 'json' ? target : textLines(target);
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`)], censor: '[REDACTED]' },
      formatters: { log: (object) => scrubValue(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const masked = args.map((a) => (typeof a === 'string' ? scrub(a) : a));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
  if (file) logFiles.set(logger, file);
  return logger;
}

/**
 * Opens --log-file for appending, created with mode 0600 (logs name references and amounts).
 * Opening is synchronous so that an unusable path fails here, before anything is sent.
 */
function openLogFile(file: string, onStorageError: LoggerOptions['onStorageError']): WriteStream {
  const problem = (cause: unknown) =>
    new StorageError(
      `cannot write the log file ${file} (free some space or fix the folder, or choose another --log-file PATH)`,
      { path: file, cause },
    );
  let fd: number;
  try {
    fd = openSync(file, 'a', PRIVATE_FILE_MODE);
  } catch (error) {
    throw problem(error);
  }
  const stream = createWriteStream(file, { fd, flags: 'a' });
  let failed = false;
  // The stream closes its descriptor after an error; later records are dropped, not thrown.
  stream.on('error', (error) => {
    if (failed) return;
    failed = true;
    onStorageError?.(problem(error));
  });
  return stream;
}

// The --log-file stream of each logger, so that closeLogger can wait until it is on disk.
const logFiles = new WeakMap<Logger, WriteStream>();

/**
 * Flushes the logger and, for --log-file, closes the file and waits until its last record was
 * written or failed (a failure reaches `onStorageError` first). Safe to call twice.
 */
export async function closeLogger(logger: Logger): Promise<void> {
  logger.flush();
  const stream = logFiles.get(logger);
  if (stream === undefined || stream.closed) return;
  await new Promise<void>((resolve) => {
    stream.once('close', () => resolve());
    stream.end();
  });
}

// Errors a command's logger already wrote as a JSON record on stderr: the top-level handler
// (src/cli/main.ts reportError) does not print them a second time.
const loggedOnStderr = new WeakSet<object>();

/** Notes that `error` is already on stderr as a JSON log record. */
export function markLoggedOnStderr(error: unknown): void {
  if (typeof error === 'object' && error !== null) loggedOnStderr.add(error);
}

/** True when `error` is already on stderr as a JSON log record. */
export function isLoggedOnStderr(error: unknown): boolean {
  return typeof error === 'object' && error !== null && loggedOnStderr.has(error);
}

/** The one-line message of an error that ends a command; a bug says it is one. */
export function fatalMessage(error: unknown): string {
  if (error instanceof PayoutsError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `internal error: ${message} (a bug in payouts, not in your sheet: set PAYOUTS_DEBUG=1 to see the stack trace)`;
}

/** The fields of one log record for an error that ends a command: never a stack. */
export function fatalFields(error: unknown, exitCode: number): Record<string, unknown> {
  if (!(error instanceof PayoutsError)) return { code: 'INTERNAL', exitCode };
  const fields: Record<string, unknown> = { code: error.code, exitCode };
  if (error instanceof StorageError) {
    fields['path'] = error.path;
    if (error.errno !== undefined) fields['errno'] = error.errno;
  }
  if (error.status !== undefined) fields['status'] = error.status;
  if (error.requestId !== undefined) fields['requestId'] = error.requestId;
  return fields;
}

/**
 * The `--json` object of a command that ended on an error: `{command, exitCode, error}`, the
 * error as its fatal record describes it, with its message.
 */
export function errorJson(command: string, error: unknown, exitCode: number): Record<string, unknown> {
  const { exitCode: _, ...fields } = fatalFields(error, exitCode);
  return { command, exitCode, error: { ...fields, message: fatalMessage(error) } };
}

/** What the last record of a run says (`msg: "run finished"`), for cron and log search. */
export interface RunFinished {
  exitCode: number;
  durationMs: number;
  /** Absent when the run ended before counting its rows (an error before or after sending). */
  summary?: BatchSummary;
  resultsPath: string | null;
  registerPath: string | null;
}

/** The fields of the final `run finished` record: counts per status, totals per currency. */
export function runFinishedFields(facts: RunFinished): Record<string, unknown> {
  const { summary } = facts;
  return {
    exitCode: facts.exitCode,
    durationMs: facts.durationMs,
    rows: summary?.rows ?? null,
    statuses: summary ? Object.fromEntries(ROW_STATUSES.map((s) => [s, summary.byStatus[s]])) : null,
    totals: summary ? BatchSummary.formatTotals(summary.sheetTotals) : null,
    validTotals: summary ? BatchSummary.formatTotals(summary.validTotals) : null,
    results: facts.resultsPath,
    register: facts.registerPath,
  };
}

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Turns pino's JSON lines into `HH:MM:SS level message key=value ...` for a person. */
function textLines(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          const { level, time, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const clock = new Date(Number(time)).toISOString().slice(11, 19);
          const fields = Object.entries(rest)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ');
          target.write(
            `${clock} ${(LEVELS[Number(level)] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`,
          );
        } catch {
          target.write(`${line}\n`);
        }
      }
      callback();
    },
  });
}
