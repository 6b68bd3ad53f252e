import type { PolicyView } from '../approvals/policy-gate.js';
import type { ControlTotals } from '../batch/guards.js';
import { chosenInWords, type SincePrevious } from '../batch/since-previous.js';
import {
  BatchSummary,
  formatAmountForPeople,
  groupDecimalForPeople,
  ROW_STATUSES,
} from '../batch/summary.js';
import type { RowSample } from '../batch/verdicts.js';
import { SIGNALS, type WarningTally } from '../batch/warnings.js';
import type { PayoutsError } from '../errors.js';
import { boundCell } from '../sheet/quote.js';
import { runExitCode } from './exit-code.js';
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
  /** Why validate read no register (several services and no --base-url, ...), if it read none. */
  registerNote?: string;
  /** `run --sandbox`: a rehearsal against the embedded sandbox; nothing real was paid. */
  sandbox?: boolean;
  unknownColumns: string[];
  samples: RowSample[];
  /** The approver's warnings (warnings.ts). */
  warnings: WarningTally;
  /** What changed since the previous batch the register paid; null without one. */
  sincePrevious: SincePrevious | null;
  /** The HTML report written, if any. */
  reportPath?: string;
  /** run: the signed approvals it relied on (README "Approvals"); none without the gate. */
  approvals?: readonly { principal: string; fingerprint: string; recordedAt: string }[];
  /** The register's approval policy as judged for this batch (null: none, or no register read). */
  policy?: PolicyView | null;
  /** `--expect-count`, `--expect-total`: confirmed in the summary when they match. */
  controls?: ControlTotals;
  error?: PayoutsError;
}

/**
 * README `--json`: one JSON object on stdout, written as a stream: the references of each
 * warning signal (every warned row's, a million in a first month of a million payees) go out a
 * chunk at a time instead of as one array and one string.
 */
export async function writeSummaryJson(
  out: NodeJS.WritableStream,
  facts: SummaryFacts,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const text = JSON.stringify({ ...summaryJson(facts), ...extra });
  const place = text.indexOf(JSON.stringify(WARNINGS_PLACE));
  await written(out, text.slice(0, place));
  let first = true;
  await written(out, '{');
  for (const signal of SIGNALS) {
    await written(out, `${first ? '' : ','}${JSON.stringify(signal)}:[`);
    first = false;
    let firstReference = true;
    for (const chunk of facts.warnings.referenceChunks(signal)) {
      await written(out, `${firstReference ? '' : ','}${chunk.map((r) => JSON.stringify(r)).join(',')}`);
      firstReference = false;
    }
    await written(out, ']');
  }
  await written(out, `}${text.slice(place + JSON.stringify(WARNINGS_PLACE).length)}\n`);
}

/** Stands for the warnings in the summary until they are streamed in its place. */
const WARNINGS_PLACE = '\u0000warnings\u0000';

/** Writes, waiting while the reader is behind (a pipe to a slow consumer). */
async function written(out: NodeJS.WritableStream, text: string): Promise<void> {
  // A reader that closed its end (`--json | head -c 1`) fails the write with EPIPE and never
  // drains: what cannot be printed is dropped (signals.ts tolerateClosedOutput), and the command
  // goes on to its exit code instead of waiting forever.
  const stream = out as NodeJS.WritableStream & { destroyed?: boolean; errored?: unknown };
  if (stream.destroyed === true || (stream.errored ?? null) !== null) return;
  if (out.write(text)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('error', done);
      out.off('close', done);
      resolve();
    };
    out.once('drain', done);
    out.once('error', done);
    out.once('close', done);
  });
}

/**
 * `sincePrevious` as the JSON summary writes it: the previous batch's `sheet`, `at` and `rows`
 * first, then the same under `batch` (as earlier versions wrote them only), the totals and
 * the lists.
 */
function sinceJson(since: SincePrevious | null): Record<string, unknown> | null {
  if (since === null) return null;
  const { sheet, at, rows, chosenBy } = since.batch;
  return { sheet, at, rows, chosenBy: chosenBy ?? 'latest', ...since };
}

/** The JSON summary, its warnings left out (`writeSummaryJson` streams them in their place). */
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
    sendTotals: BatchSummary.formatTotals(summary.sendTotals),
    groupedAmounts: summary.groupedAmounts,
    untotalledRows: summary.untotalledRows,
    strayQuoteRow: summary.strayQuoteRow ?? null,
    totalsRows: summary.totalsRows,
    digest: facts.digest,
    warnings: WARNINGS_PLACE,
    sincePrevious: sinceJson(facts.sincePrevious),
    ...(facts.approvals
      ? {
          approvals: facts.approvals.map(({ principal, fingerprint, recordedAt }) => ({
            principal,
            fingerprint,
            recordedAt,
          })),
        }
      : {}),
    policy: facts.policy ?? null,
    results: facts.resultsPath,
    report: facts.reportPath ?? null,
    register: facts.registerPath,
    ...(facts.registerNote ? { registerNotChecked: facts.registerNote } : {}),
    ...(facts.sandbox ? { sandbox: true } : {}),
    unknownColumns: facts.unknownColumns,
    exitCode: exitCodeOf(facts),
    ...(facts.error ? { error: { code: facts.error.code, message: facts.error.message } } : {}),
  };
}

