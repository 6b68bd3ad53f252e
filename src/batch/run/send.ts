/**
 * The send pass of `payouts run`: valid rows claimed in the register a few at a time, then paid
 * with bounded concurrency, their results kept in sheet order in a spool beside the snapshot.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { systemClock } from '../../clock.js';
import type { PayoutDetails } from '../../register/details.js';
import type { ScopeStore } from '../../register/types.js';
import { earlierResult } from '../earlier.js';
import type { PreparedRow } from '../prepare.js';
import type { RowResult } from '../summary.js';
import { encodeWarnings, heldReason } from '../warnings.js';
import { InOrder, type Place } from './in-order.js';
import type { JudgedWarnings } from './judged.js';
import type { RunOptions } from './options.js';
import { type JudgedRow, type ReadSheet, replayJudged } from './read-once.js';
import { type ResultSpool, ResultSpoolWriter, type SpooledRow } from './result-spool.js';
import type { SentRow } from './results.js';
import type { PayeeOfRow, RowSteps } from './row-steps.js';
import type { Claimed, RunHolder } from './run-holder.js';

/**
 * Rows claimed in one register transaction: a few times the concurrency, taken just ahead of
 * sending, so that several runs of one sheet share its rows instead of one holding them all.
 */
function claimAhead(concurrency: number): number {
  return Math.min(256, Math.max(16, 4 * concurrency));
}

/**
 * Rows whose results a run holds at most while an earlier row is still under way (in-order.ts):
 * several claims ahead, so that one slow row does not stall the sending behind it.
 */
function windowOf(concurrency: number): number {
  return Math.max(1024, 4 * claimAhead(concurrency));
}

/** A valid row on its way through the send pass, with its place in the results' order. */
interface Entry extends JudgedRow {
  place: Place<SpooledRow>;
}

/** What the send pass is given. */
interface SendContext {
  options: RunOptions;
  read: ReadSheet;
  run: RunHolder;
  steps: RowSteps;
  signal: AbortSignal;
  /** The service stayed away past --max-outage. */
  unavailable: () => boolean;
}

/**
 * The send pass. A row's own failure is its result; an error that ends the run (refused
 * credentials mid-run, a register that cannot be written) stops the feeding, lets the rows
 * under way settle, and comes back as `fatal` so the results are still written. Results go to
 * the spool in sheet order as rows finish: memory holds the rows in the window, not the sheet.
 */
export async function sendRows(
  options: RunOptions,
  read: ReadSheet,
  run: RunHolder,
  steps: RowSteps,
  judged: JudgedWarnings | undefined,
  signal: AbortSignal,
  unavailable: () => boolean,
): Promise<{ spool: ResultSpool; fatal?: unknown }> {
  const spooled = await ResultSpoolWriter.create(read.snapshot.sidecar('results.jsonl'));
  return new SendPass({ options, read, run, steps, signal, unavailable }, spooled).send(judged);
}

/** One send pass: the feeder, the rows under way, and the window that puts results in order. */
class SendPass {
  private readonly window: InOrder<SpooledRow>;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly inFlight = new Set<Promise<void>>();
  private fatal: { error: unknown } | undefined;
  private done = 0;

  constructor(
    private readonly context: SendContext,
    private readonly spooled: ResultSpoolWriter,
  ) {
    const { concurrency } = context.options;
    this.window = new InOrder<SpooledRow>(windowOf(concurrency), (seq, { reference, row }) =>
      spooled.add(seq, reference, row),
    );
    this.limit = pLimit(concurrency);
  }

  /** A stop, an error that ends the run, a scratch space that filled, or an outage: no more rows. */
  private readonly stopped = (): boolean =>
    this.context.signal.aborted ||
    this.fatal !== undefined ||
    this.spooled.failure !== undefined ||
    this.context.unavailable();

  async send(judged: JudgedWarnings | undefined): Promise<{ spool: ResultSpool; fatal?: unknown }> {
    const { signal } = this.context;
    // A stop while the feeder waits for room: rows behind a row never sent must not hold it.
    const nudge = () => this.window.nudge();
    signal.addEventListener('abort', nudge, { once: true });
    try {
      await this.feedAll(judged);
    } catch (error) {
      // The register could not claim: nothing more is sent; rows under way still settle.
      this.fatal ??= { error };
    }
    await Promise.all(this.inFlight);
    signal.removeEventListener('abort', nudge);
    // Rows that finished behind one never sent are handed on too; the unsent have no result.
    this.window.close();
    let spool: ResultSpool;
    try {
      spool = await this.spooled.seal();
    } catch (error) {
      await this.spooled.abandon();
      throw this.fatal === undefined ? error : this.fatal.error;
    }
    if (this.spooled.failure !== undefined) this.fatal ??= { error: this.spooled.failure };
    return this.fatal ? { spool, fatal: this.fatal.error } : { spool };
  }

  /** The valid rows in sheet order, each given its place in the window, claimed a few at a time. */
  private async feedAll(judged: JudgedWarnings | undefined): Promise<void> {
    const { options, read } = this.context;
    let pending: Entry[] = [];
    let seq = -1;
    for await (const judgedRow of replayJudged(options, read, judged)) {
      seq += 1;
      if (this.stopped()) return;
      const { row } = judgedRow;
      if (row.issues.length > 0 || row.totals !== undefined) continue;
      // The window is full while an earlier row is still under way: wait for it, not the sheet.
      await this.window.room(this.stopped);
      if (this.stopped()) return;
      pending.push({ ...judgedRow, place: this.window.take(seq) });
      if (pending.length >= claimAhead(options.concurrency)) {
        await this.feed(pending);
        pending = [];
      }
    }
    if (pending.length > 0 && !this.stopped()) await this.feed(pending);
  }

