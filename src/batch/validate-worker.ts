/**
 * The worker thread of `validate` (src/batch/parallel.ts): reads the sheet, maps and checks
 * every row, and sends the verdicts batch by batch, then the counts, totals, digest and samples.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ACK, describeError, type WorkerInput, type WorkerMessage } from './parallel.js';
import { prepareSheet, RowChecker, rawBatches } from './prepare.js';
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

/** Verdicts checked but not yet sent. */
let rowNumbers = new Uint32Array(MESSAGE_ROWS);
let verdicts: (RowVerdict | null)[] = [];

try {
  const prepared = await prepareSheet(input.sheet);
  const { sheet, header } = prepared;
  const checker = new RowChecker(input.sheet.sheetPath, header.index);
  const tally = new ValidationTally(header.index, input.sampleSize);
  // Row by row, without a batch of prepared rows alive at once: the thread's young heap stays small.
  for await (const batch of rawBatches(sheet)) {
    for (const raw of batch) {
      const verdict = tally.add(checker.check(raw));
      rowNumbers[verdicts.length] = raw.rowNumber;
      verdicts.push(verdict === VALID ? null : verdict);
      if (verdicts.length === MESSAGE_ROWS) await post();
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
// Nothing more to wait for: let the thread end once the messages are out.
port.unref();

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
}
