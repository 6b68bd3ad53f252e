/**
 * The results of a run's sent rows, on disk in sheet order as they finish (in-order.ts hands
 * them on), one line per row, in the private folder of the sheet's snapshot (0600, removed with
 * it). The passes after sending (webhook outcomes, `--wait`) read it back a chunk at a time and
 * the results file is written from it beside the snapshot's rows, so a run holds no map of its
 * rows' results: a million rows cost what a thousand do.
 */
import { type FileHandle, open, rename } from 'node:fs/promises';
import type { RowResult } from './row-steps.js';

/**
 * A row's result with its sheet row number; `fromRegister` when the register decided it (paid
 * already, a reference reused, in doubt): not a row this run would send, so no warnings;
 * `held` when `--hold-changed-payees` held it: a row that needs attention.
 */
export type SentRow = RowResult & { rowNumber: number; fromRegister?: boolean; held?: boolean };

/** Text gathered before a write. */
const WRITE_CHARS = 256 * 1024;

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

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** A new spool (0600) at `file`. */
  static async create(file: string): Promise<ResultSpoolWriter> {
    return new ResultSpoolWriter(file, await open(file, 'w', 0o600));
  }

  /**
   * Adds a row's result. Writes are chained, never two at once on the file; a failed write is
   * thrown by `seal`.
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

  /** Writes what is pending and closes the file; the results can then be read. */
  async seal(): Promise<ResultSpool> {
    this.flush();
    try {
      await this.writing;
    } finally {
      await this.handle.close().catch(() => {});
    }
    return new ResultSpool(this.file);
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
      await this.handle.write(text);
    });
  }
}

/** The rows' results of a run, read in sheet order. */
export class ResultSpool {
  constructor(readonly file: string) {}

  /** Every row's result, in sheet order. */
  async *rows(): AsyncGenerator<SpooledRow> {
    const handle = await open(this.file, 'r');
    try {
      for await (const text of handle.readLines({ encoding: 'utf8' })) {
        if (text === '') continue;
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
    } finally {
      await handle.close();
    }
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
    const next = await ResultSpoolWriter.create(`${this.file}.next`);
    try {
      for await (const chunk of this.chunks(size)) {
        await change(chunk);
        for (const { seq, reference, row } of chunk) next.add(seq, reference, row);
      }
      await next.seal();
    } catch (error) {
      await next.abandon();
      throw error;
    }
    await rename(next.file, this.file);
  }
}
