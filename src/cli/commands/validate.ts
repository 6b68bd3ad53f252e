/** `payouts validate <sheet>`: the dry run (README "Commands"): read, map and check every row, offline. */
import path from 'node:path';
import type { Argv } from 'yargs';
import type { PolicyView } from '../../approvals/policy-gate.js';
import type { ControlTotals } from '../../batch/guards.js';
import type { SheetOptions } from '../../batch/prepare.js';
import { type ValidateOptions, type ValidateReport, validateSheet } from '../../batch/validate/validate.js';
import { systemClock } from '../../clock.js';
import { openExistingRegister } from '../../register/open.js';
import { writeReport } from '../../report/html.js';
import { reportPathFor } from '../../sheet/results-path.js';
import type { ArgsOf } from '../command.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions, runFinishedFields } from '../logging.js';
import { registerHint, registerOption, type SheetArgs, sheetOptions, sheetOptionsOf } from '../options.js';
import { policyViewOf, sendFactsOf } from '../policy-shown.js';
import { RowCounter } from '../progress.js';
import { exitCodeOf, humanSummary, type SummaryFacts, writeSummaryJson } from '../summary.js';

export interface ValidateCommandOptions extends SheetOptions {
  outPath?: string;
  json: boolean;
  controls: ControlTotals;
  register?: ValidateOptions['register'];
  holdChangedPayees?: boolean;
  /** `--report PATH`; false for --no-report; undefined: `<sheet name>.report.html` beside the results. */
  report?: string | false;
}

/** `payouts validate <sheet>`: runs the dry run and writes its report; says how it ended. */
export async function validateCommand(
  options: ValidateCommandOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const started = systemClock.now();
  // The counter draws on a terminal only, and never among JSON lines.
  const counter = log.jsonOnStderr ? undefined : new RowCounter(io.stderr, 'Validating');
  const report = await validateSheet({
    ...options,
    warnedReferences: options.json,
    onProgress: (n) => counter?.update(n),
    onWorkerOutOfMemory: (limitMb) =>
      log.logger.info(
        { workerLimitMb: limitMb },
        'the rows are checked again on one thread: the worker thread reached its memory limit',
      ),
  });
  counter?.done();
  const reportPath =
    options.report === false
      ? undefined
      : (options.report ?? reportPathFor(report.sheetPath, report.resultsPath));
  const approvals = await approvalsShown(options, report, reportPath);
  const policy = await policyShown(options, report);
  const facts: SummaryFacts = {
    command: 'validate',
    sheetPath: report.sheetPath,
    format: report.format,
    summary: report.summary,
    digest: report.digest,
    resultsPath: report.resultsPath,
    registerPath: report.register ?? null,
    ...(report.registerNote ? { registerNote: report.registerNote } : {}),
    unknownColumns: report.unknownColumns,
    samples: report.invalidSamples,
    warnings: report.warnings,
    sincePrevious: report.sincePrevious,
    // Always a list in --json, as run's: empty without a register or a signature.
    approvals: approvals ?? [],
    policy,
    ...(reportPath ? { reportPath } : {}),
    controls: options.controls,
    error: report.guardError,
  };
  if (reportPath) await writeValidateReport(reportPath, options, report, approvals, policy);
  // On a terminal the summary's first lines say it; a log record says it to a log reader.
  if (report.registerNote && !log.textOnStderr)
    log.logger.warn({ registerNotChecked: report.registerNote }, 'register not checked');
  const exitCode = exitCodeOf(facts);
  return {
    exitCode,
    // A --log-file ends with what the dry run found; on stderr the summary says it.
    ...(log.jsonOnStderr || log.textOnStderr
      ? {}
      : {
          finished: {
            msg: 'validate finished',
            fields: runFinishedFields({
              exitCode,
              durationMs: systemClock.now() - started,
              summary: report.summary,
              resultsPath: report.resultsPath,
              registerPath: report.register ?? null,
            }),
          },
        }),
    tell: () => humanSummary(facts),
    print: async ({ exitCode, logFailure }) => {
      if (options.json)
        await writeSummaryJson(io.stdout, { ...facts, error: logFailure ?? facts.error }, { exitCode });
    },
  };
}

/**
 * Who signed this digest so far (docs/approval.md "Where approvals are kept, and shown"), for
 * the service whose scope was read (the declared one under an alias URL): the report and the
 * JSON summary both name them. Undefined when neither is written, or without a register.
 */
async function approvalsShown(
  options: ValidateCommandOptions,
  report: ValidateReport,
  reportPath: string | undefined,
) {
  const service = report.service ?? options.register?.service;
  if (!(reportPath || options.json) || !options.register || service === undefined) return undefined;
  const { recordedApprovals } = await import('./approve.js');
  return await recordedApprovals(options.register.location, report.digest, service);
}

/**
 * The register's approval policy for the service as it judges this batch now (docs/approval.md
 * "The policy"): which rules apply to the rows a run would send, who signed, who is still
 * needed. Null without a register or a policy; a register an older payouts wrote, read without
 * migrating it, holds none.
 */
async function policyShown(
  options: ValidateCommandOptions,
  report: ValidateReport,
): Promise<PolicyView | null> {
  const service = report.service ?? options.register?.service;
  if (!options.register || service === undefined) return null;
  const register = await openExistingRegister(options.register.location);
  if (register === undefined) return null;
  try {
    const sheet = path.basename(report.sheetPath).normalize('NFC');
    const batch = { digest: report.digest, sheet, now: systemClock.now() };
    return await policyViewOf(register, service, batch, sendFactsOf(report));
  } finally {
    await register.close();
  }
}

/** The approver's page of this dry run. */
async function writeValidateReport(
  reportPath: string,
  options: ValidateCommandOptions,
  report: ValidateReport,
  approvals: Awaited<ReturnType<typeof approvalsShown>>,
  policy: PolicyView | null,
): Promise<void> {
  await writeReport(reportPath, {
    ...(approvals === undefined ? {} : { approvals }),
    policy,
    command: 'validate',
    sheetPath: report.sheetPath,
    at: new Date(systemClock.now()),
    digest: report.digest,
    summary: report.summary,
    warnings: report.warnings,
    sincePrevious: report.sincePrevious,
    controls: options.controls,
    guardError: report.guardError,
    resultsPath: report.resultsPath,
    registerPath: report.register ?? null,
    holdChangedPayees: options.holdChangedPayees,
  });
}

/** validate's options: the sheet's, the register's, the service whose scope to read, the logs'. */
function options(y: Argv) {
  return logOptions(registerOption(sheetOptions(y))).option('base-url', {
    type: 'string',
    describe: 'the service whose register scope to check against (default PAYOUTS_BASE_URL)',
  });
}

export const builder = options;

/** Parses validate's options into its typed options and runs it. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return runLifecycle(args as LogArgs, io, (log) =>
    validateCommand(
      { ...sheetOptionsOf(args as unknown as SheetArgs, io), register: registerHint(args, io) },
      io,
      log,
    ),
  );
}
