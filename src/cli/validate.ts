import type { ControlTotals } from '../batch/guards.js';
import type { SheetOptions } from '../batch/prepare.js';
import { type ValidateOptions, validateSheet } from '../batch/validate.js';
import type { CliIo } from './io.js';
import { RowCounter } from './progress.js';
import { exitCodeOf, printHumanSummary, type SummaryFacts, summaryJson } from './summary.js';

export interface ValidateCommandOptions extends SheetOptions {
  outPath?: string;
  json: boolean;
  controls: ControlTotals;
  register?: ValidateOptions['register'];
}

/** `payouts validate <sheet>`: runs the dry run and reports it; returns the exit code. */
export async function validateCommand(options: ValidateCommandOptions, io: CliIo): Promise<number> {
  const counter = new RowCounter(io.stderr, 'Validating');
  const report = await validateSheet({ ...options, onProgress: (n) => counter.update(n) });
  counter.done();
  const facts: SummaryFacts = {
    command: 'validate',
    sheetPath: report.sheetPath,
    format: report.format,
    summary: report.summary,
    digest: report.digest,
    resultsPath: report.resultsPath,
    registerPath: report.register ?? null,
    unknownColumns: report.unknownColumns,
    samples: report.invalidSamples,
    error: report.guardError,
  };
  printHumanSummary(io, facts);
  if (report.registerNote) io.stderr.write(`Register not checked: ${report.registerNote}\n`);
  if (options.json) io.stdout.write(`${JSON.stringify(summaryJson(facts))}\n`);
  return exitCodeOf(facts);
}
