/**
 * Pass 3 of `payouts run`: the results file, in sheet order, from what pass 1 read, the rows'
 * outcomes (spooled in the same order: result-spool.ts) and the warnings judged before sending;
 * a valid row the send pass did not finish was not sent (`skipped` with the reason). It reads
 * nothing from the register and holds no row but the one it writes.
 */
import { ClaimLostError } from '../../errors.js';
import { openResultsFor, type PreparedRow } from '../prepare.js';
import type { RowResult } from '../summary.js';
import { BatchSummary } from '../summary.js';
import { type RowSample, tally } from '../verdicts.js';
import { messagesOf, NO_WARNINGS, type RowWarning, WarningTally } from '../warnings.js';
import { EarlierResults } from './earlier-results.js';
import type { JudgedWarnings } from './judged.js';
import { notSentBecause, notSentInterrupted } from './outcome.js';
import { type ReadOptions, type ReadSheet, replayJudged } from './read-once.js';
import type { ResultSpool, SentRow } from './result-spool.js';

export type { SentRow } from './result-spool.js';

/** Why the send pass ended before every valid row had a result. */
export interface StopReason {
  /** SIGINT/SIGTERM/SIGHUP: rows not reached were not sent. */
  interrupted?: boolean;
  /** The service stayed unavailable past --max-outage: rows not reached were not sent. */
  unavailable?: boolean;
  /** Why, in words, for the rows it stopped. */
  unavailableReason?: string | undefined;
  /** An error that ended the run early. */
  stoppedBy?: unknown;
}

/**
 * The result of a valid row the send pass did not finish, from what the run itself knows: a row
 * whose transaction request may have left always has a result (RowSteps never throws then: it
 * is `unknown`, or keeps the service's answer when the register failed to record it), so a row
 * without one was not sent. Nothing here asks the register, which may be what stopped the run.
 */
export function unfinishedResult(stop: StopReason): RowResult {
  if (stop.stoppedBy !== undefined) {
    const why = stop.stoppedBy instanceof Error ? stop.stoppedBy.message : String(stop.stoppedBy);
    return stop.stoppedBy instanceof ClaimLostError
      ? { status: 'skipped', errors: [`not sent by this run: ${why}`] }
      : {
          status: 'skipped',
          errors: [`not sent: the run stopped (${why}) before this row was paid, run again to send it`],
        };
  }
  if (stop.interrupted) return interruptedResult;
  return stop.unavailable
    ? { status: 'skipped', errors: [notSentBecause(stop.unavailableReason)] }
    : missingResult;
}

const interruptedResult: RowResult = { status: 'skipped', errors: [notSentInterrupted] };

// A valid row the send pass never reached without an interruption cannot happen.
const missingResult: RowResult = {
  status: 'unknown',
  errors: ['this row was not reached by the send pass (a bug in payouts), run again to send it'],
};

/**
 * Writes the results file from what pass 1 read, the rows' outcomes and the warnings judged
 * before sending (none when the run stopped before judging them); returns the summary and the
 * warnings shown, which are those of rows this run would send (not those the register decided).
 */
export async function writeResults(
  options: ReadOptions & { warnedReferences?: boolean },
  read: ReadSheet,
  spool: ResultSpool | undefined,
  stop: StopReason,
  judged?: JudgedWarnings,
) {
  // Every valid row the send pass did not finish has the same result: said once, unless an
  // earlier run of the sheet paid it (or may have): then what that run's results file said.
  const unfinished = unfinishedResult(stop);
  const stoppedEarly = stop.interrupted || stop.unavailable || stop.stoppedBy !== undefined;
  // The rows' results come in sheet order, as the snapshot's rows do: merged by position.
  const results = spool?.rows();
  let next = results === undefined ? undefined : await results.next();
  let seq = -1;
  const writer = await openResultsFor(read.prepared, options);
  const resultsPath = writer.path;
  const earlier = stoppedEarly
    ? await EarlierResults.open(resultsPath, read.prepared.sheet.headers, read.prepared.header.index)
    : undefined;
  const summary = new BatchSummary();
  const samples: RowSample[] = [];
  const shown = new WarningTally(options.warnedReferences ?? true);
  try {
    for await (const { row, warnings } of replayJudged(options, read, judged)) {
      seq += 1;
      let sent: SentRow | undefined;
      if (next !== undefined && !next.done && next.value.seq === seq) {
        sent = next.value.row;
        next = await results!.next();
      }
      if (sent === undefined && earlier !== undefined && row.issues.length === 0 && row.totals === undefined)
        sent = await earlier.outcomeOf(row.raw.rowNumber, row.payout.reference);
      const result = resultOf(row, sent, unfinished);
      const warned = sent?.fromRegister === true || result.status === 'invalid' ? NO_WARNINGS : warnings;
      if (warned.length > 0) shown.add(row.raw.rowNumber, row.payout.reference, warned, row.payee?.name);
      tally(summary, row, result.status);
      // Held rows need attention as much as refused ones: listed with them.
      if (sent?.held === true) summary.errorGroups.add(row.raw.rowNumber, result.errors);
      if (needsAttention(result, sent) && samples.length < 20) {
        samples.push({
          rowNumber: row.raw.rowNumber,
          reference: row.payout.reference,
          messages: result.errors,
        });
      }
      const writing = writer.write(resultRow(row, result, warned));
      if (writing) await writing;
    }
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  } finally {
    await results?.return(undefined);
    await earlier?.dispose();
  }
  return {
    format: read.prepared.sheet.format,
    resultsPath,
    summary,
    samples,
    warnings: shown,
    unknownColumns: read.prepared.header.unknown,
  };
}

/** A row's result: the totals row skipped, an invalid row's issues, or what the run knows of it. */
function resultOf(row: PreparedRow, sent: SentRow | undefined, unfinished: RowResult): RowResult {
  if (row.totals !== undefined) return { status: 'skipped', errors: [row.totals.message] };
  if (row.issues.length > 0) return { status: 'invalid', errors: row.issues.map((i) => i.message) };
  return sent ?? unfinished;
}

/** Rows listed among those needing attention: refused, failed, in doubt, or held. */
function needsAttention(result: RowResult, sent: SentRow | undefined): boolean {
  const { status } = result;
  return status === 'invalid' || status === 'failed' || status === 'unknown' || sent?.held === true;
}

/** The results file's line of a row: its cells, then what became of it. */
function resultRow(row: PreparedRow, result: RowResult, warned: readonly RowWarning[]) {
  return {
    cells: row.raw.cells,
    rowNumber: row.raw.rowNumber,
    status: result.status,
    errors: result.errors,
    errorColumns: result.status === 'invalid' ? row.errorColumns : [],
    warnings: warned.length === 0 ? undefined : messagesOf(warned, row.payee?.name),
    beneficiaryId: result.beneficiaryId,
    recipientId: result.recipientId,
    simulationId: result.simulationId,
    transactionId: result.transactionId,
  };
}
