/**
 * The checkpoint journal (PRODUCT.md "Never pay twice"; issue 4, item 5): JSON Lines, appended
 * and fsynced, so a run killed at any moment resumes without sending anything twice.
 *
 * - The first line is a header naming the sheet (content hash) and the batch; a journal of
 *   another sheet is refused (GuardError, exit 4).
 * - Only lines ending in "\n" count. A crash mid-write leaves a torn last line; it was never
 *   acknowledged (append had not resolved), so it is cut off on open.
 * - `append` resolves only after the fsync that covers its line. Appends made while a write is
 *   in flight, or in the same tick, share the next write and fsync (group commit): fsync cost
 *   is paid per group, not per record, and order is the order of the calls.
 * - No secrets and no account details: records hold ids, statuses and messages; dedupe keys
 *   (which may be made of account details) are stored only as keyed hashes; messages are
 *   passed through redactSecrets and long digit runs are masked.
 */

import { createReadStream } from 'node:fs';
import { type FileHandle, open, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../api/clock.js';
import { systemClock } from '../api/clock.js';
import { GuardError, redactSecrets } from '../errors.js';
import { hashDedupeKey } from './fingerprint.js';

export const JOURNAL_VERSION = 1;

/** PRODUCT.md row statuses. */
export const ROW_STATUSES = [
  'valid',
  'invalid',
  'submitted',
  'completed',
  'failed',
  'unknown',
  'skipped',
] as const;
export type RowStatus = (typeof ROW_STATUSES)[number];

/** The steps before the transaction, each recorded as it happens. */
export const STEPS = ['beneficiary', 'recipient', 'simulation'] as const;
export type Step = (typeof STEPS)[number];

/** What a transaction request came to. */
export const OUTCOME_STATUSES = ['submitted', 'completed', 'failed', 'unknown'] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

const rowRef = { row: z.number().int().nonnegative(), reference: z.string() };
const stamp = { at: z.string() };

const HeaderSchema = z.object({
  type: z.literal('header'),
  version: z.number().int().positive(),
  sheetHash: z.string().min(1),
  batchId: z.string().min(1),
  createdAt: z.string(),
});

const CreatedSchema = {
  keyHash: z.string().min(1),
  id: z.string().min(1),
  row: rowRef.row.optional(),
  reference: z.string().optional(),
  ...stamp,
};

/**
 * Records as stored. `z.object` strips unknown properties on append, so a caller cannot slip
 * an account number into the file by passing an extra field.
 */
const RecordSchema = z.discriminatedUnion('type', [
  HeaderSchema,
  z.object({ type: z.literal('beneficiary'), ...CreatedSchema }),
  z.object({ type: z.literal('recipient'), ...CreatedSchema }),
  z.object({
    type: z.literal('step'),
    ...rowRef,
    step: z.enum(STEPS),
    ok: z.boolean(),
    /** Id of what the step created or reused. */
    id: z.string().optional(),
    /** HTTP status of a refusal. */
    status: z.number().int().optional(),
    error: z.string().optional(),
    requestId: z.string().optional(),
    ...stamp,
  }),
  z.object({
    type: z.literal('intent'),
    ...rowRef,
    idempotencyKey: z.string().min(1),
    simulationId: z.string().min(1),
    ...stamp,
  }),
  z.object({
    type: z.literal('outcome'),
    ...rowRef,
    idempotencyKey: z.string().min(1),
    status: z.enum(OUTCOME_STATUSES),
    transactionId: z.string().optional(),
    error: z.string().optional(),
    requestId: z.string().optional(),
    ...stamp,
  }),
  z.object({
    type: z.literal('final'),
    ...rowRef,
    status: z.enum(ROW_STATUSES),
    errors: z.array(z.string()).optional(),
    ...stamp,
  }),
]);

export type JournalRecord = z.infer<typeof RecordSchema>;
export type HeaderRecord = Extract<JournalRecord, { type: 'header' }>;
export type StepRecord = Extract<JournalRecord, { type: 'step' }>;
export type IntentRecord = Extract<JournalRecord, { type: 'intent' }>;
export type OutcomeRecord = Extract<JournalRecord, { type: 'outcome' }>;
export type FinalRecord = Extract<JournalRecord, { type: 'final' }>;

type Unstamped<T> = T extends unknown ? Omit<T, 'at'> : never;

/** What callers append: a record without its timestamp; creations carry the plain dedupe key. */
export type JournalEntry =
  | { type: 'beneficiary' | 'recipient'; key: string; id: string; row?: number; reference?: string }
  | Unstamped<StepRecord | IntentRecord | OutcomeRecord | FinalRecord>;

/** One row as the journal knows it: the latest record of each kind. */
export interface RowJournal {
  row: number;
  reference: string;
  steps: Partial<Record<Step, StepRecord>>;
  /** The latest transaction intent. */
  intent?: IntentRecord;
  /** The outcome of that intent, once known. */
  outcome?: OutcomeRecord;
  final?: FinalRecord;
}

/** The journal replayed: what a resuming run needs. */
export class JournalState {
  /** Per reference. */
  readonly rows = new Map<string, RowJournal>();
  private readonly beneficiaries = new Map<string, string>();
  private readonly recipients = new Map<string, string>();

  constructor(
    readonly header: HeaderRecord,
    private readonly keySalt: string,
  ) {}

  /** The beneficiary created earlier for this dedupe key. */
  beneficiaryId(key: string): string | undefined {
    return this.beneficiaries.get(hashDedupeKey(this.keySalt, key));
  }

  /** The recipient created earlier for this dedupe key. */
  recipientId(key: string): string | undefined {
    return this.recipients.get(hashDedupeKey(this.keySalt, key));
  }

  /**
   * Intents with no outcome: the request may have been sent when the run stopped, so those
   * rows are `unknown` unless `--retry-unknown` sends them again with the same key. (A row whose
   * outcome was recorded as `unknown`, after a cut connection, is not listed: its outcome says so.)
   */
  pendingIntents(): IntentRecord[] {
    const pending: IntentRecord[] = [];
    for (const row of this.rows.values()) if (row.intent && !row.outcome) pending.push(row.intent);
    return pending;
  }

  /** Folds one record into the state (records arrive in file order). */
  apply(record: JournalRecord): void {
    switch (record.type) {
      case 'header':
        return;
      case 'beneficiary':
        this.beneficiaries.set(record.keyHash, record.id);
        return;
      case 'recipient':
        this.recipients.set(record.keyHash, record.id);
        return;
      case 'step':
        this.row(record).steps[record.step] = record;
        return;
      case 'intent': {
        const row = this.row(record);
        row.intent = record;
        // A new intent (a re-send, a re-quote) starts over: the earlier outcome was for the old one.
        row.outcome = undefined;
        return;
      }
      case 'outcome': {
        const row = this.row(record);
        if (!row.intent || row.intent.idempotencyKey === record.idempotencyKey) row.outcome = record;
        return;
      }
      case 'final':
        this.row(record).final = record;
        return;
    }
  }

  private row(ref: { row: number; reference: string }): RowJournal {
    let row = this.rows.get(ref.reference);
    if (!row) {
      row = { row: ref.row, reference: ref.reference, steps: {} };
      this.rows.set(ref.reference, row);
    }
    return row;
  }
}

export interface OpenJournalOptions {
  sheetHash: string;
  batchId: string;
  /** From fingerprintSheet: keys the hashing of dedupe keys; never stored. */
  keySalt: string;
  clock?: Clock;
  /**
   * Extra time an append waits for company before the write (ms). 0, the default, groups the
   * appends of one tick and those made while the previous fsync runs.
   */
  groupWindowMs?: number;
}

interface Pending {
  record: JournalRecord;
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** An open checkpoint journal. */
export class Journal {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
    private readonly state: JournalState,
    private readonly options: OpenJournalOptions,
    /** True when this open created the journal. */
    readonly created: boolean,
    /** Bytes of a torn last line cut off on open (0 when the file was whole). */
    readonly repairedBytes: number,
  ) {}

  /** Opens (creating or replaying) the journal at `path`; see openJournal. */
  static async open(path: string, options: OpenJournalOptions): Promise<Journal> {
    const clock = options.clock ?? systemClock;
    const read = await readJournal(path, options);
    if (read.validBytes < read.fileBytes) await truncate(path, read.validBytes);
    const file = await open(path, 'a');
    try {
      let state = read.state;
      if (!state) {
        const header: HeaderRecord = {
          type: 'header',
          version: JOURNAL_VERSION,
          sheetHash: options.sheetHash,
          batchId: options.batchId,
          createdAt: new Date(clock.now()).toISOString(),
        };
        await writeAll(file, `${JSON.stringify(header)}\n`);
        await file.datasync();
        await syncDirectory(path);
        state = new JournalState(header, options.keySalt);
      }
      return new Journal(path, file, state, options, !read.state, read.fileBytes - read.validBytes);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  get header(): HeaderRecord {
    return this.state.header;
  }

  /** The state replayed from the file plus every append acknowledged since. */
  replay(): JournalState {
    return this.state;
  }

  /** Appends a record; resolves once it is on disk (fsynced). */
  append(entry: JournalEntry): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`checkpoint ${this.path} is closed`));
    if (this.failure) return Promise.reject(this.failure);
    let record: JournalRecord;
    try {
      record = this.toRecord(entry);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ record, line: `${JSON.stringify(record)}\n`, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when every append made so far is on disk. */
  async flush(): Promise<void> {
    while (!this.failure && (this.flushing || this.pending.length > 0)) await this.startDrain();
    if (this.failure) throw this.failure;
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.file.close();
    }
  }

  private toRecord(entry: JournalEntry): JournalRecord {
    const at = new Date((this.options.clock ?? systemClock).now()).toISOString();
    let raw: Record<string, unknown>;
    if (entry.type === 'beneficiary' || entry.type === 'recipient') {
      const { key, ...rest } = entry;
      raw = { ...rest, keyHash: hashDedupeKey(this.options.keySalt, key), at };
    } else {
      raw = { ...entry, at };
      if ('error' in entry && entry.error !== undefined) raw.error = scrubMessage(entry.error);
      if ('errors' in entry && entry.errors !== undefined) raw.errors = entry.errors.map(scrubMessage);
    }
    const parsed = RecordSchema.safeParse(raw);
    if (!parsed.success || parsed.data.type === 'header') {
      // A programming error: the caller built a record the journal cannot replay.
      throw new TypeError(`not a journal record: ${parsed.error?.issues[0]?.message ?? 'header'}`);
    }
    return parsed.data;
  }

  private schedule(): void {
    // While a write is in flight, the drain loop picks new lines up when its fsync returns.
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    const start = () => {
      this.scheduled = false;
      void this.startDrain();
    };
    const window = this.options.groupWindowMs ?? 0;
    if (window > 0) setTimeout(start, window);
    else setImmediate(start);
  }

  private startDrain(): Promise<void> {
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
      // Lines appended between the loop's last check and this callback must not be stranded.
      if (this.pending.length > 0 && !this.failure) void this.startDrain();
    });
    return this.flushing;
  }

  /** Writes and fsyncs groups until nothing is pending; the only writer (see startDrain). */
  private async drain(): Promise<void> {
    while (this.pending.length > 0 && !this.failure) {
      const group = this.pending;
      this.pending = [];
      try {
        await writeAll(this.file, group.map((p) => p.line).join(''));
        await this.file.datasync();
      } catch (err) {
        // After a failed write or fsync the file's tail is unknown: refuse everything after.
        this.failure = new Error(`checkpoint ${this.path} cannot be written: ${(err as Error).message}`, {
          cause: err,
        });
        for (const p of [...group, ...this.pending.splice(0)]) p.reject(this.failure);
        return;
      }
      for (const p of group) {
        this.state.apply(p.record);
        p.resolve();
      }
    }
  }
}

