/**
 * `payouts status [reference...]`: what the register knows (README "Commands"), as a table for
 * people, or `--json` / `--csv` for scripts. Exit 1 when a reference asked for is not there.
 * It reads the register only: no network, no writes, hence no logging options.
 */
import { stringify } from 'csv-stringify/sync';
import type { Argv } from 'yargs';
import type { PolicyView } from '../../approvals/policy-gate.js';
import { withoutWithdrawn } from '../../approvals/withdrawals.js';
import type { SheetOptions } from '../../batch/prepare.js';
import { systemClock } from '../../clock.js';
import { UsageError } from '../../errors.js';
import type { ScopeHint } from '../../register/choose.js';
import { serviceOf } from '../../register/identity.js';
import { type RegisterSource, registerLocationText, registerSourceOf } from '../../register/location.js';
import { openNamedRegister } from '../../register/open.js';
import {
  type ReferenceStatus,
  type RunStatus,
  registerStatus,
  type StatusReport,
} from '../../register/status.js';
import type { ArgsOf } from '../command.js';
import { outcomeCode } from '../exit-code.js';
import { type CliIo, println } from '../io.js';
import { registerHint, registerOption, sheetReadingOf, sheetReadingOptions } from '../options.js';
import { policyViewOf } from '../policy-shown.js';
import { countOf, policyLines } from '../summary.js';

export interface StatusCommandOptions extends ScopeHint {
  register: string;
  registerFrom?: RegisterSource;
  references: string[];
  limit: number;
  format: 'text' | 'json' | 'csv';
}

const REFERENCE_COLUMNS = [
  'reference',
  'state',
  'amount',
  'currency',
  'rail',
  'payee',
  'transactionId',
  'when',
  'sheet',
  'error',
  'service',
  'integratorId',
] as const satisfies readonly (keyof ReferenceStatus)[];

const RUN_COLUMNS = [
  'startedAt',
  'state',
  'sheet',
  'rows',
  'statuses',
  'exitCode',
  'finishedAt',
  'digest',
  'runId',
  'host',
  'pid',
  'service',
  'integratorId',
  // Last, so that the columns before it keep their places for scripts that read them by position.
  'approvals',
] as const satisfies readonly (keyof RunStatus)[];

/**
 * Between the principals of the `approvals` column: a comma, which no principal holds (an
 * allowed-signers line lists its principals separated by commas).
 */
export const APPROVERS_SEPARATOR = ',';

/** One approval of a sheet's current statement, as `status --approvals` shows it. */
export interface SheetApproval {
  principals: string[];
  fingerprint: string;
  recordedAt: string;
  /** The day the statement was made. */
  day: string;
}

/**
 * `payouts status --approvals SHEET`: the approvals the register holds of the sheet's current
 * statement (its digest now, for this service), as recorded; `run` checks each again itself.
 */
export async function sheetApprovalsCommand(
  options: {
    register: string;
    registerFrom?: RegisterSource;
    service: string;
    login?: string;
    format: 'text' | 'json' | 'csv';
  } & SheetOptions,
  io: CliIo,
): Promise<number> {
  // Loaded here alone: status without --approvals reads no sheet.
  const { currentStatement } = await import('./approve.js');
  const { register: location, registerFrom, service, login, format: _, ...reading } = options;
  // Before the sheet is read: a register that is not there has no approvals to list.
  const register = await openNamedRegister(location, registerFrom);
  const approvals: SheetApproval[] = [];
  let policy: PolicyView | null = null;
  let current: Awaited<ReturnType<typeof currentStatement>>;
  try {
    current = await currentStatement({
      ...reading,
      register: {
        location,
        service,
        ...(login === undefined ? {} : { login }),
      },
    });
    const recorded = withoutWithdrawn(
      await register.approvals({ digest: current.digest }),
      await register.withdrawals({ digest: current.digest }),
    );
    policy = await policyViewOf(
      register,
      current.origin,
      { digest: current.digest, sheet: current.sheet, now: systemClock.now() },
      current.facts,
    );
    for (const record of recorded) {
      if (record.origin !== current.origin) continue;
      const day = /\nday: (\S+)\n$/.exec(record.statement)?.[1] ?? '';
      approvals.push({
        principals: record.principals,
        fingerprint: record.fingerprint,
        recordedAt: record.recordedAt,
        day,
      });
    }
  } finally {
    await register.close();
  }
  const facts = {
    sheet: current.sheet,
    digest: current.digest,
    origin: current.origin,
    approvals,
    policy,
    exitCode: outcomeCode(true),
  };
  printSheetApprovals(io, options.format, facts);
  return outcomeCode(true);
}

