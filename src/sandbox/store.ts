/**
 * Where the sandbox keeps what it has been sent: one SQLite file of its own (libsql, the
 * register's driver), removed from its folder as soon as it is open, so that the file lives as
 * long as the process holds it and a sandbox that is killed leaves nothing behind. A rehearsal of
 * a million rows makes millions of records and keeps the answer of every POST for replay; held
 * as objects that is about 6 KB a payout, in the file it is disk, with the memory of a small page
 * cache. Nothing here needs to survive the process: no journal, no fsync.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'libsql';

export type SandboxDb = InstanceType<typeof Database>;

/** Defaults in one object. */
export const STORE_DEFAULTS = {
  /** SQLite's page cache, in KiB: recent pages of the tables and indexes; the OS caches the rest. */
  pageCacheKib: 8 * 1024,
} as const;

/**
 * Opens a fresh store under the system's temporary folder. The ledger stays readable after the
 * sandbox closes (tests read it then), so the database is never closed: it goes with the process,
 * or with the sandbox once nothing refers to it.
 */
export function openSandboxStore(): SandboxDb {
  const folder = mkdtempSync(path.join(tmpdir(), 'payouts-sandbox-'));
  try {
    const db = new Database(path.join(folder, 'ledger.db'));
    // A temporary file: a crash loses nothing anyone needs, so no journal and no fsync.
    db.exec('PRAGMA journal_mode = OFF');
    db.exec('PRAGMA synchronous = OFF');
    db.exec(`PRAGMA cache_size = -${STORE_DEFAULTS.pageCacheKib}`);
    return db;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
