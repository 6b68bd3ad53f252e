/**
 * `payouts register copy --from A --to B` (README "Commands"): copies a register (SQLite path
 * or PostgreSQL URL) into another, idempotently, refusing conflicting records. Prints what it
 * copied, per kind of record, and every conflict on stdout; exit 0 without conflicts, 1 with
 * some. Its warnings and its last record are logs (stderr, or --log-file).
 */
import type { Argv } from 'yargs';
import { exitCodeOfError, outcomeCode } from '../../batch/exit-code.js';
import { UsageError } from '../../errors.js';
import { copyRegister } from '../../register/copy.js';
import { registerLocationText, shownLocation } from '../../register/location.js';
import { openExistingRegister, openRegister } from '../../register/open.js';
import type { ArgsOf } from '../command.js';
import type { CliIo } from '../io.js';
import { type CommandLog, type LogArgs, logOptions, logSettingsOf, openCommandLog } from '../logging.js';
import { countOf } from '../summary.js';

export interface RegisterCopyOptions {
  /** Location texts: file paths or PostgreSQL URLs. */
  from: string;
  to: string;
  json: boolean;
}

/** `payouts register copy`: copies and reports; returns the exit code. */
export async function registerCopyCommand(
  options: RegisterCopyOptions,
  io: CliIo,
  log: CommandLog = openCommandLog(logSettingsOf({}, io), io),
): Promise<number> {
  try {
    const [from, to] = [shownLocation(options.from), shownLocation(options.to)];
    if (from === to) throw new UsageError(`--from and --to name the same register (${from})`);
    const source = await openExistingRegister(options.from);
    if (source === undefined) throw new UsageError(`there is no register at ${from} to copy`);
    try {
      const target = await openRegister(options.to, { warn: (m) => log.logger.warn(m) });
      try {
        const report = await copyRegister(source, target);
        if (options.json) {
          io.stdout.write(`${JSON.stringify({ from, to, ...report })}\n`);
        } else {
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
          ] as const;
          const label = (kind: (typeof kinds)[number]) =>
            kind === 'history' ? 'histories' : kind === 'runApproval' ? 'run approvals' : `${kind}s`;
          io.stdout.write(`Copied ${from} into ${to}\n`);
          for (const kind of kinds) {
            io.stdout.write(
              `  ${label(kind).padEnd(13)} ${String(report.added[kind]).padStart(8)} added ${String(report.same[kind]).padStart(8)} already there\n`,
            );
          }
          if (report.conflicts.length > 0) {
            const n = report.conflicts.length;
            io.stdout.write(
              `${countOf(n, 'conflicting record')} ${n === 1 ? 'was' : 'were'} not copied (the target keeps its own):\n`,
            );
            for (const conflict of report.conflicts) io.stdout.write(`  ${conflict}\n`);
          }
        }
        const exitCode = outcomeCode(report.conflicts.length === 0);
        log.logger.info(
          { from, to, added: report.added, conflicts: report.conflicts.length, exitCode },
          'register copied',
        );
        if (log.jsonOnStderr) return exitCode;
        // A --log-file that could not be written (disk full) is known once it is closed: said
        // on stderr and in the exit code (2: the copy sends nothing), never lost.
        await log.close();
        const logFailure = log.failure();
        if (logFailure === undefined) return exitCode;
        io.stderr.write(`payouts: ${logFailure.message}\n`);
        return Math.max(exitCode, exitCodeOfError(logFailure));
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  } catch (error) {
    log.fail(error);
    throw error;
  } finally {
    await log.close();
  }
}

/** register's options: the action, both registers, the output and the logs. */
function options(y: Argv) {
  return logOptions(y)
    .positional('action', {
      choices: ['copy'] as const,
      describe: 'copy: every record of --from into --to',
    })
    .option('from', {
      type: 'string',
      demandOption: true,
      describe: 'the register to copy (path or postgres:// URL)',
    })
    .option('to', {
      type: 'string',
      demandOption: true,
      describe: 'the register to copy into (created if need be)',
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
  return registerCopyCommand(
    {
      from: registerLocationText(args.from, {}, io.cwd),
      to: registerLocationText(args.to, {}, io.cwd),
      json: args.json,
    },
    io,
    openCommandLog(logSettingsOf(args as LogArgs, io), io),
  );
}
