/**
 * `payouts reconcile [reference...]` (README "Commands"): the final state of every payout sent,
 * from the service, into the register. Exit 0 when nothing failed, 1 when something failed or
 * stays unknown, 5 when stopped by a signal, 6 when the service stayed unavailable.
 */
import type { Argv } from 'yargs';
import { BREAKER_DEFAULTS } from '../../api/breaker.js';
import {
  type Outcome,
  type ReconcileOptions,
  type ReconcileReport,
  reconcile,
} from '../../batch/reconcile/reconcile.js';
import { BatchSummary, formatAmountForPeople } from '../../batch/summary.js';
import { cronSignals } from '../../cron/send.js';
import { UsageError } from '../../errors.js';
import { registerLocationText, registerSourceOf } from '../../register/location.js';
import { boundCell } from '../../sheet/quote.js';
import type { ArgsOf } from '../command.js';
import { connectionFromArgs } from '../connection.js';
import { runExitCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions } from '../logging.js';
import {
  checkMaxOutage,
  checkPace,
  connectionOptions,
  cronOptions,
  cronSetupOf,
  registerOption,
} from '../options.js';
import { stopOnSignals } from '../signals.js';
import { countOf } from '../summary.js';

export interface ReconcileCommandOptions extends Omit<ReconcileOptions, 'logger'> {
  json: boolean;
}

const OUTCOMES: readonly { outcome: Outcome; label: string }[] = [
  { outcome: 'completed', label: 'completed' },
  { outcome: 'failed', label: 'failed' },
  { outcome: 'pending', label: 'still pending (submitted, not settled yet)' },
  { outcome: 'absent', label: 'never created (the next run sends them again)' },
  { outcome: 'unknown', label: 'still unknown (the service could not say)' },
  { outcome: 'skipped', label: 'not asked (see below)' },
];

/** Runs reconcile with its open log; says how it ended (lifecycle.ts). */
export async function reconcileCommand(
  options: ReconcileCommandOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
  atEnd: (cleanup: () => unknown) => void = () => {},
): Promise<Ending> {
  const stop = stopOnSignals({
    signal: options.signal,
    onFirst: (name) => log.logger.warn({ signal: name }, 'stopping: finishing the look-ups under way'),
  });
  try {
    const report = await reconcile({ ...options, logger: log.logger, signal: stop.signal });
    // Reconcile sends no payment: only the look-ups' outcome decides, through the one function.
    const exitCode = runExitCode({
      sent: false,
      interrupted: report.interrupted,
      unavailable: report.unavailable,
      rowsOk: report.attention.length === 0,
    });
    return {
      exitCode,
      finished: { msg: 'reconcile finished', fields: { exitCode, counts: report.counts } },
      tell: () => summaryLines(report),
      print: ({ exitCode }) => {
        if (options.json) io.stdout.write(`${JSON.stringify(summaryJson(report, exitCode))}\n`);
      },
      cron: ({ exitCode }) => ({
        rows: new Map(Object.entries(report.counts)),
        amounts: new Map(Object.entries(report.totals)),
        writeSummary: async (out, extra) => {
          out.write(`${JSON.stringify({ ...summaryJson(report, exitCode), ...extra })}\n`);
        },
      }),
    };
  } finally {
    atEnd(() => stop.dispose());
  }
}

/** The `--json` summary object: counts and totals per outcome, every payout to look at. */
function summaryJson(report: ReconcileReport, exitCode: number): Record<string, unknown> {
  const totals = Object.fromEntries(
    Object.entries(report.totals).map(([outcome, map]) => [outcome, BatchSummary.formatTotals(map)]),
  );
  return {
    command: 'reconcile',
    register: report.register,
    service: report.service,
    integratorId: report.integratorId,
    counts: report.counts,
    totals,
    attention: report.attention,
    interrupted: report.interrupted,
    unavailable: report.unavailable,
    ...(report.alreadyFinal === undefined ? {} : { alreadyFinal: report.alreadyFinal }),
    exitCode,
  };
}

