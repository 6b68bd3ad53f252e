/**
 * One run per sheet (issue 4, item 5: cron overlap). `<sheet>.lock` is created with O_EXCL and
 * holds who has it; a second run is refused with GuardError (exit 4) naming the holder.
 *
 * A holder that died leaves its lock behind, and is recovered:
 * - same host: the pid no longer exists (`kill(pid, 0)` fails with ESRCH) → stale;
 * - another host (containers get a new hostname per run, the sheet on a shared volume): we
 *   cannot see its processes, so the holder refreshes the lock's mtime every 30 s and a lock
 *   not refreshed for 10 minutes is stale. That is generous against clock skew and pauses,
 *   and short enough for the next cron run to proceed after a crash.
 * Taking over is atomic: only one contender at a time (a `.takeover` marker made with O_EXCL),
 * and only if the lock still holds exactly what was judged stale.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import type { Clock } from '../api/clock.js';
import { systemClock } from '../api/clock.js';
import { GuardError } from '../errors.js';

/** What the lock file holds. */
export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
  /** Tells our lock from a successor's, so release never removes someone else's. */
  nonce: string;
}

export interface LockOptions {
  clock?: Clock;
  /** How often the holder refreshes the lock's mtime. */
  heartbeatMs?: number;
  /** A lock from another host is stale when not refreshed for this long. */
  foreignStaleMs?: number;
  /** Overrides for tests. */
  pid?: number;
  hostname?: string;
}

export const LOCK_DEFAULTS = {
  heartbeatMs: 30_000,
  foreignStaleMs: 10 * 60_000,
  /** A lock file without readable content is being written, unless it is older than this. */
  unreadableGraceMs: 10_000,
  /** A takeover marker older than this was left by a contender that died mid-takeover. */
  takeoverGraceMs: 30_000,
};

/** The lock path of a sheet. */
export function lockPathOf(sheetPath: string): string {
  return `${sheetPath}.lock`;
}

/** A held lock. */
/**
 * Nonces of the locks this process holds now. A lock file naming our own pid is ours only if
 * its nonce is here; otherwise it was left by an earlier process that had the same pid, as
 * every container's node has pid 1 (a container restarted after an OOM kill, for example).
 */
const heldHere = new Set<string>();

export class SheetLock {
  private heartbeat: NodeJS.Timeout | undefined;
  private released = false;
  private readonly onExit = () => this.releaseSync();

  constructor(
    readonly path: string,
    readonly holder: LockHolder,
    heartbeatMs: number,
    clock: Clock,
  ) {
    this.heartbeat = setInterval(() => {
      const now = new Date(clock.now());
      utimes(path, now, now).catch(() => {
        // A missed beat only matters after many: the next one tries again.
      });
    }, heartbeatMs);
    this.heartbeat.unref();
    // Released on a normal exit too; a kill -9 leaves it for the stale-lock recovery.
    process.once('exit', this.onExit);
  }

