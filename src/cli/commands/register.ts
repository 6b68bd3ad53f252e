/**
 * `payouts register init [PATH|URL]` and `payouts register copy --from A --to B` (README
 * "Commands"). init creates an empty register, the one way a register comes to be besides a
 * copy's target and a rehearsal's throwaway one; on an existing register it changes nothing.
 * copy copies a register (SQLite path or PostgreSQL URL) into another, idempotently, refusing
 * conflicting records, and prints what it copied, per kind of record, and every conflict on
 * stdout; exit 0 without conflicts, 1 with some. Their warnings and last record are logs
 * (stderr, or --log-file).
 */
import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { copyRegister } from '../../register/copy.js';
import {
  parseLocation,
  type RegisterSource,
  registerLocationText,
  registerSourceOf,
  shownLocation,
  sourceInWords,
} from '../../register/location.js';
import { initRegister, openExistingRegister, openRegister } from '../../register/open.js';
import type { ArgsOf } from '../command.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions } from '../logging.js';
import { countOf } from '../summary.js';

export interface RegisterCopyOptions {
  /** Location texts: file paths or PostgreSQL URLs. */
  from: string;
  to: string;
  json: boolean;
}

/** `payouts register copy`: copies and reports what it copied; says how it ended (lifecycle.ts). */
export async function registerCopyCommand(
  options: RegisterCopyOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const [from, to] = [shownLocation(options.from), shownLocation(options.to)];
  if (from === to) throw new UsageError(`--from and --to name the same register (${from})`);
  const source = await openExistingRegister(options.from);
  if (source === undefined) throw new UsageError(`there is no register at ${from} to copy`);
  let report: Awaited<ReturnType<typeof copyRegister>>;
  try {
    const target = await openRegister(options.to, { create: true, warn: (m) => log.logger.warn(m) });
    try {
      report = await copyRegister(source, target);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
  const exitCode = outcomeCode(report.conflicts.length === 0);
  io.stdout.write(
    options.json ? `${JSON.stringify({ from, to, ...report, exitCode })}\n` : copiedLines(from, to, report),
  );
  return {
    exitCode,
    finished: {
      msg: 'register copied',
      fields: { from, to, added: report.added, conflicts: report.conflicts.length, exitCode },
    },
  };
}

/** What a copy did, per kind of record, and every conflict, for a person. */
function copiedLines(from: string, to: string, report: Awaited<ReturnType<typeof copyRegister>>): string {
  const kinds = [
    'origin',
    'scope',
    'run',
    'payout',
    'payee',
    'history',
    'event',
    'approval',
    'runApproval',
    'withdrawal',
    'policyProposal',
    'policySignature',
    'policy',
  ] as const;
  const labels: Partial<Record<(typeof kinds)[number], string>> = {
    history: 'histories',
    runApproval: 'run approvals',
    policyProposal: 'policy proposals',
    policySignature: 'policy signatures',
    policy: 'policy versions',
  };
  const label = (kind: (typeof kinds)[number]) => labels[kind] ?? `${kind}s`;
  const lines = [`Copied ${from} into ${to}`];
  for (const kind of kinds) {
    lines.push(
      `  ${label(kind).padEnd(17)} ${String(report.added[kind]).padStart(8)} added ${String(report.same[kind]).padStart(8)} already there`,
    );
  }
  if (report.conflicts.length > 0) {
    const n = report.conflicts.length;
    lines.push(
      `${countOf(n, 'conflicting record')} ${n === 1 ? 'was' : 'were'} not copied (the target keeps its own):`,
    );
    for (const conflict of report.conflicts) lines.push(`  ${conflict}`);
  }
  return `${lines.join('\n')}\n`;
}

export interface RegisterInitOptions {
  /** A file path or a PostgreSQL URL. */
  location: string;
  /** Which of the argument, --register, PAYOUTS_REGISTER and the default named it. */
  from: RegisterSource | 'argument';
  json: boolean;
}

/** `payouts register init`: creates the register, or finds it there; says how it ended. */
export async function registerInitCommand(
  options: RegisterInitOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const shown = shownLocation(options.location);
  const { created } = await initRegister(options.location, { warn: (m) => log.logger.warn(m) });
  const exitCode = outcomeCode(true);
  const kind = parseLocation(options.location).kind;
  const where = options.from === 'argument' ? '' : ` (${sourceInWords(options.from)})`;
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ command: 'register init', register: shown, kind, created, exitCode })}\n`,
    );
  } else if (created) {
    io.stdout.write(
      kind === 'sqlite'
        ? `Created an empty register at ${shown}${where}: a SQLite file readable by this user only. Runs, approvals and reconcile use it from now on.\n`
        : `Created an empty register in ${shown}${where}: the payouts schema of that database. Runs, approvals and reconcile use it from now on.\n`,
    );
  } else {
    io.stdout.write(`There is a register at ${shown}${where} already: nothing was changed.\n`);
  }
  return {
    exitCode,
    finished: {
      msg: created ? 'register created' : 'register found',
      fields: { register: shown, created, exitCode },
    },
  };
}

/** register's options: the action, the registers, the output and the logs. */
function options(y: Argv) {
  return logOptions(y)
    .positional('action', {
      choices: ['copy', 'init'] as const,
      describe: 'init: create an empty register - copy: every record of --from into --to',
    })
    .positional('location', {
      type: 'string',
      describe:
        'init: where (a file path or postgres:// URL, default --register, PAYOUTS_REGISTER, the state directory)',
    })
    .option('register', {
      type: 'string',
      describe: 'init: the register to create (as the location argument)',
    })
    .option('from', {
      type: 'string',
      describe: 'copy: the register to copy (path or postgres:// URL)',
    })
    .option('to', {
      type: 'string',
      describe: 'copy: the register to copy into (created if need be)',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'print the counts and conflicts as JSON',
    });
}

export const builder = options;

/** Parses register's options and runs the action. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return runLifecycle(args as LogArgs, io, (log) => {
    if (args.action === 'init') {
      if (args.from !== undefined || args.to !== undefined)
        throw new UsageError('register init takes no --from or --to: those are for register copy');
      if (args.location !== undefined && args.register !== undefined)
        throw new UsageError(
          'register init takes the location once: as its argument or as --register, not both',
        );
      const named = args.location ?? args.register;
      return registerInitCommand(
        {
          location: registerLocationText(named, io.env, io.cwd),
          from: args.location !== undefined ? 'argument' : registerSourceOf(args.register, io.env),
          json: args.json,
        },
        io,
        log,
      );
    }
    const missing = (['from', 'to'] as const).filter((name) => args[name] === undefined);
    if (missing.length > 0)
      throw new UsageError(`payouts register copy needs ${missing.map((name) => `--${name}`).join(' and ')}`);
    if (args.location !== undefined)
      throw new UsageError(
        `register copy takes its registers as --from and --to, not as an argument (${args.location})`,
      );
    return registerCopyCommand(
      {
        from: registerLocationText(args.from, {}, io.cwd),
        to: registerLocationText(args.to, {}, io.cwd),
        json: args.json,
      },
      io,
      log,
    );
  });
}
