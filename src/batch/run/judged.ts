/**
 * The approver's warnings of a run's rows, judged once, before anything is sent, from the
 * sheet and the register's payee history, and kept on disk beside the sheet's snapshot, one
 * line per row in sheet order. The send pass (which rows `--hold-changed-payees` holds) and the
 * results file read them back in step with the rows, so neither needs the register again: a
 * register that fails mid-run costs no warning and no results file, and the run holds no row's
 * warnings in memory.
 */
import { open } from 'node:fs/promises';
import { ScratchLines } from '../scratch.js';
import { decodeWarnings, encodeWarnings, type RowWarning } from '../warnings.js';

/** Writes each row's warnings, in sheet order. */
export class JudgedWarningsWriter {
  private constructor(private readonly lines: ScratchLines) {}

  /** A new file (0600, beside the snapshot's rows). */
  static async create(file: string): Promise<JudgedWarningsWriter> {
    return new JudgedWarningsWriter(await ScratchLines.create(file));
  }

  /** The next row's warnings; a promise to wait on only when a write is due. */
  add(warnings: readonly RowWarning[]): Promise<void> | undefined {
    return this.lines.add(encodeWarnings(warnings));
  }

  /** Writes what is pending and closes the file; the warnings can then be read. */
  async seal(): Promise<JudgedWarnings> {
    await this.lines.seal();
    return new JudgedWarnings(this.lines.file);
  }

  /** Closes the file without sealing it (the run stopped before sending). */
  async abandon(): Promise<void> {
    await this.lines.abandon();
  }
}

/** The warnings of a run's rows, as judged before sending, read in sheet order. */
export class JudgedWarnings {
  constructor(readonly file: string) {}

  /** Each row's warnings, in the order they were judged. */
  async *rows(): AsyncGenerator<readonly RowWarning[]> {
    const handle = await open(this.file, 'r');
    try {
      for await (const line of handle.readLines({ encoding: 'utf8' })) yield decodeWarnings(line);
    } finally {
      await handle.close();
    }
  }
}
