/**
 * The events file: one JSON line per webhook event received, `{ receivedAt, event }` with the
 * payload as it arrived (docs/service.md "Webhook payload"). The receiver appends to it (fsynced
 * before the delivery is acknowledged) and reads it back on start to keep de-duplicating;
 * reconcile.ts reads it to turn `submitted` rows into `completed` or `failed`.
 */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import type { WebhookPayload } from '../api/contract.js';
import { type Cancel, type Clock, systemClock, type Timers, timersOf } from '../clock.js';
import { StorageError } from '../errors.js';
import { toWebhookPayload } from './payload.js';

/** One line of the events file. */
export interface EventRecord {
  /** When payouts received it (ISO 8601 UTC). */
  receivedAt: string;
  event: WebhookPayload;
}

/** An event read back, with the line it came from. */
export interface StoredEvent extends EventRecord {
  line: number;
}

export interface ReadEventsOptions {
  /** Called for each line that is not an event (a torn last line after a crash, an edit). */
  onBadLine?: (line: number, problem: string) => void;
}

/**
 * Reads the events file line by line, in order; a missing file reads as empty. A line may also
 * be a bare webhook payload (a file put together by hand); its `receivedAt` is then ''.
 */
export async function* readEvents(
  file: string,
  options: ReadEventsOptions = {},
): AsyncGenerator<StoredEvent> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw eventsFileError(file, 'read', error);
  }
  try {
    let line = 0;
    for await (const text of handle.readLines({ encoding: 'utf8' })) {
      line += 1;
      if (text.trim() === '') continue;
      const read = parseLine(text);
      if (typeof read === 'string') options.onBadLine?.(line, read);
      else yield { ...read, line };
    }
  } catch (error) {
    // Only reading can fail here (a consumer's own error ends the loop through return()).
    throw error instanceof StorageError ? error : eventsFileError(file, 'read', error);
  } finally {
    await handle.close();
  }
}

/**
 * Whether the events file can be read (a missing one reads as empty): `run --events` asks
 * before anything is sent, so a file it cannot read stops it with nothing paid (exit 2).
 */
export async function checkEventsFile(file: string): Promise<void> {
  for await (const _ of readEvents(file)) break;
}

/**
 * The events file cannot be read or written: a StorageError naming it, with the
 * errno in words, so that it is never taken for a bug (exit 70).
 */
export function eventsFileError(file: string, verb: 'read' | 'write', cause: unknown): StorageError {
  return new StorageError(
    `cannot ${verb} the events file ${file} (fix the file or its folder, or give another --events PATH)`,
    { path: file, cause },
  );
}

function parseLine(text: string): EventRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON (a line cut short by a crash?)';
  }
  const record = value as Partial<Record<keyof EventRecord, unknown>> | null;
  const wrapped = typeof record === 'object' && record !== null && 'event' in record;
  const parsed = toWebhookPayload(wrapped ? record.event : value);
  if (!parsed.ok) return parsed.problem;
  const receivedAt = wrapped && typeof record.receivedAt === 'string' ? record.receivedAt : '';
  return { receivedAt, event: parsed.payload };
}

interface Pending {
  text: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The events file open for appending. Appends are queued and written in groups, one write and
 * one fsync per group, so a burst of deliveries costs a few fsyncs, not one each.
 */
export class EventLog {
  private pending: Pending[] = [];
  private draining: Promise<void> | undefined;
  /** Lines whose write failed, written again before anything newer (oldest first, bounded). */
  private backlog: string[] = [];
  /** Cancels the pending retry of a failed write, if one is waiting. */
  private retry: Cancel | undefined;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
    /** The file's last line has no newline (a crash or a failed write cut it): start on a fresh line. */
    private needsNewline: boolean,
    private readonly timers: Timers,
  ) {}

  /** Lines kept for another try after failed writes; past this the oldest are given up (and said). */
  static readonly BACKLOG_LINES = 10_000;
  /** How soon a failed write is tried again when nothing new comes. */
  static readonly RETRY_MS = 1_000;

  /**
   * Opens `file` for appending, creating it with mode 0600 (events carry payment details); the
   * clock's timers time the retries of failed writes.
   */
  static async open(file: string, clock: Clock = systemClock): Promise<EventLog> {
    let created = false;
    let handle: FileHandle;
    try {
      handle = await open(
        file,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL,
        0o600,
      );
      created = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw eventsFileError(file, 'write', error);
      try {
        handle = await open(file, 'a');
      } catch (again) {
        throw eventsFileError(file, 'write', again);
      }
    }
    try {
      if (created) await syncDirectory(path.dirname(file));
      return new EventLog(file, handle, await endsWithoutNewline(file), timersOf(clock));
    } catch (error) {
      await handle.close();
      throw eventsFileError(file, 'write', error);
    }
  }

  /**
   * Appends one event; resolves once it is on disk. A write that fails (a full disk) rejects
   * its appends, and their lines are written again with the next append or a second later:
   * a failure is never sticky, so the file catches up once the disk has room.
   */
  append(record: EventRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`events file ${this.path} is closed`));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ text: `${JSON.stringify(record)}\n`, resolve, reject });
      this.startDrain();
    });
  }

  /** Lines waiting for another try after a failed write. */
  get behind(): number {
    return this.backlog.length;
  }

  /** Waits for every append (one more try of what failed), then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.retry?.();
    this.retry = undefined;
    while (this.draining) await this.draining;
    if (this.backlog.length > 0) this.startDrain();
    while (this.draining) await this.draining;
    await this.file.close();
  }

  private startDrain(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      // Lines queued between the loop's last check and this callback must not be stranded.
      if (this.pending.length > 0) this.startDrain();
    });
  }

  /** The only writer: takes what failed before and whatever is queued, writes it, fsyncs, repeats. */
  private async drain(): Promise<void> {
    while (this.pending.length > 0 || (this.backlog.length > 0 && this.retry === undefined)) {
      const group = this.pending;
      this.pending = [];
      const lines = [...this.backlog, ...group.map((p) => p.text)];
      try {
        await this.file.write((this.needsNewline ? '\n' : '') + lines.join(''));
        this.needsNewline = false;
        await this.file.datasync();
      } catch (error) {
        // The file's tail is unknown after a failed write: the next write starts on a fresh line
        // (a reader skips a torn one), and these lines are tried again.
        this.needsNewline = true;
        this.backlog = lines.slice(-EventLog.BACKLOG_LINES);
        const failure = eventsFileError(this.path, 'write', error);
        for (const p of group) p.reject(failure);
        if (!this.closed) {
          this.retry = this.timers.once(
            EventLog.RETRY_MS,
            () => {
              this.retry = undefined;
              this.startDrain();
            },
            { unref: true },
          );
        }
        return;
      }
      this.backlog = [];
      for (const p of group) p.resolve();
    }
  }
}

async function endsWithoutNewline(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    await handle.close();
  }
}

/** Makes a newly created file's directory entry durable (not supported everywhere: best effort). */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows cannot open a directory; the file's own fsync still holds its data.
  } finally {
    await handle?.close();
  }
}
