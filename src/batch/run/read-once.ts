/**
 * Pass 1 of `payouts run`: the one read of the sheet, into a snapshot, while its rows are
 * counted, totalled and hashed, so that the guards see every row before any is sent; and the
 * replay of those rows for the send pass and the results file.
 */
import { stat } from 'node:fs/promises';
import { BatchDigest } from '../digest.js';
import {
  type KnownRepeats,
  openResultsFor,
  type PreparedRow,
  type PreparedSheet,
  prepareSheet,
  RowChecker,
  type SheetOptions,
  sheetNumbers,
} from '../prepare.js';
import { checkScratchRoom, SCRATCH } from '../scratch.js';
import { BatchSummary } from '../summary.js';
import { totalsRowGuard } from '../totals-row.js';
import { tally } from '../verdicts.js';
import { NO_WARNINGS, type RowWarning } from '../warnings.js';
import { rowRead } from './collect.js';
import type { JudgedWarnings } from './judged.js';
import { RowSnapshot } from './snapshot.js';

/** What reading and replaying the sheet needs of the run's options. */
export type ReadOptions = SheetOptions & { outPath?: string; rehearsal?: boolean };

/** What pass 1 read: the rows (replayable), the counts and totals, the digest. */
export interface ReadSheet {
  prepared: PreparedSheet;
  snapshot: RowSnapshot;
  summary: BatchSummary;
  /** The digest of the rows alone (the batch digest covers their warnings too: judgeBatch). */
  digest: string;
  /** The sheet's tag (digest.ts): names this batch's payouts in the payee history. */
  tag: string;
  validRows: number;
  /** References used by more than one row (every row with one is invalid), and payments. */
  known: KnownRepeats;
}

/** Pass 1: reads the sheet once into a snapshot while counting, totalling and hashing its rows. */
export async function readOnce(options: ReadOptions): Promise<ReadSheet> {
  const prepared = await prepareSheet(options);
  // An unusable results path (missing or read-only folder) is found before anything
  // is sent, not after every row was paid.
  try {
    await (await openResultsFor(prepared, options)).abort();
  } catch (error) {
    await prepared.sheet.close?.();
    throw error;
  }
  // Before anything is written there: a sheet whose snapshot cannot fit is refused with the figures.
  const sheetBytes = (await stat(prepared.sheet.path).catch(() => undefined))?.size ?? 0;
  const format = prepared.sheet.format;
  try {
    checkScratchRoom(sheetBytes * SCRATCH.snapshotPerByte[format], 'for the snapshot of its rows');
  } catch (error) {
    await prepared.sheet.close?.();
    throw error;
  }
  const snapshot = await RowSnapshot.create();
  try {
    let count = new SheetCount(prepared.header.index);
    for await (const row of prepared.rows) {
      rowRead();
      const writing = snapshot.add(row.raw);
      if (writing) await writing;
      count.add(row);
    }
    await snapshot.seal();
    // What sending adds: each row's warnings and result, checked now rather than a third of the
    // way through the sheet.
    checkScratchRoom(
      count.summary.rows * SCRATCH.bytesPerRow,
      `for the warnings and results of its ${count.summary.rows.toLocaleString('en-US')} rows`,
    );
    // A totals row that does not match the rows above it refuses the batch (exit 4).
    const mismatch = totalsRowGuard(prepared.totalsMismatches());
    if (mismatch !== undefined) throw mismatch;
    const known = { references: prepared.repeats(), payments: prepared.duplicates() };
    if (known.references.size > 0) {
      // Every row sharing a reference is invalid, the first too, and none is hashed: counted
      // again from the snapshot, knowing them (only a sheet with a repeated reference pays).
      count = new SheetCount(prepared.header.index);
      for await (const row of replay(options, { prepared, snapshot, known })) count.add(row);
    }
    const { summary } = count;
    return {
      prepared,
      snapshot,
      summary,
      ...count.digest.finish(),
      validRows: summary.byStatus.valid,
      known,
    };
  } catch (error) {
    await snapshot.dispose();
    throw error;
  }
}

/** Counts, totals and hashes the rows of pass 1 (the totals row is no payout: never hashed). */
class SheetCount {
  readonly summary = new BatchSummary();
  readonly digest: BatchDigest;

  constructor(index: PreparedSheet['header']['index']) {
    this.digest = new BatchDigest(index);
  }

  add(row: PreparedRow): void {
    if (row.totals !== undefined) {
      tally(this.summary, row, 'skipped');
      return;
    }
    const valid = row.issues.length === 0;
    tally(this.summary, row, valid ? 'valid' : 'invalid');
    if (valid) this.digest.add(row);
  }
}

/**
 * The rows pass 1 read, mapped and checked again (the same code gives the same rows), the first
 * row of a repeated reference refused as its repeats are.
 */
export async function* replay(
  options: ReadOptions,
  read: Pick<ReadSheet, 'prepared' | 'snapshot' | 'known'> & { summary?: BatchSummary },
): AsyncGenerator<PreparedRow> {
  const checker = new RowChecker(
    options.sheetPath,
    read.prepared.header.index,
    sheetNumbers(read.prepared.sheet),
    read.known,
    read.summary?.rows,
  );
  for await (const raw of read.snapshot.rows()) {
    rowRead();
    yield checker.check(raw);
  }
}

/** A replayed row with the approver's warnings judged for it before sending (judged.ts). */
export interface JudgedRow {
  row: PreparedRow;
  warnings: readonly RowWarning[];
}

/**
 * The rows of `replay`, each with its judged warnings; none (NO_WARNINGS) when the run never
 * judged them (it stopped before its register scope was open).
 */
export async function* replayJudged(
  options: ReadOptions,
  read: Pick<ReadSheet, 'prepared' | 'snapshot' | 'known'> & { summary?: BatchSummary },
  judged: JudgedWarnings | undefined,
): AsyncGenerator<JudgedRow> {
  const warnings = judged?.rows();
  try {
    for await (const row of replay(options, read)) {
      const next = warnings === undefined ? undefined : await warnings.next();
      yield { row, warnings: next === undefined || next.done ? NO_WARNINGS : next.value };
    }
  } finally {
    await warnings?.return(undefined);
  }
}

/** The rows of `replay` a few hundred at a time: the payees' history is read once per batch. */
export async function* replayBatches(
  options: ReadOptions,
  read: Pick<ReadSheet, 'prepared' | 'snapshot' | 'known'> & { summary?: BatchSummary },
): AsyncGenerator<PreparedRow[]> {
  let batch: PreparedRow[] = [];
  for await (const row of replay(options, read)) {
    batch.push(row);
    if (batch.length === 512) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
