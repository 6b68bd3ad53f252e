/**
 * The sheet as `run` read it (issue 7, item 4: read once). Pass 1 reads the file and stores
 * every raw row here while the guards, control totals and digest look at them; the send pass
 * and the results file replay these rows, so a file changed on disk during the run changes
 * nothing that is sent or written. A private temporary file (0600: rows hold account
 * numbers), removed when the run ends.
 */
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RawRow } from '../sheet/types.js';

/** Text gathered before a write. */
const WRITE_CHARS = 256 * 1024;

export class RowSnapshot {
  private pending = '';

  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** A new empty snapshot in a private temporary directory. */
  static async create(): Promise<RowSnapshot> {
    const dir = await mkdtemp(path.join(tmpdir(), 'payouts-run-'));
    const file = path.join(dir, 'rows.jsonl');
    const handle = await open(file, 'w', 0o600);
    return new RowSnapshot(dir, file, handle);
  }

  /** Stores a row; returns a promise to wait on only when a write is due (not one per row). */
  add(row: RawRow): Promise<void> | undefined {
    this.pending += `${JSON.stringify(row)}\n`;
    return this.pending.length >= WRITE_CHARS ? this.flush() : undefined;
  }

  /** Writes what is pending; call before replaying. */
  async seal(): Promise<void> {
    await this.flush();
  }

  /** The rows in the order they were stored. */
  async *rows(): AsyncGenerator<RawRow> {
    const handle = await open(this.file, 'r');
    try {
      for await (const line of handle.readLines({ encoding: 'utf8' })) {
        if (line !== '') yield JSON.parse(line) as RawRow;
      }
    } finally {
      await handle.close();
    }
  }

  /** Removes the snapshot. */
  async dispose(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }

  private async flush(): Promise<void> {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    await this.handle.write(text);
  }
}
