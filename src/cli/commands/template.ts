/** `payouts template [rail...]` (README "Commands"): blank CSV and XLSX sheet templates. */
import type { Argv } from 'yargs';
import { parseRail, RAILS, type Rail } from '../../columns/rails.js';
import { UsageError } from '../../errors.js';
import {
  checkTemplateFolder,
  existingPaths,
  templatePaths,
  templateSpecs,
  writeTemplatesTo,
} from '../../rows/templates.js';
import type { ArgsOf } from '../command.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type LogArgs, logOptions } from '../logging.js';
import { resolveFrom } from '../options.js';

export interface TemplateCommandOptions {
  rails: string[];
  dir: string;
  /** Overwrite templates that already exist (they may be filled-in sheets). */
  force?: boolean;
}

/** `payouts template [rail...]`: writes blank CSV and XLSX templates; says how it ended. */
export async function templateCommand(options: TemplateCommandOptions): Promise<Ending> {
  const rails: Rail[] = [];
  for (const name of options.rails) {
    const rail = parseRail(name);
    if (!rail) throw new UsageError(`"${name}" is not a rail - use one or more of ${RAILS.join(', ')}`);
    if (!rails.includes(rail)) rails.push(rail);
  }
  const specs = templateSpecs(rails);
  await checkTemplateFolder(options.dir);
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
  const written = await writeTemplatesTo(options.dir, specs);
  return { exitCode: outcomeCode(true), tell: () => written.map((file) => `wrote ${file}`) };
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
  return runLifecycle(args as LogArgs, io, () => templateCommand(options));
}
