import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runExitCode } from '../batch/exit-code.js';
import type { ControlTotals } from '../batch/guards.js';
import type { SheetOptions } from '../batch/prepare.js';
import { runBatch } from '../batch/run.js';
import { type Clock, systemClock } from '../clock.js';
import { EXIT, type StorageError } from '../errors.js';
import { shownLocation } from '../register/location.js';
import type { OriginDeclaration } from '../register/types.js';
import type { SandboxHandle } from '../sandbox/index.js';
import type { Connection } from './connection.js';
import type { CliIo } from './io.js';
import {
  closeLogger,
  createLogger,
  exitCodeOfError,
  fatalFields,
  fatalMessage,
  type LogFormat,
  logFormatOf,
  markLoggedOnStderr,
  runFinishedFields,
} from './logging.js';
import { RunProgress } from './run-progress.js';
import { humanSummary, printHumanSummary, type SummaryFacts, summaryJson } from './summary.js';

export interface RunCommandOptions extends SheetOptions {
  outPath?: string;
  json: boolean;
  controls: ControlTotals;
  /** The service; built lazily so `--sandbox` needs none. */
  connection: () => Connection;
  /** `--sandbox`: start an embedded sandbox on a free loopback port and run against it. */
  sandbox: boolean;
  /** The register (PRODUCT.md `--register`, `PAYOUTS_REGISTER`, the state directory). */
  register: string;
  approve?: string;
  retryUnknown: boolean;
  holdChangedPayees?: boolean;
  /** `--report PATH`: the approver's HTML report (run writes one only when asked). */
  report?: string | false;
  /** `--same-service-as` or `--separate-service`. */
  origin?: OriginDeclaration;
  concurrency: number;
  rate?: number;
  waitSeconds: number;
  eventsFile?: string;
  logFormat?: LogFormat;
  logFile?: string;
  logLevel?: string;
  /** `--max-outage S`: how long an outage of the service is waited through before exit 6. */
  maxOutageSeconds?: number;
  /** Aborted to stop the run as SIGINT/SIGTERM/SIGHUP would (tests); the real signals otherwise. */
  signal?: AbortSignal;
  /** Time (tests inject it): the run's duration and the report's timestamp. */
  clock?: Clock;
}

