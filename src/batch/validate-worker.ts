/**
 * The worker thread of `validate` (src/batch/parallel.ts): reads the sheet, maps and checks
 * every row, and sends the verdicts batch by batch, then the counts, totals, digest and samples.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openRegister } from '../register/sqlite.js';
import type { Register } from '../register/types.js';
import { ACK, describeError, type WorkerInput, type WorkerMessage } from './parallel.js';
import { prepareSheet, RowChecker, rawBatches } from './prepare.js';
import { RegisterCheck } from './register-check.js';
import { type RowVerdict, VALID, ValidationTally } from './verdicts.js';

const port = parentPort;
if (port === null) throw new Error('validate-worker.js runs as a worker thread of payouts validate');
const input = workerData as WorkerInput;

let credits = input.window;
let wake: (() => void) | undefined;
port.on('message', (message) => {
  if (message !== ACK) return;
  credits += 1;
  const resume = wake;
  wake = undefined;
  resume?.();
});

function send(message: WorkerMessage, transfer?: ArrayBuffer[]): void {
  port!.postMessage(message, transfer);
}

// Rows per message: a message costs tens of microseconds, a row's verdict next to nothing.
const MESSAGE_ROWS = 2048;
/**
 * Verdicts with messages per message, at most: against a register every row may carry one, and
 * those held back until a message leaves outlive the young generation, which then costs the
 * thread its time in garbage collection and the process its memory.
 */
const MESSAGE_VERDICTS = 256;

/** Verdicts checked but not yet sent, and how many of them are not VALID. */
let rowNumbers = new Uint32Array(MESSAGE_ROWS);
let verdicts: (RowVerdict | null)[] = [];
let notValid = 0;

let register: Register | undefined;
try {
  const prepared = await prepareSheet(input.sheet);
  const { sheet, header } = prepared;
  const checker = new RowChecker(input.sheet.sheetPath, header.index);
  const tally = new ValidationTally(header.index, input.sampleSize);
  if (input.register) register = openRegister(input.register.path, { readonly: true });
  const check = register ? new RegisterCheck(await register.scopeStore(input.register!.scope)) : undefined;
  const referenceAt = header.index.get('reference') ?? -1;
  for await (const batch of rawBatches(sheet)) {
    if (check) {
      // With a register, one look-up answers the whole batch, by its reference cells, before
      // its rows are checked one by one as below.
      const found = await check.lookAhead(batch, referenceAt);
      for (const raw of batch) {
        const row = checker.check(raw);
        const earlier = found.resultOf(row);
        const full = take(
          raw.rowNumber,
          tally.add(row, earlier instanceof Promise ? await earlier : earlier),
        );
        if (full) await full;
      }
      continue;
    }
    // Row by row, without a batch of prepared rows alive at once: the thread's young heap stays small.
    for (const raw of batch) {
      const full = take(raw.rowNumber, tally.add(checker.check(raw)));
      if (full) await full;
    }
  }
  checker.finish();
  await post();
  send({ type: 'done', ...tally.finish() });
} catch (error) {
  // The rows checked before the error first: the main thread then meets the error where it
  // reads, as it would on its own.
  if (verdicts.length > 0) sendVerdicts();
  send({ type: 'failed', error: describeError(error) });
}
await register?.close();
// Nothing more to wait for: let the thread end once the messages are out.
port.unref();

/** Queues a row's verdict; a full message is sent (the promise to wait on), else undefined. */
function take(rowNumber: number, verdict: RowVerdict): Promise<void> | undefined {
  rowNumbers[verdicts.length] = rowNumber;
  if (verdict === VALID) verdicts.push(null);
  else {
    verdicts.push(verdict);
    notValid += 1;
  }
  return verdicts.length === MESSAGE_ROWS || notValid === MESSAGE_VERDICTS ? post() : undefined;
}

/** Sends the pending verdicts once the writer is less than `window` batches behind. */
async function post(): Promise<void> {
  if (verdicts.length === 0) return;
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  sendVerdicts();
}

function sendVerdicts(): void {
  const numbers = verdicts.length === MESSAGE_ROWS ? rowNumbers : rowNumbers.slice(0, verdicts.length);
  send({ type: 'rows', rowNumbers: numbers, verdicts }, [numbers.buffer]);
  rowNumbers = new Uint32Array(MESSAGE_ROWS);
  verdicts = [];
  notValid = 0;
}
