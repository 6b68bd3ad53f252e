/**
 * Whose claim is it (issue 7, item 3): a run records its host, pid and a heartbeat; a claim
 * whose run finished, died, or went silent past the lease is abandoned, and a later run takes
 * it over (or, if its transaction request may have left, reports it `unknown`).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunRecord } from './types.js';

/** Defaults in one object: how often a run proves it lives, and how long silence is tolerated. */
export const LEASE = {
  heartbeatMs: 10_000,
  /** Six missed heartbeats: a run this silent is dead or hung past saving. */
  leaseMs: 60_000,
} as const;

/** This process as a claim owner. */
export interface Self {
  runId: string;
  host: string;
  pid: number;
}

/** The runs this process holds now: on one pid, a run is alive exactly when it is listed here. */
const liveRuns = new Set<string>();

/** A new run id for this process. */
export function newSelf(): Self {
  return { runId: randomUUID(), host: hostname(), pid: process.pid };
}

/** Marks a run of this process as alive (true) or ended (false). */
export function markLive(runId: string, live: boolean): void {
  if (live) liveRuns.add(runId);
  else liveRuns.delete(runId);
}

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the run that holds a claim still lives. On this host the pid answers at once (a
 * container restarted as pid 1 finds its own pid on a claim of the run before: that run is
 * dead); elsewhere only the heartbeat can tell.
 */
export function holderAlive(
  run: RunRecord | undefined,
  self: Self,
  now: number,
  lease: { leaseMs: number } = LEASE,
  alive: (pid: number) => boolean = pidAlive,
): boolean {
  if (run === undefined || run.finishedAt !== undefined) return false;
  if (run.id === self.runId) return true;
  const fresh = now - Date.parse(run.heartbeatAt) < lease.leaseMs;
  if (run.host !== self.host) return fresh;
  // Our own pid: alive if this process runs it now; otherwise it is a run of an earlier process
  // that had our pid (a container restarted as pid 1), and that run is dead.
  if (run.pid === self.pid) return liveRuns.has(run.id);
  return fresh && alive(run.pid);
}
