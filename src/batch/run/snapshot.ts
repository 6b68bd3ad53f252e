/**
 * The sheet as `run` read it (read once). Pass 1 reads the file and stores
 * every raw row here while the guards, control totals and digest look at them; the send pass
 * and the results file replay these rows, so a file changed on disk during the run changes
 * nothing that is sent or written. A private temporary file (0600: rows hold account
 * numbers), removed when the run ends. A run killed before it could remove its snapshot
 * (SIGKILL, a power cut) leaves it behind: the next run on this host removes it.
 */
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { pidAlive } from '../../register/lease.js';
import type { Cell, CellKind, RawRow } from '../../sheet/types.js';
import { inScratch, ScratchLines, scratchFolder, scratchLines } from '../scratch.js';

export class RowSnapshot {
  private constructor(
    private readonly dir: string,
    private readonly lines: ScratchLines,
  ) {}

  /**
   * A new empty snapshot in a private folder of the scratch space (named for this host and
   * pid). A scratch space that cannot be used is a ScratchError, nothing left behind.
   */
  static async create(): Promise<RowSnapshot> {
    await removeStaleSnapshots();
    const dir = await inScratch(() =>
      mkdtemp(path.join(scratchFolder(), `${snapshotPrefix()}${process.pid}-`)),
    );
    try {
      return new RowSnapshot(dir, await ScratchLines.create(path.join(dir, 'rows.jsonl')));
    } catch (error) {
      await rm(dir, { recursive: true, force: true }).catch(() => {});
      throw error;
    }
  }

  /** Stores a row; returns a promise to wait on only when a write is due (not one per row). */
  add(row: RawRow): Promise<void> | undefined {
    return this.lines.add(JSON.stringify(encodeRow(row)));
  }

  /** Writes what is pending; call before replaying. */
  async seal(): Promise<void> {
    await this.lines.seal();
  }

  /** The rows in the order they were stored. */
  async *rows(): AsyncGenerator<RawRow> {
    for await (const line of scratchLines(this.lines.file)) yield decodeRow(JSON.parse(line) as StoredRow);
  }

  /** A file of this snapshot's private folder, for what the run keeps beside its rows; removed with it. */
  sidecar(name: string): string {
    return path.join(this.dir, name);
  }

  /** Removes the snapshot. */
  async dispose(): Promise<void> {
    await this.lines.abandon();
    await rm(this.dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * A row as the snapshot stores it: a cell object per cell spelt out would make a million rows of
 * forty columns six times the size of their CSV, written once and read three times. A text cell
 * is its text, an empty one 0, any other [text, kind, formula, sum], then its number format's
 * index when it has one (the results keep each cell's format); the row is
 * [rowNumber, cells, problems] with 1 after them for a stray quote.
 */
type StoredCell =
  | string
  | 0
  | [text: string, kind: CellKind, formula: 0 | 1, sum: 0 | 1]
  | [text: string, kind: CellKind, formula: 0 | 1, sum: 0 | 1, format: number];
type StoredRow = [rowNumber: number, cells: StoredCell[], problems: string[], strayQuote?: 1];

export function encodeRow(row: RawRow): StoredRow {
  const cells = row.cells.map((cell): StoredCell => {
    if (cell.formula === undefined && cell.sum === undefined && cell.format === undefined) {
      if (cell.kind === 'string') return cell.text;
      if (cell.kind === 'empty' && cell.text === '') return 0;
    }
    const formula = cell.formula ? 1 : 0;
    const sum = cell.sum ? 1 : 0;
    return cell.format === undefined
      ? [cell.text, cell.kind, formula, sum]
      : [cell.text, cell.kind, formula, sum, cell.format];
  });
  return row.strayQuote ? [row.rowNumber, cells, row.problems, 1] : [row.rowNumber, cells, row.problems];
}

export function decodeRow([rowNumber, stored, problems, strayQuote]: StoredRow): RawRow {
  const cells = stored.map((cell): Cell => {
    if (typeof cell === 'string') return { text: cell, kind: 'string' };
    if (cell === 0) return { text: '', kind: 'empty' };
    const [text, kind, formula, sum, format] = cell;
    return {
      text,
      kind,
      ...(formula === 1 ? { formula: true } : {}),
      ...(sum === 1 ? { sum: true } : {}),
      ...(format === undefined ? {} : { format }),
    };
  });
  return strayQuote === 1 ? { rowNumber, cells, problems, strayQuote: true } : { rowNumber, cells, problems };
}

/** `payouts-run-<host>-`: the snapshots of this host, followed by their run's pid. */
function snapshotPrefix(): string {
  return `payouts-run-${hostname().replace(/[^A-Za-z0-9.-]/g, '_')}-`;
}

/**
 * Removes the snapshots of runs on this host whose process is gone, owned by this user. Best
 * effort: a snapshot that cannot be read or removed is left, and the run goes on.
 */
export async function removeStaleSnapshots(dir = scratchFolder()): Promise<string[]> {
  const prefix = snapshotPrefix();
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || pidAlive(pid)) continue;
    const stale = path.join(dir, name);
    try {
      const stat = await lstat(stale);
      if (!stat.isDirectory() || stat.uid !== process.getuid?.()) continue;
      await rm(stale, { recursive: true, force: true });
      removed.push(stale);
    } catch {
      // Another run removed it first, or it is not ours to remove.
    }
  }
  return removed;
}
