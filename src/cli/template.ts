import { UsageError } from '../errors.js';
import { parseRail, RAILS, type Rail } from '../rows/rails.js';
import { templateSpecs, writeTemplates } from '../sheet/templates.js';
import { type CliIo, println } from './io.js';

export interface TemplateCommandOptions {
  rails: string[];
  dir: string;
}

/** `payouts template [rail...]`: writes blank CSV and XLSX templates; returns the exit code. */
export async function templateCommand(options: TemplateCommandOptions, io: CliIo): Promise<number> {
  const rails: Rail[] = [];
  for (const name of options.rails) {
    const rail = parseRail(name);
    if (!rail) throw new UsageError(`"${name}" is not a rail - use one or more of ${RAILS.join(', ')}`);
    if (!rails.includes(rail)) rails.push(rail);
  }
  const written = await writeTemplates(options.dir, templateSpecs(rails));
  for (const file of written) println(io.stderr, `wrote ${file}`);
  return 0;
}
