/** `payouts run <sheet>` (README "Commands"): validate, then pay every valid row, resumably. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { BREAKER_DEFAULTS } from '../../api/breaker.js';
import type { ControlTotals } from '../../batch/guards.js';
import type { SheetOptions } from '../../batch/prepare.js';
import { type RunReport, runBatch } from '../../batch/run/run.js';
import { ROW_STATUSES } from '../../batch/summary.js';
import { type Clock, systemClock } from '../../clock.js';
import { cronSignals } from '../../cron/send.js';
import { UsageError } from '../../errors.js';
import {
  commandLinePasswordWarning,
  type RegisterSource,
  registerLocationText,
  registerSourceOf,
  shownLocation,
} from '../../register/location.js';
import type { OriginDeclaration } from '../../register/types.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import { formatByExtension, resultsPathFor, writtenSince } from '../../sheet/results-path.js';
import type { ArgsOf } from '../command.js';
import { type Connection, connectionFromArgs } from '../connection.js';
import { runExitCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type After, type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions, runFinishedFields } from '../logging.js';
import {
  type ApprovalGateArgs,
  approvalGateOf,
  approvalGateOptions,
  checkMaxOutage,
  checkPace,
  connectionOptions,
  cronOptions,
  cronSetupOf,
  originOf,
  registerOption,
  resolveFrom,
  type SheetArgs,
  sheetOptions,
  sheetOptionsOf,
} from '../options.js';
import { RunProgress } from '../run-progress.js';
import { stopOnSignals } from '../signals.js';
import { humanSummary, type SummaryFacts, writeSummaryJson } from '../summary.js';

export interface RunCommandOptions extends SheetOptions {
  outPath?: string;
  json: boolean;
  controls: ControlTotals;
  /** The service; built lazily so `--sandbox` needs none. */
  connection: () => Connection;
  /** `--sandbox`: start an embedded sandbox on a free loopback port and run against it. */
  sandbox: boolean;
  /** The register (README `--register`, `PAYOUTS_REGISTER`, the state directory). */
  register: string;
  /** Which of those named it. */
  registerFrom?: RegisterSource;
  approve?: string;
  /** `--require-approvals N --allowed-signers FILE` (or their environment variables). */
  approvals?: { required: number; allowedSigners?: string; maxAgeDays: number };
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
  /** `--max-outage S`: how long an outage of the service is waited through before exit 6. */
  maxOutageSeconds?: number;
  /** Aborted to stop the run as SIGINT/SIGTERM/SIGHUP would (tests); the real signals otherwise. */
  signal?: AbortSignal;
  /** Time (tests inject it): the run's duration and the report's timestamp. */
  clock?: Clock;
}