/** A few lines on what changed since the previous batch (the report and the JSON have it all). */
function sinceLines(since: SincePrevious | null): string[] {
  if (since === null) return [];
  const { batch } = since;
  const lines = [
    `Since the previous batch (${boundCell(batch.sheet)}, ${batch.at.slice(0, 10)}, ${countOf(batch.rows, 'row')}: ${chosenInWords(batch.chosenBy)}):`,
  ];
  for (const [currency, t] of Object.entries(since.totals))
    lines.push(
      `  ${currency} ${groupDecimalForPeople(t.previous)} then, ${groupDecimalForPeople(t.current)} now (${groupDecimalForPeople(t.change)})`,
    );
  const missing = since.missingPayees;
  if (missing.length > 0) {
    const names = missing.slice(0, 3).map((m) => boundCell(m.name));
    lines.push(
      `  ${countOf(missing.length, 'payee')} paid then and missing now: ${names.join(', ')}${missing.length > 3 ? ', ...' : ''}`,
    );
  }
  const changed = since.changedAmounts;
  const [first] = changed.slice(0, 1);
  if (first !== undefined) {
    lines.push(
      `  ${countOf(changed.length, 'payee')} with another amount, the largest change: ${boundCell(first.name)} ${groupDecimalForPeople(first.previous)} -> ${groupDecimalForPeople(first.current)} ${first.currency}`,
    );
  }
  return lines;
}

/** The exit code of a finished validate (README "Exit codes"): it sends nothing. */
export function exitCodeOf(facts: SummaryFacts): number {
  return runExitCode({ sent: false, error: facts.error, rowsOk: facts.summary.allOk });
}

/** The short human summary on stderr: rows per status, totals, digest, where the results are. */
export function printHumanSummary(io: CliIo, facts: SummaryFacts): void {
  for (const line of humanSummary(facts)) println(io.stderr, line);
}

/** The lines of the human summary (a terminal's, or one JSON log record's when logs are JSON). */
export function humanSummary(facts: SummaryFacts): string[] {
  const { summary } = facts;
  const lines: string[] = [];
  const verb = facts.command === 'validate' ? 'Validated' : facts.sandbox ? 'Rehearsed' : 'Ran';
  lines.push(
    `${verb} ${facts.sheetPath}: ${countOf(summary.rows, 'row')}${facts.sandbox ? ' against the embedded sandbox (nothing real was paid)' : ''}`,
  );
  // Said before the counts: without the register, "valid" does not say what a run would send.
  if (facts.registerNote) {
    lines.push(
      /several services/.test(facts.registerNote)
        ? `Warning: the register was not checked, so rows paid before show as valid: ${facts.registerNote}`
        : `Register not checked: ${facts.registerNote}`,
    );
  }
  for (const status of ROW_STATUSES) {
    const n = summary.byStatus[status];
    if (n > 0) lines.push(`  ${status.padEnd(10)} ${n.toLocaleString('en-US').padStart(9)}`);
  }
  if (facts.unknownColumns.length > 0) {
    lines.push(`Unknown columns, kept in the results as they are: ${facts.unknownColumns.join(', ')}`);
  }
  lines.push(...totalsLines(facts));
  lines.push(...sinceLines(facts.sincePrevious));
  lines.push(...readingNotes(summary));
  lines.push(...attentionLines(facts), ...approverWarningLines(facts.warnings));
  const confirmed = controlTotalsLine(facts);
  if (confirmed) lines.push(confirmed);
  lines.push(`Batch digest: ${facts.digest}`);
  if (facts.approvals && facts.approvals.length > 0) {
    lines.push(
      `Approved by: ${facts.approvals.map((a) => `${a.principal} (${a.fingerprint}, recorded ${a.recordedAt})`).join(', ')}`,
    );
  }
  lines.push(...policyLines(facts.policy));
  lines.push(`Results: ${facts.resultsPath}`);
  if (facts.reportPath) lines.push(`Report: ${facts.reportPath}`);
  if (facts.registerPath) lines.push(`Register: ${facts.registerPath}`);
  if (facts.error) lines.push(`payouts: ${facts.error.message}`);
  return lines;
}

