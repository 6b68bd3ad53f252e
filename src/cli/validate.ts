import type { ControlTotals } from '../batch/guards.js';
import type { SheetOptions } from '../batch/prepare.js';
import { type ValidateOptions, validateSheet } from '../batch/validate.js';
import { systemClock } from '../clock.js';
import { writeReport } from '../report/html.js';
import { reportPathFor } from '../sheet/results-path.js';
import type { CliIo } from './io.js';
import { RowCounter } from './progress.js';
import { exitCodeOf, printHumanSummary, type SummaryFacts, summaryJson } from './summary.js';

export interface ValidateCommandOptions extends SheetOptions {
  outPath?: string;
  json: boolean;
  controls: ControlTotals;
  register?: ValidateOptions['register'];
  holdChangedPayees?: boolean;
  /** `--report PATH`; false for --no-report; undefined: `<sheet name>.report.html` beside the results. */
  report?: string | false;
}

/** `payouts validate <sheet>`: runs the dry run and reports it; returns the exit code. */
export async function validateCommand(options: ValidateCommandOptions, io: CliIo): Promise<number> {
  const counter = new RowCounter(io.stderr, 'Validating');
  const report = await validateSheet({
    ...options,
    warnedReferences: options.json,
    onProgress: (n) => counter.update(n),
  });
  counter.done();
  const reportPath =
    options.report === false
      ? undefined
      : (options.report ?? reportPathFor(report.sheetPath, report.resultsPath));
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
    warnings: report.warnings,
    ...(reportPath ? { reportPath } : {}),
    error: report.guardError,
  };
  if (reportPath) {
    await writeReport(reportPath, {
      command: 'validate',
      sheetPath: report.sheetPath,
      at: new Date(systemClock.now()),
      digest: report.digest,
      summary: report.summary,
      warnings: report.warnings,
      controls: options.controls,
      guardError: report.guardError,
      resultsPath: report.resultsPath,
      registerPath: report.register ?? null,
      holdChangedPayees: options.holdChangedPayees,
    });
  }
  printHumanSummary(io, facts);
  if (report.registerNote) io.stderr.write(`Register not checked: ${report.registerNote}\n`);
  if (options.json) io.stdout.write(`${JSON.stringify(summaryJson(facts))}\n`);
  return exitCodeOf(facts);
}