/** `payouts run <sheet>`: pays the sheet and writes its report; says how it ended (lifecycle.ts). */
export async function runCommand(
  options: RunCommandOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
  atEnd: (cleanup: () => unknown) => void = () => {},
): Promise<Ending> {
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const started = now();
  const { logger } = log;
  // The first signal stops taking rows while those under way get their grace
  // (batch/stop-grace.ts); a second cuts them at once (signals.ts).
  const stop = stopOnSignals({
    signal: options.signal,
    onFirst: (name) =>
      logger.warn(
        { signal: name },
        'stopping: finishing the rows under way, then writing the results (signal again to stop now)',
      ),
  });
  const rehearsal: Rehearsal = {};
  try {
    const { connection, register } = await serviceOf(options, rehearsal, log);
    // A bar for a person at a terminal, never among JSON lines (then progress is a record).
    const bar = !log.jsonOnStderr && io.stderr.isTTY === true;
    const progress = new RunProgress(io.stderr, logger, clock, undefined, bar);
    const report = await runBatch({
      ...options,
      rehearsal: options.sandbox,
      exitCodeOf: runExitCode,
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
    if (reportPath) await writeRunReport(reportPath, options, report, now());
    return endingOf(options, report, io, { reportPath, durationMs: now() - started });
  } finally {
    // After the summary: a second signal while it is written still cuts at once (exit 5).
    atEnd(async () => {
      stop.dispose();
      await rehearsal.sandbox?.close();
      if (rehearsal.folder) await rm(rehearsal.folder, { recursive: true, force: true });
    });
  }
}

/** How a run ended, for the lifecycle: its code, its last record, its summary and its signals. */
function endingOf(
  options: RunCommandOptions,
  report: RunReport,
  io: CliIo,
  how: { reportPath: string | undefined; durationMs: number },
): Ending {
  const { reportPath } = how;
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
    sincePrevious: report.sincePrevious,
    approvals: report.approvals,
    policy: report.policy,
    ...(reportPath ? { reportPath } : {}),
    controls: options.controls,
  };
  const happened = {
    sent: report.sent,
    interrupted: report.interrupted,
    unavailable: report.unavailable,
    rowsOk: report.summary.allOk,
  };
  const exitCode = runExitCode(happened);
  // The --json summary object, for stdout and for a notification (cron/send.ts).
  const writeSummary = (out: NodeJS.WritableStream, { exitCode, logFailure }: After, extra = {}) =>
    writeSummaryJson(
      out,
      { ...facts, ...(logFailure ? { error: report.sent ? logFailure.sent() : logFailure } : {}) },
      {
        runId: report.runId,
        interrupted: report.interrupted,
        unavailable: report.unavailable,
        exitCode,
        ...extra,
      },
    );
  const ending = report.interrupted
    ? 'payouts: interrupted: rows under way finished, the rest were not sent - run again to resume'
    : report.unavailable
      ? `payouts: stopped early: ${report.unavailableReason ?? 'the service stayed unavailable past --max-outage - run again later to resume'} (rows under way finished, the rest were not sent: skipped)`
      : undefined;
  return {
    exitCode,
    sent: report.sent,
    finished: {
      msg: 'run finished',
      fields: runFinishedFields({
        exitCode,
        durationMs: how.durationMs,
        summary: report.summary,
        resultsPath: report.resultsPath,
        registerPath: options.sandbox ? null : report.register,
      }),
    },
    tell: () => [...humanSummary(facts), ...(ending ? [ending] : [])],
    print: async (after) => {
      if (options.json) await writeSummary(io.stdout, after);
    },
    cron: (after) => ({
      rows: new Map(Object.entries(report.summary.byStatus)),
      amounts: report.summary.statusTotals,
      writeSummary: (out, extra) => writeSummary(out, after, extra),
    }),
  };
}

/** A rehearsal's embedded sandbox and throwaway register folder, removed at the end. */
interface Rehearsal {
  sandbox?: SandboxHandle;
  folder?: string;
}

/**
 * The service and register a run uses: those the options name, or for a rehearsal an embedded
 * sandbox and a register of its own, so that a rehearsal never marks a real payout as paid.
 */
async function serviceOf(
  options: RunCommandOptions,
  rehearsal: Rehearsal,
  log: CommandLog,
): Promise<{ connection: Connection; register: string }> {
  if (!options.sandbox) return { connection: options.connection(), register: options.register };
  rehearsal.folder = await mkdtemp(path.join(tmpdir(), 'payouts-sandbox-'));
  // Loaded only for a rehearsal: a real run does not load the simulator.
  const { startSandbox } = await import('../../sandbox/index.js');
  const sandbox = await startSandbox({ port: 0 });
  rehearsal.sandbox = sandbox;
  const { clientId, clientSecret, username, password } = sandbox.credentials;
  log.logger.info({ url: sandbox.url }, 'embedded sandbox started');
  return {
    connection: {
      baseUrl: sandbox.url,
      authUrl: sandbox.url,
      credentials: { clientId, clientSecret, username, password },
    },
    register: path.join(rehearsal.folder, 'register.db'),
  };
}

/** The approver's page of this run (`--report PATH`). */
async function writeRunReport(
  reportPath: string,
  options: RunCommandOptions,
  report: RunReport,
  at: number,
): Promise<void> {
  const { writeReport } = await import('../../report/html.js');
  await writeReport(reportPath, {
    command: 'run',
    sheetPath: report.sheetPath,
    at: new Date(at),
    digest: report.digest,
    summary: report.summary,
    warnings: report.warnings,
    sincePrevious: report.sincePrevious,
    controls: options.controls,
    resultsPath: report.resultsPath,
    registerPath: options.sandbox ? null : report.register,
    holdChangedPayees: options.holdChangedPayees,
    sandbox: options.sandbox,
    approvals: report.approvals,
    policy: report.policy,
  });
}

/**
 * The last record of a run that ended on an error: `run finished` with its code, and the
 * results file only if this run wrote one (refused credentials before sending write none).
 */
async function runFailed(options: RunCommandOptions, started: number, log: CommandLog, exitCode: number) {
  log.logger.info(
    runFinishedFields({
      exitCode,
      durationMs: (options.clock ?? systemClock).now() - started,
      resultsPath: writtenSince(options.outPath ?? defaultResultsPath(options), started),
      registerPath: options.sandbox ? null : shownLocation(options.register),
    }),
    'run finished',
  );
}

/** Where a run writes its results when --out is not given. */
function defaultResultsPath(options: RunCommandOptions): string {
  return resultsPathFor(options.sheetPath, formatByExtension(options.sheetPath), options.sandbox);
}

/** run's options: the sheet's, the register's, the service's, the pace's and the logs'. */
function options(y: Argv) {
  return cronOptions(approvalGateOptions(logOptions(connectionOptions(registerOption(sheetOptions(y))))))
    .option('sandbox', {
      type: 'boolean',
      default: false,
      describe: 'start an embedded sandbox on a free loopback port and run against it',
    })
    .option('checkpoint', {
      type: 'string',
      hidden: true,
      describe: 'replaced by --register',
    })
    .option('approve', {
      type: 'string',
      describe: 'refuse to send unless the batch digest matches DIGEST',
    })
    .option('retry-unknown', {
      type: 'boolean',
      default: false,
      describe: 're-send rows whose earlier outcome is unknown, with the same Idempotency-Key',
    })
    .option('same-service-as', {
      type: 'string',
      describe:
        'declare the service this run reaches the same as ORIGIN, whose payouts the register holds (another spelling of its URL: localhost, a second name, a proxy), remembered',
    })
    .option('separate-service', {
      type: 'boolean',
      describe:
        'declare the service this run reaches another one than those the register holds for this integrator (a staging copy), remembered',
    })
    .conflicts('same-service-as', 'separate-service')
    .option('concurrency', {
      type: 'number',
      default: 4,
      requiresArg: true,
      describe: 'rows in flight at once',
    })
    .option('rate', {
      type: 'number',
      requiresArg: true,
      default: 20,
      describe: 'requests per second, all endpoints together',
    })
    .option('wait', {
      type: 'number',
      default: 0,
      describe: 'after sending, check transaction statuses for up to this many seconds (completed/failed)',
    })
    .option('max-outage', {
      type: 'number',
      requiresArg: true,
      default: BREAKER_DEFAULTS.maxOutageMs / 1000,
      describe:
        'seconds an outage of the service (no answer, 5xx, 429 on every request) is waited through before the run stops with exit 6',
    })
    .option('events', {
      type: 'string',
      describe:
        'webhook events file of "payouts webhooks listen --events": rows it confirms become completed or failed',
    });
}

export const builder = options;

/** Parses run's options into its typed options and runs it. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  let parsed: RunCommandOptions | undefined;
  const started = systemClock.now();
  return runLifecycle(
    args as LogArgs,
    io,
    (log, atEnd) => {
      parsed = runOptionsOf(args, io);
      const exposed = commandLinePasswordWarning(args.register);
      if (exposed !== undefined) log.logger.warn(exposed);
      return runCommand(parsed, io, log, atEnd);
    },
    // The error is a log record too, then the final one, so a JSON log always ends with `run
    // finished` (options that could not be read end it with the error alone).
    async (_error, log, exitCode) => {
      if (parsed !== undefined) await runFailed(parsed, started, log, exitCode);
    },
    () =>
      cronSignals({
        command: 'run',
        statuses: ROW_STATUSES,
        subject: path.basename(args.file),
        ...cronSetupOf(args, io, args.sandbox),
      }),
  );
}

/** run's typed options, checked before anything is read or sent (usage errors: exit 2). */
function runOptionsOf(args: ArgsOf<typeof options>, io: CliIo): RunCommandOptions {
  if (args.sandbox) {
    const given = (['base-url', 'auth-url'] as const).filter((name) => args[name] !== undefined);
    if (given.length > 0) {
      throw new UsageError(
        `--sandbox runs against an embedded sandbox of its own, so it takes no ${given.map((n) => `--${n}`).join(' or ')}: leave ${given.length === 1 ? 'it' : 'them'} out to rehearse, or leave out --sandbox to run against that service`,
      );
    }
  }
  const sheet = sheetOptionsOf(args as unknown as SheetArgs, io, args.sandbox);
  if (args.approve !== undefined && args.approve.trim() === '') {
    throw new UsageError(
      '--approve needs the batch digest that payouts validate printed for this sheet (--approve DIGEST)',
    );
  }
  if (args.checkpoint !== undefined) {
    throw new UsageError(
      '--checkpoint was replaced by the register, which knows every payout of every sheet: pass --register PATH (or set PAYOUTS_REGISTER), or leave it out to use the default',
    );
  }
  checkPace(args.concurrency, args.rate);
  if (!Number.isFinite(args.wait) || args.wait < 0) throw new UsageError('--wait must be 0 or more seconds');
  checkMaxOutage(args['max-outage']);
  // A rehearsal pays nothing real, against a sandbox nobody approved for: the gate of the
  // environment (a CronJob's) does not apply to it, and asking for one is a mistake.
  if (args.sandbox && args['require-approvals'] !== undefined) {
    throw new UsageError(
      '--sandbox rehearses against an embedded sandbox that no approval names: leave out --require-approvals to rehearse',
    );
  }
  const approvals = args.sandbox ? undefined : approvalGateOf(args as ApprovalGateArgs, io);
  return {
    ...sheet,
    connection: () => connectionFromArgs(args, io.env),
    sandbox: args.sandbox,
    register: registerLocationText(args.register, io.env, io.cwd),
    registerFrom: registerSourceOf(args.register, io.env),
    ...(args.approve !== undefined ? { approve: args.approve } : {}),
    ...(approvals ? { approvals } : {}),
    retryUnknown: args['retry-unknown'],
    holdChangedPayees: args['hold-changed-payees'],
    ...originOf(args['same-service-as'], args['separate-service']),
    concurrency: args.concurrency,
    rate: args.rate,
    waitSeconds: args.wait,
    maxOutageSeconds: args['max-outage'],
    ...(args.events ? { eventsFile: resolveFrom(io.cwd, args.events) } : {}),
  };
}
