/**
 * The worker thread of `validate` (src/batch/parallel.ts): maps and checks the rows, which it
 * reads from the sheet itself or is sent by the main thread, judges them against the
 * register's records when there is a register, and sends the verdicts back message by
 * message, then the counts, totals, digest and samples. The main thread hashes the valid rows
 * for the digest as it writes them, and sends their hash (the tag) once it wrote the last.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openRegister } from '../../register/open.js';
import type { Register, ScopeStore } from '../../register/types.js';
import type { RawRow } from '../../sheet/types.js';
import { inDigest } from '../digest.js';
import type { EarlierResult } from '../earlier.js';
import { prepareSheet, RowChecker, rawBatches } from '../prepare.js';
import { RegisterCheck } from '../register-check.js';
import { type ComparisonMessage, revivedComparisons, sinceCandidates } from '../since-previous.js';
import { type RowVerdict, ValidationTally } from '../verdicts.js';
import { NO_WARNINGS, PayeeWarnings } from '../warnings.js';
import { ACK, type MainMessage, WINDOW, type WorkerInput, type WorkerMessage } from './parallel.js';
import { describeError, type RowBatch, unpackRows, VerdictPacker } from './worker-codec.js';

const port = parentPort;
if (port === null) throw new Error('validate-worker.js runs as a worker thread of payouts validate');
const input = workerData as WorkerInput;

// Rows per message at most: a message costs tens of microseconds, a row's verdict next to nothing.
const MESSAGE_ROWS = 2048;

/**
 * Verdicts with messages per message, at most: against a register every row may carry one.
 * What a message holds outlives the young generation of the thread that holds it, and garbage
 * promoted that way grew the main thread's old generation by 60 MB before it was collected
 * (256 a message: 200 to 262 MB peak RSS for a sheet of a million paid rows; 64: 200 to 211).
 * Since the worker's heap is bounded, 128 costs no more memory (a million rows the register
 * holds: 224 to 231 MB, as at 64) and sends half the messages, each tens of microseconds on
 * both threads: 7,800 where 64 took 15,600 (`distinct-payees` of the bench, in three alternating
 * pairs of runs: 0.63 to 0.69 of the floor at 128, 0.52 to 0.60 at 64).
 */
const MESSAGE_VERDICTS = 128;

/**
 * Messages of verdicts the main thread may still take before this thread waits, when it reads
 * the sheet itself. Sent rows need no such count: the main thread sends no more than it writes.
 */
let credits = input.sheet ? WINDOW : Number.POSITIVE_INFINITY;
/** Batches of rows sent by the main thread, oldest first; null once it sent them all. */
const inbox: (RowBatch | null)[] = [];
let wake: (() => void) | undefined;
/** The comparisons the main thread read (WorkerInput.comparisonsSent), until the tally takes them. */
let comparisons: ComparisonMessage[] | undefined;
/** Gives the tally the comparisons, once both are there. */
let compare: (() => void) | undefined;
/** The valid rows' hash, from the main thread once it wrote them all. */
let tag: string | undefined;
port.on('message', (message: MainMessage) => {
  if (message === ACK) credits += 1;
  else if (message.type === 'tag') tag = message.tag;
  else if (message.type === 'comparisons') {
    // Taken at once, between two rows: the rows counted so far were kept for them.
    comparisons = message.comparisons;
    compare?.();
  } else inbox.push(message.type === 'rows' ? message : null);
  const resume = wake;
  wake = undefined;
  resume?.();
});

/** Until the main thread's next message. */
function nextMessage(): Promise<void> {
  return new Promise<void>((resolve) => (wake = resolve));
}

/** The rows the main thread sends, batch by batch, until it says it is done. */
async function* sentRows(): AsyncGenerator<RawRow[]> {
  for (;;) {
    while (inbox.length === 0) await nextMessage();
    const batch = inbox.shift()!;
    if (batch === null) return;
    yield [...unpackRows(batch)];
  }
}

function send(message: WorkerMessage, transfer?: ArrayBuffer[]): void {
  port!.postMessage(message, transfer);
}