  /** Rows claimed in one register transaction, then each answered from the register or sent. */
  private async feed(entries: Entry[]): Promise<void> {
    const { options, run, steps } = this.context;
    const batch: PreparedRow[] = [];
    // References are unique among valid rows (a repeated one makes every row with it invalid).
    const entryOf = new Map<string, Entry>();
    for (const entry of entries) {
      // --hold-changed-payees: a payee whose bank details changed is not paid, nor claimed.
      const held = options.holdChangedPayees ? heldReason(entry.warnings) : undefined;
      if (held === undefined) {
        batch.push(entry.row);
        entryOf.set(entry.row.payout.reference, entry);
      } else this.finished(entry, { status: 'skipped', errors: [held] }, 'held');
    }
    const claimed = await run.claim(batch);
    await steps.prefetch(
      [...claimed.values()]
        .filter((c) => c.verdict.kind === 'send' || c.verdict.kind === 'resend')
        .map((c) => c.row.payout),
    );
    for (const claim of claimed.values()) {
      // An outage past --max-outage stops the feeding too: rows under way settle, the rest wait.
      if (this.stopped()) return;
      const entry = entryOf.get(claim.row.payout.reference)!;
      const earlier = earlierResult(claim.verdict, claim.details);
      if (earlier) this.finished(entry, earlier, 'fromRegister');
      else await this.start(entry, claim);
    }
  }

  /**
   * One row sent, at most `concurrency` under way: backpressure, so memory does not grow with
   * the sheet; the next row is taken only when a slot is free.
   */
  private async start(entry: Entry, claim: Claimed): Promise<void> {
    const task = this.limit(() => this.pay(entry, claim));
    const tracked: Promise<void> = task.finally(() => {
      this.inFlight.delete(tracked);
      this.window.nudge();
    });
    this.inFlight.add(tracked);
    if (this.inFlight.size >= this.context.options.concurrency) await Promise.race(this.inFlight);
  }

  private async pay(entry: Entry, { verdict, row, details }: Claimed): Promise<void> {
    if (this.fatal) return;
    const { options, run, steps, read } = this.context;
    const resend = verdict.kind === 'resend' ? verdict.record : undefined;
    try {
      run.sentAnything = true;
      const payee =
        row.payee === undefined
          ? undefined
          : { key: run.store.fingerprint(`payee:${row.payee.key}`), name: row.payee.name };
      const result = await steps.process(row.payout, resend, {
        payee,
        warnings: encodeWarnings(entry.warnings),
      });
      // The register failed after the service answered: the row keeps that answer, the run ends.
      if (result.runError !== undefined) this.fatal ??= { error: result.runError };
      else if (result.status === 'submitted' || result.status === 'completed') {
        await rememberPayment(options, run.store, payee, row.payout.reference, details, read.tag, result);
      }
      this.finished(entry, result);
    } catch (error) {
      this.fatal ??= { error };
    }
  }

  /** A row's result, in its place in the window; the progress line counts it. */
  private finished(entry: Entry, result: RowResult, decided?: 'fromRegister' | 'held'): void {
    const { row } = entry;
    const sentRow: SentRow = {
      ...result,
      rowNumber: row.raw.rowNumber,
      ...(decided === undefined ? {} : { [decided]: true }),
    };
    delete sentRow.runError;
    this.window.settle(entry.place, { seq: entry.place.seq, reference: row.payout.reference, row: sentRow });
    logRow(this.context.options.logger, row, result);
    this.done += 1;
    this.context.options.onProgress?.(this.done, this.context.read.validRows);
  }
}

/**
 * Adds a paid row to its payee's history, which the approver's warnings of later sheets read.
 * The payment stands whatever happens here: a history that cannot be written is logged, and the
 * row keeps its truth.
 */
async function rememberPayment(
  options: Pick<RunOptions, 'logger' | 'clock'>,
  store: ScopeStore,
  payee: PayeeOfRow | undefined,
  reference: string,
  details: PayoutDetails,
  batch: string,
  result: RowResult,
): Promise<void> {
  if (payee === undefined) return;
  try {
    await store.recordPayment(
      payee.key,
      {
        account: details.payee,
        accountHint: details.payeeHint,
        reference,
        rail: details.rail,
        paidAt: new Date((options.clock ?? systemClock).now()).toISOString(),
        amount: details.amount,
        currency: details.currency,
      },
      batch,
      payee.name,
    );
  } catch (error) {
    options.logger.warn(
      { err: error, transactionId: result.transactionId },
      'the payee history could not be recorded',
    );
  }
}

function logRow(logger: Logger, row: PreparedRow, result: RowResult): void {
  const fields = { row: row.raw.rowNumber, reference: row.payout.reference, status: result.status };
  if (result.status === 'failed' || result.status === 'unknown')
    logger.warn({ ...fields, errors: result.errors }, 'row not paid');
  else logger.debug({ ...fields, transactionId: result.transactionId }, 'row done');
}