/** The approvals of a sheet's current statement (and the policy's rules) as asked: JSON, CSV or text. */
function printSheetApprovals(
  io: CliIo,
  format: 'text' | 'json' | 'csv',
  facts: {
    sheet: string;
    digest: string;
    origin: string;
    approvals: SheetApproval[];
    policy: PolicyView | null;
  },
): void {
  const { approvals, policy } = facts;
  if (format === 'json') io.stdout.write(`${JSON.stringify(facts)}\n`);
  else if (format === 'csv') {
    const columns = ['principals', 'fingerprint', 'recordedAt', 'day'] as const;
    io.stdout.write(
      stringify([
        columns,
        ...approvals.map((a) =>
          columns.map((c) => cellText(Array.isArray(a[c]) ? (a[c] as string[]).join(' ') : a[c])),
        ),
      ]),
    );
  } else {
    println(io.stdout, `${facts.sheet} (digest ${facts.digest}, ${facts.origin}):`);
    if (approvals.length === 0) println(io.stdout, '  not yet approved');
    for (const a of approvals) {
      const who =
        a.principals.length > 0
          ? a.principals.join(', ')
          : 'a key not checked against an allowed-signers file';
      println(
        io.stdout,
        `  approved by ${who} (${a.fingerprint}), statement of ${a.day}, recorded ${a.recordedAt}`,
      );
    }
    for (const line of policyLines(policy)) println(io.stdout, `  ${line}`);
  }
}

/** `payouts status`: prints what the register knows; returns the exit code. */
export async function statusCommand(options: StatusCommandOptions, io: CliIo): Promise<number> {
  const report = await registerStatus(options);
  const elsewhere = await otherServices(options, report);
  if (elsewhere.length > 0) {
    // "No runs" would be wrong: the register has runs, of services the hint left out.
    println(
      io.stderr,
      `payouts: the register has no runs of ${options.service ?? 'this service'}, but it has runs of ${elsewhere.join(', ')}: pass --base-url with one of them (PAYOUTS_BASE_URL is read too), or leave out --base-url and unset PAYOUTS_BASE_URL to list every service's runs`,
    );
  } else if (report.note) println(io.stderr, `payouts: ${report.note}`);
  const rows = (report.kind === 'references' ? report.references : report.runs) as unknown as Record<
    string,
    unknown
  >[];
  const columns: readonly string[] = report.kind === 'references' ? REFERENCE_COLUMNS : RUN_COLUMNS;
  const missing = report.kind === 'references' && report.references.some((r) => r.state === 'not-found');
  const exitCode = outcomeCode(!missing);
  if (options.format === 'json') {
    const others = elsewhere.length > 0 ? { runsOfOtherServices: elsewhere } : {};
    io.stdout.write(
      `${JSON.stringify({ register: report.register, [report.kind]: rows, ...others, exitCode })}\n`,
    );
  } else if (options.format === 'csv') {
    io.stdout.write(
      stringify([
        columns,
        ...rows.map((row) =>
          columns.map((c) =>
            c === 'approvals'
              ? (row[c] as RunStatus['approvals']).map((a) => a.principal).join(APPROVERS_SEPARATOR)
              : cellText(row[c]),
          ),
        ),
      ]),
    );
  } else {
    printTable(io, report.kind, rows, report.register, elsewhere.length > 0 ? options.service : undefined);
  }
  return exitCode;
}

/** The services with runs in the register when the hint's service has none (else none). */
async function otherServices(options: StatusCommandOptions, report: StatusReport): Promise<string[]> {
  if (report.kind !== 'runs' || report.runs.length > 0 || options.service === undefined) return [];
  const { service: _, login: __, ...everyScope } = options;
  const all = await registerStatus(everyScope);
  return all.kind === 'runs' ? [...new Set(all.runs.map((r) => r.service))].sort() : [];
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, number>)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  }
  return String(value);
}

