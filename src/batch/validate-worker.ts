/**
 * The worker thread of `validate` (src/batch/parallel.ts): reads the sheet, maps and checks
 * every row, and sends the verdicts batch by batch, then the counts, totals, digest and samples.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openRegister } from '../register/sqlite.js';
import type { LookupText, Register, ScopeInfo } from '../register/types.js';
import type { RawRow } from '../sheet/types.js';
import {
  ACK,
  describeError,
  type MainMessage,
  VerdictPacker,
  type WorkerInput,
  type WorkerMessage,
} from './parallel.js';
import { prepareSheet, RowChecker, rawBatches } from './prepare.js';
import { RegisterCheck, type RegisterLookup } from './register-check.js';
import { type RowVerdict, ValidationTally } from './verdicts.js';

const port = parentPort;
if (port === null) throw new Error('validate-worker.js runs as a worker thread of payouts validate');
const input = workerData as WorkerInput;

let credits = input.window;
let wake: (() => void) | undefined;
/** Look-ups sent to the main thread, oldest first, waiting for their answer. */
const answers: ((text: LookupText) => void)[] = [];
port.on('message', (message: MainMessage) => {
  if (message !== ACK) {
    answers.shift()?.(message.text);
    return;
  }
  credits += 1;
  const resume = wake;
  wake = undefined;
  resume?.();
});

/** The look-up query of these references, run by the main thread (parallel.ts). */
function lookupOnMain(references: readonly string[]): Promise<LookupText> {
  return new Promise<LookupText>((resolve) => {
    answers.push(resolve);
    send({ type: 'lookup', references: references as string[] });
  });
}

function send(message: WorkerMessage, transfer?: ArrayBuffer[]): void {
  port!.postMessage(message, transfer);
}

// Rows per message: a message costs tens of microseconds, a row's verdict next to nothing.
const MESSAGE_ROWS = 2048;
/**
 * Verdicts with messages per message, at most: against a register every row may carry one.
 * What a message holds outlives the young generation of the thread that holds it, and garbage
 * promoted that way grew the main thread's old generation by 60 MB before it was collected
 * (256 a message: 200 to 262 MB peak RSS for a sheet of a million paid rows; 64: 200 to 211).
 */
const MESSAGE_VERDICTS = 64;

/**
 * Batches whose look-up is asked for before the oldest of them is checked. One is enough for
 * the main thread to answer in time; four kept so many records alive that the worker's small
 * young generation promoted them, and it spent a third of its time collecting garbage.
 */
const LOOK_AHEAD = 1;

/** Verdicts checked but not yet sent. */
const pending = new VerdictPacker(MESSAGE_ROWS);

let register: Register | undefined;
try {
  const prepared = await prepareSheet(input.sheet);
  const { sheet, header } = prepared;
  const checker = new RowChecker(input.sheet.sheetPath, header.index);
  const tally = new ValidationTally(header.index, input.sampleSize);
  if (input.register) register = openRegister(input.register.path, { readonly: true });
  const check = register ? await registerCheck(register, input.register!.scope) : undefined;
  const referenceAt = header.index.get('reference') ?? -1;
  /** Batches read, each with the look-up of its references under way, oldest first. */
  const ahead: { batch: RawRow[]; found: Promise<RegisterLookup> }[] = [];
  for await (const batch of rawBatches(sheet)) {
    if (check) {
      // With a register, one look-up answers a whole batch, by its reference cells. It is asked
      // for as the batch is read, and answered by the main thread between its own batches while
      // the batches before it are checked here, row by row.
      ahead.push({ batch, found: check.lookAhead(batch, referenceAt) });
      if (ahead.length > LOOK_AHEAD) {
        const { batch: next, found } = ahead.shift()!;
        await checkAgainst(next, await found);
      }
      continue;
    }
    // Row by row, without a batch of prepared rows alive at once: the thread's young heap stays small.
    for (const raw of batch) {
      const full = take(raw.rowNumber, tally.add(checker.check(raw)));
      if (full) await full;
    }
  }
  for (const { batch, found } of ahead) await checkAgainst(batch, await found);
  checker.finish();
  await post();
  send({ type: 'done', ...tally.finish() });

  /** Checks a batch's rows one by one, with the register's records of their references. */
  async function checkAgainst(batch: RawRow[], found: RegisterLookup): Promise<void> {
    for (const raw of batch) {
      const row = checker.check(raw);
      const earlier = found.resultOf(row);
      const full = take(raw.rowNumber, tally.add(row, earlier instanceof Promise ? await earlier : earlier));
      if (full) await full;
    }
  }
} catch (error) {
  // The rows checked before the error first: the main thread then meets the error where it
  // reads, as it would on its own.
  if (pending.rows > 0) sendVerdicts();
  send({ type: 'failed', error: describeError(error) });
}
await register?.close();
// Nothing more to wait for: let the thread end once the messages are out.
port.unref();

/**
 * The register check of the worker: the look-up query runs on the main thread, which has time
 * to spare, and its answer is read back into records here, where the payees are hashed too.
 */
async function registerCheck(register: Register, scope: ScopeInfo): Promise<RegisterCheck> {
  const store = await register.scopeStore(scope);
  return new RegisterCheck({
    fingerprint: (canonical) => store.fingerprint(canonical),
    lookup: async (references) => store.readLookup(references, await lookupOnMain(references)),
  });
}

/** Queues a row's verdict; a full message is sent (the promise to wait on), else undefined. */
function take(rowNumber: number, verdict: RowVerdict): Promise<void> | undefined {
  pending.add(rowNumber, verdict);
  return pending.full || pending.notValid === MESSAGE_VERDICTS ? post() : undefined;
}

/** Sends the pending verdicts once the writer is less than `window` batches behind. */
async function post(): Promise<void> {
  if (pending.rows === 0) return;
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  sendVerdicts();
}

function sendVerdicts(): void {
  const batch = pending.take();
  send({ type: 'rows', ...batch }, [batch.rowNumbers.buffer, batch.starts.buffer]);
}
