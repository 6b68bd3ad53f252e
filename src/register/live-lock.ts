/**
 * Whether a run on this host lives, by an OS lock that only the kernel releases: each run holds
 * a write lock on a file of its own (`<run id>.lock` in a folder of this user under $TMPDIR)
 * for as long as it runs, and whoever asks tries to take that lock without waiting. Taken: the
 * run's process is gone (the kernel released its lock when it died, SIGKILL included). Busy: it
 * lives. No file: the run ran elsewhere (another host, a container with a /tmp of its own) or
 * ended cleanly, and the lease decides (lease.ts).
 *
 * Clocks and /proc time values decide nothing here: inside a time namespace (`unshare --time`)
 * another process's start time and the machine's uptime read shifted, and a live run looked
 * dead. The lock is SQLite's own (libsql, a dependency already): POSIX record locks, which a
 * process holds per file, which fork does not pass on, and which the kernel drops with the
 * process; Node has no flock of its own and an N-API addon for one would be a second native
 * dependency for the same thing.
 */

import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Database from 'libsql';
import { systemClock } from '../clock.js';
import { errnoOf } from '../errors.js';

type Db = InstanceType<typeof Database>;

/** libsql, loaded on first use: what imports lease.ts (status, a PostgreSQL register) need not load it. */
let loaded: typeof Database | undefined;
function open(file: string): Db {
  loaded ??= createRequire(import.meta.url)('libsql') as typeof Database;
  return new loaded(file);
}

/** Lock files older than this whose run is gone are removed by the next run (its lease ran out long ago). */
const SWEEP_AFTER_MS = 10 * 60_000;

/** This user's folder of run locks on this host. */
export function liveLockFolder(): string {
  return path.join(tmpdir(), `payouts-live-${process.getuid?.() ?? 'user'}`);
}

function fileOf(folder: string, runId: string): string {
  return path.join(folder, `${runId}.lock`);
}

/** The lock a run holds while it lives. */
export class LiveLock {
  private constructor(
    private readonly db: Db,
    private readonly file: string,
  ) {}

  /**
   * Takes the lock of `runId`; undefined where no lock can be kept (a read-only $TMPDIR): then
   * only the lease and the process table speak for the run, as before.
   */
  static acquire(runId: string, folder = liveLockFolder()): LiveLock | undefined {
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      sweep(folder);
      const file = fileOf(folder, runId);
      const db = open(file);
      db.exec('BEGIN EXCLUSIVE');
      return new LiveLock(db, file);
    } catch {
      return undefined;
    }
  }

  /** Gives the lock back and removes its file (a run that ended). */
  release(): void {
    try {
      this.db.exec('ROLLBACK');
      this.db.close();
    } catch {
      // Closed already.
    }
    try {
      unlinkSync(this.file);
    } catch {
      // Removed already.
    }
  }
}

/** What this host knows of a run: `alive` (its lock is held), `dead` (free), or undefined (no lock here). */
export type LocalLiveness = 'alive' | 'dead' | undefined;

/** Asks the lock of `runId` without waiting (see the file's comment). */
export function localLiveness(runId: string, folder = liveLockFolder()): LocalLiveness {
  const file = fileOf(folder, runId);
  let db: Db | undefined;
  try {
    statSync(file);
    db = open(file);
    db.pragma('busy_timeout = 0');
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return 'dead';
  } catch (error) {
    return errnoOf(error) === 'SQLITE_BUSY' ? 'alive' : undefined;
  } finally {
    db?.close();
  }
}

/** Removes the lock files of runs long gone (free, and older than SWEEP_AFTER_MS). */
function sweep(folder: string): void {
  // The machine's wall clock, as the files' modification times are.
  const now = systemClock.now();
  for (const name of readdirSync(folder)) {
    if (!name.endsWith('.lock')) continue;
    const file = path.join(folder, name);
    try {
      if (now - statSync(file).mtimeMs < SWEEP_AFTER_MS) continue;
      if (localLiveness(name.slice(0, -'.lock'.length), folder) === 'dead') unlinkSync(file);
    } catch {
      // Another run swept it first.
    }
  }
}