function printTable(
  io: CliIo,
  kind: 'references' | 'runs',
  rows: Record<string, unknown>[],
  path: string,
  /** The service asked for, when other services have runs (said on stderr). */
  asked?: string,
): void {
  println(io.stdout, `Register: ${path}`);
  if (rows.length === 0) {
    const none =
      asked === undefined ? 'No runs recorded yet.' : `No runs of ${asked} (other services have some).`;
    println(io.stdout, kind === 'runs' ? none : 'No such references.');
    return;
  }
  for (const row of rows) {
    if (kind === 'references') {
      const r = row as unknown as ReferenceStatus;
      if (r.state === 'not-found') {
        println(io.stdout, `${r.reference}: not in the register (never sent by payouts with this register)`);
        continue;
      }
      const tx = r.transactionId ? ` transaction ${r.transactionId}` : '';
      println(
        io.stdout,
        `${r.reference}: ${r.state}, ${r.currency} ${r.amount} by ${r.rail} to ${r.payee},${tx} on ${r.when} from ${r.sheet}${r.error ? ` (${r.error})` : ''}`,
      );
    } else {
      const r = row as unknown as RunStatus;
      const counts = r.statuses ? ` ${cellText(r.statuses)}` : '';
      const approved =
        r.approvals.length > 0 ? `, approved by ${r.approvals.map((a) => a.principal).join(', ')}` : '';
      // Each time says what it is: a run's start is not when it finished.
      const ended =
        r.state === 'finished' && r.finishedAt !== undefined
          ? `finished ${r.finishedAt}`
          : r.state === 'running'
            ? 'still running'
            : 'died (never finished: payouts reconcile settles what it sent)';
      println(
        io.stdout,
        `started ${r.startedAt}, ${ended}: ${r.sheet}, ${r.rows === undefined ? '? rows' : countOf(r.rows, 'row')}${counts}${r.exitCode === undefined ? '' : `, exit ${r.exitCode}`}${approved} (run ${r.runId}, ${r.service})`,
      );
    }
  }
}

/** status's options: the register, which scope, how many runs, the output format. */
function options(y: Argv) {
  return (
    sheetReadingOptions(registerOption(y))
      .positional('references', { type: 'string', array: true, describe: 'payout references' })
      .option('base-url', {
        type: 'string',
        describe: 'only the register scope of this service (default PAYOUTS_BASE_URL, else every scope)',
      })
      .option('limit', { type: 'number', default: 20, describe: 'how many recent runs to list' })
      .option('approvals', {
        type: 'string',
        describe: "list the signed approvals of this sheet's current approval statement (needs --base-url)",
      })
      // No defaults: yargs counts a default as given, and the two conflict.
      .option('json', { type: 'boolean', describe: 'print JSON on stdout' })
      .option('csv', { type: 'boolean', describe: 'print CSV on stdout' })
      .conflicts('json', 'csv')
  );
}

export const builder = options;

/** Parses status's options and runs it. */
export async function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  if (!Number.isInteger(args.limit) || args.limit <= 0)
    throw new UsageError(`--limit must be a whole number of runs, got ${args.limit}`);
  const format = args.json ? 'json' : args.csv ? 'csv' : 'text';
  if (args.approvals !== undefined) {
    const hint = registerHint(args, io);
    if (hint.service === undefined) {
      throw new UsageError(
        'status --approvals SHEET needs the service the approvals are for: --base-url URL (or PAYOUTS_BASE_URL)',
      );
    }
    return sheetApprovalsCommand(
      {
        register: registerLocationText(args.register, io.env, io.cwd),
        registerFrom: hint.from,
        service: serviceOf(hint.service),
        ...(hint.login === undefined ? {} : { login: hint.login }),
        ...sheetReadingOf(args.approvals, args, io),
        format,
      },
      io,
    );
  }
  return statusCommand(
    {
      ...registerHint(args, io),
      register: registerLocationText(args.register, io.env, io.cwd),
      registerFrom: registerSourceOf(args.register, io.env),
      references: (args.references ?? []).map(String),
      limit: args.limit,
      format,
    },
    io,
  );
}