/** `payouts run <sheet>`: pays the sheet and reports it; returns the exit code. */
export async function runCommand(options: RunCommandOptions, io: CliIo): Promise<number> {
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const started = now();
  let logFailure: StorageError | undefined;
  const logOptions = { format: options.logFormat, file: options.logFile, stderr: io.stderr };
  // With JSON logs on stderr, main.ts reportError leaves a fatal error to this logger.
  const jsonOnStderr = !options.logFile && logFormatOf(logOptions) === 'json';
  const logger = createLogger({
    ...logOptions,
    level: options.logLevel,
    onStorageError: (error) => {
      logFailure = error;
    },
  });
  const stop = options.signal
    ? { signal: options.signal, abandon: undefined, dispose: () => {} }
    : stopOnSignals(logger.warn.bind(logger));
  let sandbox: SandboxHandle | undefined;
  let throwaway: string | undefined;
  try {
    let connection: Connection;
    let register = options.register;
    if (options.sandbox) {
      // A rehearsal never marks a real payout as paid: a register of its own, removed after.
      throwaway = await mkdtemp(path.join(tmpdir(), 'payouts-sandbox-'));
      register = path.join(throwaway, 'register.db');
      // Loaded only for a rehearsal: a real run does not load the simulator.
      const { startSandbox } = await import('../sandbox/index.js');
      sandbox = await startSandbox({ port: 0 });
      const c = sandbox.credentials;
      connection = {
        baseUrl: sandbox.url,
        authUrl: sandbox.url,
        credentials: {
          clientId: c.clientId,
          clientSecret: c.clientSecret,
          username: c.username,
          password: c.password,
        },
      };
      logger.info({ url: sandbox.url }, 'embedded sandbox started');
    } else {
      connection = options.connection();
    }
    const progress = new RunProgress(io.stderr, logger, clock);
    const report = await runBatch({
      ...options,
      rehearsal: options.sandbox,
      register,
      connection,
      logger,
      signal: stop.signal,
      abandonSignal: stop.abandon,
      warnedReferences: options.json,
      onProgress: (done, total) => progress.update(done, total),
    });
    progress.finish();
    const reportPath = typeof options.report === 'string' ? options.report : undefined;
    if (reportPath) {
      const { writeReport } = await import('../report/html.js');
      await writeReport(reportPath, {
        command: 'run',
        sheetPath: report.sheetPath,
        at: new Date(now()),
        digest: report.digest,
        summary: report.summary,
        warnings: report.warnings,
        controls: options.controls,
        resultsPath: report.resultsPath,
        registerPath: options.sandbox ? null : report.register,
        holdChangedPayees: options.holdChangedPayees,
        sandbox: options.sandbox,
      });
    }
    const facts: SummaryFacts = {
      command: 'run',
      sheetPath: report.sheetPath,
      format: report.format,
      summary: report.summary,
      digest: report.digest,
      resultsPath: report.resultsPath,
      registerPath: options.sandbox ? null : report.register,
      ...(options.sandbox ? { sandbox: true } : {}),
      unknownColumns: report.unknownColumns,
      samples: report.samples,
      warnings: report.warnings,
      ...(reportPath ? { reportPath } : {}),
    };
    const happened = {
      sent: report.sent,
      interrupted: report.interrupted,
      unavailable: report.unavailable,
      rowsOk: report.summary.allOk,
    };
    let exitCode = runExitCode(happened);
    const ending = report.interrupted
      ? 'payouts: interrupted: rows under way finished, the rest were not sent - run again to resume'
      : report.unavailable
        ? `payouts: stopped early: ${report.unavailableReason ?? 'the service stayed unavailable past --max-outage - run again later to resume'} (rows under way finished, the rest were not sent: skipped)`
        : undefined;
    // With JSON logs on stderr, stderr holds JSON records only: the human summary is one.
    if (jsonOnStderr)
      logger.info({ lines: [...humanSummary(facts), ...(ending ? [ending] : [])] }, 'summary');
    logger.info(
      runFinishedFields({
        exitCode,
        durationMs: now() - started,
        summary: report.summary,
        resultsPath: report.resultsPath,
        registerPath: options.sandbox ? null : report.register,
      }),
      'run finished',
    );
    // A log file that could not be written (disk full) ends the run with exit 6; its
    // last write is known only once the file is closed.
    await closeLogger(logger);
    if (logFailure) {
      facts.error = logFailure.sent();
      exitCode = runExitCode({ ...happened, storageFailed: true });
    }
    if (!jsonOnStderr) {
      printHumanSummary(io, facts);
      if (ending) io.stderr.write(`${ending}\n`);
    }
    if (options.json)
      io.stdout.write(
        `${JSON.stringify({ ...summaryJson(facts), runId: report.runId, interrupted: report.interrupted, unavailable: report.unavailable, exitCode })}\n`,
      );
    return exitCode;
  } catch (error) {
    // The error is a log record too, then the final one, so a JSON log always ends
    // with `run finished`; main.ts reportError then leaves stderr alone if it got both.
    const exitCode = exitCodeOfError(error);
    // Text logs on the terminal: main.ts reportError prints the error itself, once.
    if (jsonOnStderr || options.logFile) logger.fatal(fatalFields(error, exitCode), fatalMessage(error));
    logger.info(
      runFinishedFields({
        exitCode,
        durationMs: now() - started,
        resultsPath: options.outPath ?? null,
        registerPath: options.sandbox ? null : shownLocation(options.register),
      }),
      'run finished',
    );
    if (jsonOnStderr) markLoggedOnStderr(error);
    throw error;
  } finally {
    stop.dispose();
    await sandbox?.close();
    if (throwaway) await rm(throwaway, { recursive: true, force: true });
    await closeLogger(logger);
  }
}

/**
 * SIGINT/SIGTERM/SIGHUP: the first stops taking new rows and ends every wait (rate limiter,
 * backoff, Retry-After, breaker) while the requests already sent get a grace to finish
 * (batch/stop-grace.ts STOP_GRACE_MS), then the results are written. A second one cuts the requests
 * under way at once (their rows `unknown` where a transaction may have left: the register
 * holds every intent, so nothing is paid twice), writes the results if it can in a moment,
 * and ends the process. SIGHUP is a closed terminal or session: a cron job's run must not die
 * of it unrecorded.
 */
function stopOnSignals(warn: (obj: object, msg: string) => void): {
  signal: AbortSignal;
  abandon: AbortSignal;
  dispose(): void;
} {
  const controller = new AbortController();
  const now = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      now.abort();
      setTimeout(() => process.exit(EXIT.interrupted), SECOND_SIGNAL_MS).unref();
      return;
    }
    warn(
      { signal: name },
      'stopping: finishing the rows under way, then writing the results (signal again to stop now)',
    );
    controller.abort();
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    signal: controller.signal,
    abandon: now.signal,
    dispose() {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}

/** After a second signal, the moment left to write the results before the process ends. */
const SECOND_SIGNAL_MS = 1_500;

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