/** The summary a person reads: counts and totals per outcome, and every payout to look at. */
function summaryLines(report: ReconcileReport): string[] {
  const checked = Object.values(report.counts).reduce((a, b) => a + b, 0);
  if (report.alreadyFinal !== undefined) {
    // Nothing awaited an outcome: said so, with what is final, never an empty list.
    return [
      `payouts: nothing to reconcile: ${countOf(report.alreadyFinal, 'payout')} already final, of ${report.service} (integrator ${report.integratorId}) in ${report.register}`,
    ];
  }
  const lines = [
    `Reconciled ${countOf(checked, 'payout')} of ${report.service} (integrator ${report.integratorId || 'not reached'}) in ${report.register}:`,
  ];
  for (const { outcome, label } of OUTCOMES) {
    const n = report.counts[outcome];
    if (n === 0) continue;
    const totals = [...report.totals[outcome]]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, minor]) => `${currency} ${formatAmountForPeople(minor)}`)
      .join(', ');
    lines.push(`  ${String(n).padStart(7)} ${label}${totals ? ` - ${totals}` : ''}`);
  }
  if (report.attention.length > 0) {
    lines.push('To look at:');
    for (const p of report.attention) {
      const tx = p.transactionId ? ` transaction ${p.transactionId}` : '';
      lines.push(`  ${boundCell(p.reference)} (${p.outcome}${tx}): ${p.message ?? ''}`);
    }
  }
  if (report.unavailable)
    lines.push('payouts: the service stayed unavailable past --max-outage: run reconcile again later');
  if (report.interrupted) lines.push('payouts: interrupted: run reconcile again to finish');
  return lines;
}

/**
 * `--since DATE` as an ISO 8601 time: a day is its start, UTC. Only the ISO shapes are taken,
 * and the day must exist: Date.parse alone reads "12" as a year and 2026-02-30 as 2 March.
 */
function sinceOf(text: string): string {
  const trimmed = text.trim();
  const shape =
    /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/.exec(trimmed);
  const value = /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? `${trimmed}T00:00:00.000Z` : trimmed;
  const time = Date.parse(value);
  if (shape === null || Number.isNaN(time) || !isCalendarDay(shape[1]!, shape[2]!, shape[3]!))
    throw new UsageError(`--since ${text} is not a date: use YYYY-MM-DD (or an ISO 8601 time)`);
  return new Date(time).toISOString();
}

/** Whether the year, month and day name a day of the calendar (not 30 February). */
function isCalendarDay(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
}

/** reconcile's options: the service's, the register's, which payouts, the pace's, the logs'. */
function options(y: Argv) {
  return cronOptions(logOptions(connectionOptions(registerOption(y))))
    .positional('references', {
      type: 'string',
      array: true,
      describe: 'payout references (default: all)',
    })
    .option('since', {
      type: 'string',
      describe: 'only payouts sent or changed since this date (YYYY-MM-DD, or an ISO 8601 time)',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'print one JSON summary object on stdout',
    })
    .option('concurrency', { type: 'number', default: 4, describe: 'look-ups in flight at once' })
    .option('rate', { type: 'number', default: 20, describe: 'requests per second' })
    .option('max-outage', {
      type: 'number',
      default: BREAKER_DEFAULTS.maxOutageMs / 1000,
      describe: 'seconds an outage of the service is waited through before reconcile stops with exit 6',
    });
}

export const builder = options;

/** Parses reconcile's options into its typed options and runs it. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return runLifecycle(
    args as LogArgs,
    io,
    (log, atEnd) => {
      checkPace(args.concurrency, args.rate);
      checkMaxOutage(args['max-outage']);
      const since = args.since === undefined ? undefined : sinceOf(args.since);
      const parsed: ReconcileCommandOptions = {
        connection: connectionFromArgs(args, io.env),
        register: registerLocationText(args.register, io.env, io.cwd),
        registerFrom: registerSourceOf(args.register, io.env),
        references: (args.references ?? []).map(String),
        ...(since ? { since } : {}),
        json: args.json,
        concurrency: args.concurrency,
        rate: args.rate,
        maxOutageSeconds: args['max-outage'],
      };
      return reconcileCommand(parsed, io, log, atEnd);
    },
    undefined,
    () => {
      const setup = cronSetupOf(args, io);
      const statuses = OUTCOMES.map(({ outcome }) => outcome);
      return cronSignals({ command: 'reconcile', statuses, subject: setup.origin, ...setup });
    },
  );
}
