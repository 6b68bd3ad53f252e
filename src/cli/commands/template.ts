/** `payouts template [rail...]` (README "Commands"): blank CSV and XLSX sheet templates. */
import { stat } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { outcomeCode } from '../../batch/exit-code.js';
import { parseRail, RAILS, type Rail } from '../../columns/rails.js';
import { ConfigError, errnoOf, systemErrorInWords, UsageError } from '../../errors.js';
import { existingPaths, templatePaths, templateSpecs, writeTemplates } from '../../rows/templates.js';
import type { ArgsOf } from '../command.js';
import type { CliIo } from '../io.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions, withCommandLog } from '../logging.js';
import { resolveFrom } from '../options.js';

export interface TemplateCommandOptions {
  rails: string[];
  dir: string;
  /** Overwrite templates that already exist (they may be filled-in sheets). */
  force?: boolean;
}

/** `payouts template [rail...]`: writes blank CSV and XLSX templates; returns the exit code. */
export async function templateCommand(
  options: TemplateCommandOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<number> {
  const rails: Rail[] = [];
  for (const name of options.rails) {
    const rail = parseRail(name);
    if (!rail) throw new UsageError(`"${name}" is not a rail - use one or more of ${RAILS.join(', ')}`);
    if (!rails.includes(rail)) rails.push(rail);
  }
  const specs = templateSpecs(rails);
  await checkFolder(options.dir);
  if (!options.force) {
    // Nothing is written when any target exists: a half-written set is as confusing as a lost sheet.
    const existing = await existingPaths(templatePaths(options.dir, specs));
    if (existing.length > 0) {
      const named =
        existing.length > 3
          ? `${existing.slice(0, 3).join(', ')} and ${existing.length - 3} more`
          : existing.join(', ');
      throw new UsageError(
        `not writing templates: ${named} already exist${existing.length === 1 ? 's' : ''} and may be filled in - pass --force to overwrite, or choose another --dir`,
      );
    }
  }
  const written = await writeTemplates(options.dir, specs).catch((error: unknown) => {
    // A folder the system refuses is the user's to fix (exit 2), not a bug of payouts (70).
    if (errnoOf(error) === undefined) throw error;
    throw cannotWrite(options.dir, error);
  });
  log.tell(written.map((file) => `wrote ${file}`));
  return outcomeCode(true);
}

/**
 * `--dir` is a folder, or nothing yet (it is made): a file there would otherwise read as
 * "templates already exist", and a path under a file as a bug.
 */
async function checkFolder(dir: string): Promise<void> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(dir)).isDirectory();
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw cannotWrite(dir, error);
  }
  if (!isFolder)
    throw new ConfigError(`--dir ${dir} is a file, not a folder: choose a folder for the templates`);
}

function cannotWrite(dir: string, error: unknown): ConfigError {
  return new ConfigError(
    `cannot write the templates to ${dir}: ${systemErrorInWords(error)} - choose another --dir`,
    { cause: error },
  );
}

/** template's options: which rails, where, and whether to overwrite. */
function options(y: Argv) {
  return logOptions(y)
    .positional('rails', {
      type: 'string',
      array: true,
      describe: 'rails (default: all, plus one with every rail)',
    })
    .option('dir', { type: 'string', default: '.', describe: 'folder to write the templates to' })
    .option('force', {
      type: 'boolean',
      default: false,
      describe: 'overwrite templates that already exist in --dir',
    });
}

export const builder = options;

/** Parses template's options and runs it. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  const options = { rails: args.rails ?? [], dir: resolveFrom(io.cwd, args.dir), force: args.force };
  return withCommandLog(args as LogArgs, io, (log) => templateCommand(options, io, log));
}