  /** Removes the lock if it is still ours. */
  async release(): Promise<void> {
    if (!this.stop()) return;
    try {
      if (parseHolder(await readFile(this.path, 'utf8'))?.nonce === this.holder.nonce)
        await unlink(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  private releaseSync(): void {
    if (!this.stop()) return;
    try {
      if (parseHolder(readFileSync(this.path, 'utf8'))?.nonce === this.holder.nonce) unlinkSync(this.path);
    } catch {
      // Exiting anyway: a lock left behind is recovered as stale by the next run.
    }
  }

  private stop(): boolean {
    if (this.released) return false;
    heldHere.delete(this.holder.nonce);
    this.released = true;
    clearInterval(this.heartbeat);
    process.removeListener('exit', this.onExit);
    return true;
  }
}

/**
 * Takes the lock of `sheetPath`, recovering a stale one. Throws GuardError when a live run
 * holds it.
 */
export async function acquireLock(sheetPath: string, options: LockOptions = {}): Promise<SheetLock> {
  const clock = options.clock ?? systemClock;
  const path = lockPathOf(sheetPath);
  const me: LockHolder = {
    pid: options.pid ?? process.pid,
    hostname: options.hostname ?? osHostname(),
    startedAt: new Date(clock.now()).toISOString(),
    nonce: randomBytes(12).toString('base64url'),
  };
  const text = `${JSON.stringify(me)}\n`;
  const heartbeatMs = options.heartbeatMs ?? LOCK_DEFAULTS.heartbeatMs;
  const held = () => new SheetLock(path, me, heartbeatMs, clock);

  // Ours from before the file is written: a contender in this process that reads it must not
  // take it for an earlier incarnation's.
  heldHere.add(me.nonce);
  try {
    // A few rounds: a contender may release, or take over, between our steps.
    for (let round = 0; round < 3; round++) {
      if (await createExclusive(path, text)) return held();
      const existing = await readLock(path);
      if (!existing) continue; // released meanwhile
      const stale = staleness(existing, me, clock, options);
      if (!stale.stale) throw new GuardError(refusal(sheetPath, path, existing.holder, stale.why));
      if (await takeOver(path, existing.text, text, clock)) return held();
    }
    throw new GuardError(`another payouts run is taking the lock ${path} at the same moment - try again`);
  } catch (error) {
    heldHere.delete(me.nonce);
    throw error;
  }
}

interface ExistingLock {
  text: string;
  holder: LockHolder | undefined;
  mtimeMs: number;
}

async function createExclusive(path: string, text: string): Promise<boolean> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    await file.writeFile(text, 'utf8');
    await file.datasync();
  } finally {
    await file.close();
  }
  return true;
}

async function readLock(path: string): Promise<ExistingLock | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    return { text, holder: parseHolder(text), mtimeMs: info.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (
      typeof value.pid === 'number' &&
      typeof value.hostname === 'string' &&
      typeof value.startedAt === 'string'
    ) {
      return {
        pid: value.pid,
        hostname: value.hostname,
        startedAt: value.startedAt,
        nonce: String(value.nonce ?? ''),
      };
    }
  } catch {
    // Not JSON: a lock being written, or garbage; judged by age.
  }
  return undefined;
}

function staleness(
  existing: ExistingLock,
  me: LockHolder,
  clock: Clock,
  options: LockOptions,
): { stale: boolean; why: string } {
  const age = clock.now() - existing.mtimeMs;
  const { holder } = existing;
  if (!holder) {
    return { stale: age > LOCK_DEFAULTS.unreadableGraceMs, why: 'its lock file is being written' };
  }
  if (holder.hostname === me.hostname) {
    if (holder.pid === me.pid) {
      return { stale: !heldHere.has(holder.nonce), why: 'this process holds it already' };
    }
    return { stale: !processAlive(holder.pid), why: 'that process is still running' };
  }
  const limit = options.foreignStaleMs ?? LOCK_DEFAULTS.foreignStaleMs;
  return {
    stale: age > limit,
    why: `it runs on another host and refreshed the lock ${Math.round(age / 1000)} s ago (taken over after ${Math.round(limit / 60_000)} min without refresh)`,
  };
}

/** Whether `pid` (not ours) is a live process on this host. */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function takeOver(path: string, staleText: string, text: string, clock: Clock): Promise<boolean> {
  const marker = `${path}.takeover`;
  if (!(await createExclusive(marker, `${process.pid}\n`))) {
    const info = await stat(marker).catch(() => undefined);
    if (info && clock.now() - info.mtimeMs > LOCK_DEFAULTS.takeoverGraceMs)
      await unlink(marker).catch(() => {});
    return false;
  }
  try {
    // Only if nobody changed the lock since we judged it stale.
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current !== undefined && current !== staleText) return false;
    await unlink(path).catch(() => {});
    return await createExclusive(path, text);
  } finally {
    await unlink(marker).catch(() => {});
  }
}

function refusal(sheetPath: string, path: string, holder: LockHolder | undefined, why: string): string {
  const who = holder
    ? `pid ${holder.pid} on ${holder.hostname}, started ${holder.startedAt}`
    : 'unknown holder';
  return `another payouts run holds ${sheetPath} (${who}) - ${why}. Wait for it to finish - if it is not running, remove ${path}`;
}