/** Each currency's totals: all rows, valid rows, and those to be sent. */
function totalsLines({ summary, command }: SummaryFacts): string[] {
  const out: string[] = [];
  if (summary.sheetTotals.size > 0) {
    out.push(
      `Total per currency (all rows / valid rows / ${command === 'validate' ? 'to be sent now' : 'to send when the run began'}):`,
    );
    for (const [currency, minor] of [...summary.sheetTotals].sort(([a], [b]) => a.localeCompare(b))) {
      const valid = summary.validTotals.get(currency) ?? 0n;
      const send = summary.sendTotals.get(currency) ?? 0n;
      out.push(
        `  ${currency} ${formatAmountForPeople(minor).padStart(18)} / ${formatAmountForPeople(valid)} / ${formatAmountForPeople(send)}`,
      );
    }
  }
  return out;
}

/** What the reading of the sheet noticed: amounts in no total, a totals row, stray quotes, grouping. */
function readingNotes(summary: SummaryFacts['summary']): string[] {
  const out: string[] = [];
  if (summary.untotalledRows > 0) {
    const n = summary.untotalledRows;
    out.push(
      `${n.toLocaleString('en-US')} row${n === 1 ? ' has' : 's have'} an amount or currency that could not be read: ${n === 1 ? 'it is' : 'they are'} in no total above (the results file marks ${n === 1 ? 'it' : 'them'})`,
    );
  }
  for (const message of summary.totalsRows) out.push(`Totals row: ${message}`);
  if (summary.strayQuoteRow !== undefined) {
    out.push(
      `A quote (") inside a cell that does not start with one was read as a character, as spreadsheet programs do (first in row ${summary.strayQuoteRow}): check that such cells read as you meant`,
    );
  }
  if (summary.groupedAmounts > 0) {
    const n = summary.groupedAmounts;
    out.push(
      `${n.toLocaleString('en-US')} amount${n === 1 ? ' was' : 's were'} written with digit grouping (such as 1,250.00) and read as plain decimals`,
    );
  }
  return out;
}

/** The first rows that need attention, with their messages. */
function attentionLines({ summary, samples }: SummaryFacts): string[] {
  const out: string[] = [];
  if (samples.length > 0) {
    const invalid = summary.byStatus.invalid + summary.byStatus.failed + summary.byStatus.unknown;
    out.push(
      `Rows that need attention${invalid > samples.length ? ` (first ${samples.length} of ${invalid})` : ''}:`,
    );
    for (const sample of samples) {
      const ref = sample.reference ? ` (${boundCell(sample.reference)})` : '';
      out.push(`  row ${sample.rowNumber}${ref}: ${sample.messages.join('; ')}`);
    }
  }
  return out;
}

/** Each of the approver's warnings: how many rows, and the first. */
function approverWarningLines(warnings: SummaryFacts['warnings']): string[] {
  const out: string[] = [];
  out.push('Warnings for the approver (rows):');
  for (const signal of SIGNALS) {
    const first = warnings.rows[signal][0];
    const example = first ? ` - first: row ${first.rowNumber} (${boundCell(first.reference)})` : '';
    out.push(
      `  ${signal.padEnd(19)} ${warnings.counts[signal].toLocaleString('en-US').padStart(9)}${example}`,
    );
  }
  return out;
}

/** "1 row", "2,000 rows": a count with its noun in the right number. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}

/**
 * The control totals given, confirmed: `Control totals: 50 rows ✓, USD 243,811.00 ✓`. Nothing
 * without any; a mismatch is said as the error it is, never here.
 */
function controlTotalsLine(facts: SummaryFacts): string | undefined {
  const controls = facts.controls;
  if (controls === undefined || facts.error !== undefined) return undefined;
  const parts: string[] = [];
  if (controls.expectCount !== undefined && controls.expectCount === facts.summary.rows)
    parts.push(`${countOf(controls.expectCount, 'row')} ✓`);
  for (const [currency, minor] of [...controls.expectTotals].sort(([a], [b]) => a.localeCompare(b))) {
    if ((facts.summary.sheetTotals.get(currency) ?? 0n) === minor)
      parts.push(`${currency} ${formatAmountForPeople(minor)} ✓`);
  }
  return parts.length === 0 ? undefined : `Control totals: ${parts.join(', ')}`;
}

/** The approval policy's rules at a terminal: each applying rule met (✓) or what it still needs. */
export function policyLines(policy: PolicyView | null | undefined): string[] {
  if (!policy) return [];
  const lines = [
    `Approval policy version ${policy.version}: ${policy.satisfied ? 'every applying rule met ✓' : 'not met'}`,
  ];
  for (const rule of policy.rules) {
    const signed = rule.signed.length > 0 ? rule.signed.join(', ') : 'nobody';
    const state = !rule.applies
      ? 'does not apply'
      : rule.missing === 0
        ? `${rule.require} of ${rule.from} ✓ (${signed})`
        : `${rule.require} of ${rule.from}: signed by ${signed}, ${rule.missing} more needed (waiting on ${rule.waitingOn.join(', ')})`;
    lines.push(`  ${rule.name}: ${state}`);
  }
  return lines;
}
