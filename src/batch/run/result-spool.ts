/**
 * The results of a run's sent rows, on disk in sheet order as they finish (in-order.ts hands
 * them on), one line per row, in the private folder of the sheet's snapshot (0600, removed with
 * it). The passes after sending (webhook outcomes, `--wait`) read it back a chunk at a time and
 * the results file is written from it beside the snapshot's rows, so a run holds no map of its
 * rows' results: a million rows cost what a thousand do.
 *
 * The scratch space can fill while rows are sent. A write that fails loses nothing: the file
 * is cut back to its last whole line, and what it could not keep stays in memory (the run then
 * stops taking rows, so that is the rows under way), to be read after what the file holds.
 */
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import type { ScratchError } from '../../errors.js';
import { diskFull, inScratch, scratchFailure, WRITE_CHARS } from '../scratch.js';
import type { RowResult } from '../summary.js';

/**
 * A row's result with its sheet row number; `fromRegister` when the register decided it (paid
 * already, a reference reused, in doubt): not a row this run would send, so no warnings;
 * `held` when `--hold-changed-payees` held it: a row that needs attention.
 */
export type SentRow = RowResult & { rowNumber: number; fromRegister?: boolean; held?: boolean };

/** A row's result and its place in the sheet (the n-th row read, from 0; not its row number). */
export interface SpooledRow {
  seq: number;
  reference: string;
  row: SentRow;
}

type Line = [
  seq: number,
  reference: string,
  rowNumber: number,
  status: SentRow['status'],
  errors: string[],
  beneficiaryId: string | null,
  recipientId: string | null,
  simulationId: string | null,
  transactionId: string | null,
  /** 'r': the register decided the row; 'h': `--hold-changed-payees` held it; '': sent. */
  decided: '' | 'r' | 'h',
];

/** Writes rows' results in increasing `seq`; the one writer of its file. */
export class ResultSpoolWriter {
  private pending = '';
  private writing: Promise<void> = Promise.resolve();
  private last = -1;
  /** Bytes of whole lines on disk. */
  private written = 0;
  /** Lines the file could not keep, in order, after those it holds. */
  private kept: string[] = [];
  /** Why the file stopped taking lines: the scratch space failed. */
  private failed: ScratchError | undefined;

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** A new spool (0600) at `file`; a scratch space that cannot take it is a ScratchError. */
  static async create(file: string): Promise<ResultSpoolWriter> {
    return new ResultSpoolWriter(file, await inScratch(() => open(file, 'w', 0o600)));
  }

  /** The failure of the scratch space that made this spool keep lines in memory, if one did. */
  get failure(): ScratchError | undefined {
    return this.failed;
  }

  /**
   * Adds a row's result. Writes are chained, never two at once on the file; once one fails,
   * lines are kept in memory (see `failure`).
   */
  add(seq: number, reference: string, row: SentRow): void {
    // The results file is merged with the snapshot's rows by position: out of order would
    // put one row's result on another.
    if (seq <= this.last)
      throw new Error(`a row's result came out of sheet order (${seq} after ${this.last})`);
    this.last = seq;
    const line: Line = [
      seq,
      reference,
      row.rowNumber,
      row.status,
      row.errors,
      row.beneficiaryId ?? null,
      row.recipientId ?? null,
      row.simulationId ?? null,
      row.transactionId ?? null,
      row.fromRegister === true ? 'r' : row.held === true ? 'h' : '',
    ];
    this.pending += `${JSON.stringify(line)}\n`;
    if (this.pending.length >= WRITE_CHARS) this.flush();
  }

  /**
   * Writes what is pending and closes the file; the results can then be read, those the file
   * could not keep from memory. Never throws for the scratch space: `failure` says it failed.
   */
  async seal(): Promise<ResultSpool> {
    this.flush();
    try {
      await this.writing;
    } finally {
      await this.handle.close().catch(() => {});
    }
    return new ResultSpool(this.file, this.kept);
  }

  /** Closes the file without sealing it. */
  async abandon(): Promise<void> {
    await this.writing.catch(() => {});
    await this.handle.close().catch(() => {});
  }

  private flush(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.writing = this.writing.then(async () => {
      if (this.failed === undefined) {
        const bytes = Buffer.from(text);
        try {
          // A full disk may take part of a write and refuse the rest.
          const { bytesWritten } = await this.handle.write(bytes, 0, bytes.length, this.written);
          if (bytesWritten === bytes.length) {
            this.written += bytesWritten;
            return;
          }
          throw diskFull();
        } catch (error) {
          this.failed = scratchFailure(error);
          // The file ends where this write began: these lines are kept whole, in memory.
          await this.handle.truncate(this.written).catch(() => {});
        }
      }
      this.kept.push(...text.split('\n').filter((line) => line !== ''));
    });
  }
}

/** The rows' results of a run, read in sheet order. */
export class ResultSpool {
  /** `kept`: the lines that follow the file's, held in memory (the scratch space filled). */
  constructor(
    readonly file: string,
    private readonly kept: readonly string[] = [],
  ) {}

  /** Every row's result, in sheet order. */
  async *rows(): AsyncGenerator<SpooledRow> {
    for await (const text of this.lines()) {
      const [
        seq,
        reference,
        rowNumber,
        status,
        errors,
        beneficiaryId,
        recipientId,
        simulationId,
        transactionId,
        decided,
      ] = JSON.parse(text) as Line;
      const row: SentRow = { status, errors, rowNumber };
      if (beneficiaryId !== null) row.beneficiaryId = beneficiaryId;
      if (recipientId !== null) row.recipientId = recipientId;
      if (simulationId !== null) row.simulationId = simulationId;
      if (transactionId !== null) row.transactionId = transactionId;
      if (decided === 'r') row.fromRegister = true;
      else if (decided === 'h') row.held = true;
      yield { seq, reference, row };
    }
  }

  private async *lines(): AsyncGenerator<string> {
    const handle = await open(this.file, 'r');
    try {
      for await (const text of handle.readLines({ encoding: 'utf8' })) if (text !== '') yield text;
    } finally {
      await handle.close();
    }
    yield* this.kept;
  }

  /** The results `size` rows at a time. */
  async *chunks(size: number): AsyncGenerator<SpooledRow[]> {
    let chunk: SpooledRow[] = [];
    for await (const spooled of this.rows()) {
      chunk.push(spooled);
      if (chunk.length >= size) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  /**
   * Reads the results a chunk at a time, lets `change` update the rows of each (outcomes that
   * became known after sending), and puts the changed results in this spool's place.
   */
  async rewrite(size: number, change: (chunk: SpooledRow[]) => Promise<void>): Promise<void> {
    // A spool that already keeps lines in memory stays as it is: the scratch space is full.
    if (this.kept.length > 0) throw new Error('the scratch space filled while the rows were sent');
    const next = await ResultSpoolWriter.create(`${this.file}.next`);
    try {
      for await (const chunk of this.chunks(size)) {
        await change(chunk);
        for (const { seq, reference, row } of chunk) next.add(seq, reference, row);
      }
      await next.seal();
      // Changed outcomes that the scratch space cannot hold are left: this spool says what the
      // sending knew.
      if (next.failure !== undefined) throw next.failure;
    } catch (error) {
      await next.abandon();
      await rm(next.file, { force: true }).catch(() => {});
      throw error;
    }
    await rename(next.file, this.file);
  }
}