/** Verdicts checked but not yet sent. */
const pending = new VerdictPacker(MESSAGE_ROWS);

let register: Register | undefined;
try {
  const checker = new RowChecker(input.sheetPath, input.index, input.numbers, {}, input.expectedRows);
  const tally = new ValidationTally(
    input.index,
    input.sampleSize,
    input.warnedReferences,
    input.holdChangedPayees,
    'elsewhere',
  );
  let check: RegisterCheck | undefined;
  let store: ScopeStore | undefined;
  if (input.register) {
    const opened = await openRegister(input.register.location, { readonly: true });
    register = opened;
    store = await opened.scopeStore(input.register.scope);
    check = new RegisterCheck(store);
  }
  const warnings = new PayeeWarnings(store, input.asOf, input.batch);
  if (input.comparisonsSent && store !== undefined) {
    const from = store;
    tally.compareLater();
    compare = () => {
      if (comparisons === undefined) return;
      tally.compareWith(revivedComparisons(from, comparisons));
      comparisons = undefined;
    };
    compare();
  } else {
    tally.compareWith(await sinceCandidates(store));
  }
  const referenceAt = input.index.get('reference') ?? -1;
  const batches = input.sheet ? rawBatches((await prepareSheet(input.sheet)).sheet) : sentRows();
  for await (const rows of batches) {
    // With a register, one look-up answers the whole batch, by its reference cells.
    const found = check && (await check.lookAhead(rows, referenceAt));
    const checked = rows.map((raw) => checker.check(raw));
    const looked = found ? checked.map((row) => found.resultOf(row)) : [];
    // A row looked up on its own (its reference cell read another way) answers later.
    const earlier = looked.some((result) => result instanceof Promise)
      ? await Promise.all(looked)
      : (looked as (EarlierResult | undefined)[]);
    // The warnings a held row was sent with, where the register kept them.
    const stored =
      found && checked.map((row, i) => (earlier[i] === undefined ? undefined : found.storedOf(row)));
    // One look-up of the payees' history for the whole batch too.
    await warnings.load(checked, found ? earlier : undefined, stored);
    for (let i = 0; i < checked.length; i++) {
      const row = checked[i]!;
      const judged = earlier[i];
      const payee = tally.wantsPayee(row, judged) ? warnings.payeeHash(row) : undefined;
      const verdict = tally.add(
        row,
        judged,
        judged?.status === 'invalid' ? NO_WARNINGS : warnings.of(row, stored?.[i]),
        payee,
      );
      const full = take(row.raw.rowNumber, verdict, inDigest(row));
      if (full) await full;
    }
    // The main thread waits for the verdicts of the rows it sent before it sends more.
    if (!input.sheet) await post();
  }
  checker.finish();
  await post();
  while (tag === undefined) await nextMessage();
  send({
    type: 'done',
    ...(await tally.finish(tag)),
    historyOwn: [...warnings.judgedOwn],
    historyOther: [...warnings.judgedOther],
    repeats: [...checker.repeats],
    duplicates: [...checker.duplicates],
  });
} catch (error) {
  // The rows checked before the error first: the main thread then meets the error in order.
  if (pending.rows > 0) sendVerdicts();
  send({ type: 'failed', error: describeError(error) });
}
await register?.close();
// Nothing more to wait for: let the thread end once the messages are out.
port.unref();

/** Queues a row's verdict; a full message is sent (the promise to wait on), else undefined. */
function take(rowNumber: number, verdict: RowVerdict, digested: boolean): Promise<void> | undefined {
  pending.add(rowNumber, verdict, digested);
  return pending.full || pending.notValid === MESSAGE_VERDICTS ? post() : undefined;
}

/** Sends the pending verdicts once the main thread may take them. */
async function post(): Promise<void> {
  if (pending.rows === 0) return;
  while (credits === 0) await nextMessage();
  credits -= 1;
  sendVerdicts();
}

function sendVerdicts(): void {
  const batch = pending.take();
  send({ type: 'rows', ...batch }, [batch.rowNumbers.buffer, batch.starts.buffer]);
}
