import { BatchSummary, formatAmountForPeople, ROW_STATUSES } from '../batch/summary.js';
import type { RowSample } from '../batch/validate.js';
import { EXIT, type PayoutsError } from '../errors.js';
import { boundCell } from '../sheet/quote.js';
import { type CliIo, println } from './io.js';

/** The facts a command reports, in both the human and the `--json` summary. */
export interface SummaryFacts {
  command: 'validate' | 'run';
  sheetPath: string;
  format: string;
  summary: BatchSummary;
  digest: string;
  resultsPath: string;
  /** The register the command used (null: none, or a throwaway one for --sandbox). */
  registerPath: string | null;
  /** `run --sandbox`: a rehearsal against the embedded sandbox; nothing real was paid. */
  sandbox?: boolean;
  unknownColumns: string[];
  samples: RowSample[];
  error?: PayoutsError;
}

/** PRODUCT.md `--json`: one JSON object on stdout. */
export function summaryJson(facts: SummaryFacts): Record<string, unknown> {
  const { summary } = facts;
  return {
    command: facts.command,
    sheet: facts.sheetPath,
    format: facts.format,
    rows: summary.rows,
    statuses: Object.fromEntries(ROW_STATUSES.map((s) => [s, summary.byStatus[s]])),
    totals: BatchSummary.formatTotals(summary.sheetTotals),
    validTotals: BatchSummary.formatTotals(summary.validTotals),
    groupedAmounts: summary.groupedAmounts,
    totalsRows: summary.totalsRows,
    digest: facts.digest,
    results: facts.resultsPath,
    register: facts.registerPath,
    ...(facts.sandbox ? { sandbox: true } : {}),
    unknownColumns: facts.unknownColumns,
    exitCode: exitCodeOf(facts),
    ...(facts.error ? { error: { code: facts.error.code, message: facts.error.message } } : {}),
  };
}

/** Exit code of PRODUCT.md for a finished command. */
export function exitCodeOf(facts: SummaryFacts): number {
  if (facts.error) return facts.error.exitCode;
  return facts.summary.allOk ? EXIT.ok : EXIT.rowsNotOk;
}

/** The short human summary on stderr: rows per status, totals, digest, where the results are. */
export function printHumanSummary(io: CliIo, facts: SummaryFacts): void {
  const { summary } = facts;
  const out = io.stderr;
  const verb = facts.command === 'validate' ? 'Validated' : facts.sandbox ? 'Rehearsed' : 'Ran';
  println(
    out,
    `${verb} ${facts.sheetPath}: ${summary.rows.toLocaleString('en-US')} rows${facts.sandbox ? ' against the embedded sandbox (nothing real was paid)' : ''}`,
  );
  for (const status of ROW_STATUSES) {
    const n = summary.byStatus[status];
    if (n > 0) println(out, `  ${status.padEnd(10)} ${n.toLocaleString('en-US').padStart(9)}`);
  }
  if (facts.unknownColumns.length > 0) {
    println(out, `Unknown columns, kept in the results as they are: ${facts.unknownColumns.join(', ')}`);
  }
  if (summary.sheetTotals.size > 0) {
    println(out, 'Total per currency (all rows / valid rows):');
    for (const [currency, minor] of [...summary.sheetTotals].sort(([a], [b]) => a.localeCompare(b))) {
      const valid = summary.validTotals.get(currency) ?? 0n;
      println(
        out,
        `  ${currency} ${formatAmountForPeople(minor).padStart(18)} / ${formatAmountForPeople(valid)}`,
      );
    }
  }
  for (const message of summary.totalsRows) println(out, `Totals row: ${message}`);
  if (summary.groupedAmounts > 0) {
    const n = summary.groupedAmounts;
    println(
      out,
      `${n.toLocaleString('en-US')} amount${n === 1 ? ' was' : 's were'} written with digit grouping (such as 1,250.00) and read as plain decimals`,
    );
  }
  if (facts.samples.length > 0) {
    const invalid = summary.byStatus.invalid + summary.byStatus.failed + summary.byStatus.unknown;
    println(
      out,
      `Rows that need attention${invalid > facts.samples.length ? ` (first ${facts.samples.length} of ${invalid})` : ''}:`,
    );
    for (const sample of facts.samples) {
      const ref = sample.reference ? ` (${boundCell(sample.reference)})` : '';
      println(out, `  row ${sample.rowNumber}${ref}: ${sample.messages.join('; ')}`);
    }
  }
  println(out, `Batch digest: ${facts.digest}`);
  println(out, `Results: ${facts.resultsPath}`);
  if (facts.registerPath) println(out, `Register: ${facts.registerPath}`);
  if (facts.error) println(out, `payouts: ${facts.error.message}`);
}