/**
 * Opens the checkpoint of a sheet: creates it with a header, or replays it after checking it
 * belongs to this sheet (GuardError otherwise) and cutting off a torn last line.
 */
export function openJournal(path: string, options: OpenJournalOptions): Promise<Journal> {
  return Journal.open(path, options);
}

/** Masks what must not be stored: credentials (redactSecrets) and digit runs of 8 or more. */
export function scrubMessage(text: string): string {
  return redactSecrets(text).replace(/\d{8,}/g, (digits) => `****${digits.slice(-4)}`);
}

interface ReadResult {
  /** Undefined when the file holds no complete header yet. */
  state: JournalState | undefined;
  /** Bytes up to the end of the last complete line. */
  validBytes: number;
  fileBytes: number;
}

async function readJournal(path: string, options: OpenJournalOptions): Promise<ReadResult> {
  let fileBytes: number;
  try {
    fileBytes = (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { state: undefined, validBytes: 0, fileBytes: 0 };
    throw err;
  }
  const result: ReadResult = { state: undefined, validBytes: 0, fileBytes };
  if (fileBytes === 0) return result;
  let lineNumber = 0;
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { end: fileBytes - 1 })) {
    const data = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    let start = 0;
    let newline = data.indexOf(0x0a);
    while (newline >= 0) {
      lineNumber += 1;
      // Records are folded in as they are read: a long journal is never held in memory whole.
      readLine(path, data.toString('utf8', start, newline), lineNumber, result, options);
      start = newline + 1;
      newline = data.indexOf(0x0a, start);
    }
    result.validBytes += start;
    carry = Buffer.from(data.subarray(start));
  }
  // Whatever follows the last newline is a torn write: cut off by the caller.
  return result;
}

function readLine(
  path: string,
  line: string,
  lineNumber: number,
  result: ReadResult,
  options: OpenJournalOptions,
) {
  let record: JournalRecord;
  try {
    record = RecordSchema.parse(JSON.parse(line));
  } catch {
    throw new GuardError(
      `checkpoint ${path} is damaged at line ${lineNumber} - it is not safe to resume from it: move it aside and check the results file of the earlier run before running again`,
    );
  }
  if (!result.state) {
    if (record.type !== 'header') {
      throw new GuardError(
        `${path} is not a payouts checkpoint (no header) - pass --checkpoint PATH or remove it`,
      );
    }
    checkHeader(path, record, options);
    result.state = new JournalState(record, options.keySalt);
    return;
  }
  result.state.apply(record);
}

function checkHeader(path: string, header: HeaderRecord, options: OpenJournalOptions): void {
  if (header.version > JOURNAL_VERSION) {
    throw new GuardError(
      `checkpoint ${path} was written by a newer payouts (journal version ${header.version}) - upgrade payouts to resume it`,
    );
  }
  if (header.sheetHash !== options.sheetHash || header.batchId !== options.batchId) {
    throw new GuardError(
      `checkpoint ${path} belongs to another sheet (sheet hash ${short(header.sheetHash)}…, batch ${header.batchId} - this sheet ${short(options.sheetHash)}…, batch ${options.batchId}) - pass --checkpoint PATH or remove it`,
    );
  }
}

function short(hash: string): string {
  return hash.slice(0, 12);
}

async function writeAll(file: FileHandle, text: string): Promise<void> {
  const buffer = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await file.write(buffer, offset, buffer.length - offset);
    offset += bytesWritten;
  }
}

/** Makes a new file's directory entry durable too; not every platform can (Windows), so best effort. */
async function syncDirectory(path: string): Promise<void> {
  let dir: FileHandle | undefined;
  try {
    dir = await open(dirname(path), 'r');
    await dir.sync();
  } catch {
    // Best effort: the record itself is fsynced; only a crash right after creation could lose the file.
  } finally {
    await dir?.close();
  }
}
