/**
 * Whose claim is it. A run holds a lease in the register, renewed by its heartbeat and timed by
 * the store (PostgreSQL's `now()`; for an SQLite file, the kernel's time since boot where the
 * writer ran on the same boot, so a process under another wall clock cannot shorten it). A claim
 * whose run finished, or whose lease expired, is abandoned, whatever its pid or host.
 *
 * On this host a run's own OS lock answers first (live-lock.ts): held, it lives; free, its
 * process died. Where there is no lock to ask but the holder ran in this very process table
 * (same kernel boot, same PID namespace), the process table answers: a live process wins over a stale heartbeat, and a dead one frees
 * its claims at once. Pid and host name alone prove nothing: two containers that share a host
 * name both run as pid 1.
 */

import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { isoAt, timeOf } from '../clock.js';
import { localLiveness } from './live-lock.js';
import type { RunRecord, Self } from './types.js';

export type { Self } from './types.js';

/** Defaults in one object: how often a run proves it lives, and how long silence is tolerated. */
export const LEASE = {
  heartbeatMs: 10_000,
  /** Six missed heartbeats: a run this silent is dead or hung past saving. */
  leaseMs: 60_000,
} as const;

/** The runs this process holds now: in our own process, a run is alive exactly when it is listed here. */
const liveRuns = new Set<string>();

/** Reads /proc when there is one; undefined elsewhere. */
function procText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The kernel's boot id (a new one at every boot), where /proc has it. */
export function bootId(): string | undefined {
  return procText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
}

/** Milliseconds since boot as /proc/uptime tells it: kernel time that libc wall-clock tricks do not move. */
export function uptimeMs(): number | undefined {
  const text = procText('/proc/uptime');
  if (text === undefined) return undefined;
  const seconds = Number.parseFloat(text);
  return Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
}

function machineOf(): string | undefined {
  const boot = bootId();
  if (boot === undefined) return undefined;
  try {
    return `${boot}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat: the process's start time in ticks since boot. */
export function processStartOf(pid: number | 'self'): string | undefined {
  const stat = procText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

let machine: { machine?: string; processStart?: string } | undefined;

/** A new run id for this process. */
export function newSelf(): Self {
  machine ??= { machine: machineOf(), processStart: processStartOf('self') };
  return {
    runId: randomUUID(),
    host: hostname(),
    pid: process.pid,
    ...(machine.machine ? { machine: machine.machine } : {}),
    ...(machine.processStart ? { processStart: machine.processStart } : {}),
  };
}

/** Marks a run of this process as alive (true) or ended (false). */
export function markLive(runId: string, live: boolean): void {
  if (live) liveRuns.add(runId);
  else liveRuns.delete(runId);
}

/** Whether the process `pid` of our process table is the one that started at `start` (when known). */
export type ProcessProbe = (pid: number, start: string | undefined) => boolean;

/** The process table of this machine: /proc where there is one, else a signal 0. */
export const localProbe: ProcessProbe = (pid, start) => {
  const now = processStartOf(pid);
  if (now !== undefined) return start === undefined || now === start;
  if (procText('/proc/self/stat') !== undefined) return false;
  return pidAlive(pid);
};

/** Whether a process with this pid exists (EPERM: it exists, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A run's lease as a store keeps it: its end by the store's clock (PostgreSQL's `now()`; a
 * file's wall clock) and, on a file, by the kernel's time since boot of the run that wrote it.
 */
export interface StoredLease {
  expiresAt: string | Date;
  boot?: string | null;
  uptimeMs?: number | string | null;
}

/**
 * The store's time when it read a lease: its clock (PostgreSQL's `now()` in the statement that
 * read it; a file's wall clock) and, on a file, the kernel's time since boot of the reader.
 */
export interface StoreTime {
  now: number;
  boot?: BootClock | undefined;
}

/** The kernel's time since boot, where there is one: what a file's leases are timed by. */
export interface BootClock {
  id: string;
  uptimeMs(): number;
}

/** This machine's boot clock, where /proc has one. */
export function systemBootClock(): BootClock | undefined {
  const id = bootId();
  if (id === undefined || uptimeMs() === undefined) return undefined;
  return { id, uptimeMs: () => uptimeMs()! };
}

/**
 * Whether a lease had run out at `time`: by the boot clock where the lease was written on the
 * reader's boot (no wall clock, faked or not, moves it), else by the store's clock. The one
 * rule both stores apply, whichever clock they read.
 */
export function leaseExpired(lease: StoredLease, time: StoreTime): boolean {
  const { boot } = time;
  if (boot !== undefined && lease.boot === boot.id && lease.uptimeMs != null)
    return boot.uptimeMs() >= Number(lease.uptimeMs);
  return time.now >= timeOf(lease.expiresAt);
}

/**
 * How many of a scope's unfinished runs hold a live lease at `time`: at least the asking run. A
 * run known dead on this host (its lock free: live-lock.ts) counts no more, lease or not, so a
 * run started after a crash gets its share of --rate at once.
 */
export function liveRunCount(
  leases: readonly (StoredLease & { id?: string })[],
  time: StoreTime,
  liveness: (runId: string) => 'alive' | 'dead' | undefined = localLiveness,
): number {
  return Math.max(
    1,
    leases.filter(
      (lease) => !leaseExpired(lease, time) && (lease.id === undefined || liveness(lease.id) !== 'dead'),
    ).length,
  );
}

/**
 * A new lease from `time`, lasting `leaseMs`: its end by the store's clock, and by the boot
 * clock where there is one. (PostgreSQL sets its own, from `now()`, in the statement.)
 */
export function newLease(time: StoreTime, leaseMs: number): Required<StoredLease> {
  return {
    expiresAt: isoAt(time.now + leaseMs),
    boot: time.boot?.id ?? null,
    uptimeMs: time.boot === undefined ? null : time.boot.uptimeMs() + leaseMs,
  };
}

/**
 * Whether the run that holds a claim still lives: its own process table answers where it ran in
 * ours; anywhere else only its lease, as the store timed it, counts.
 */
export function holderAlive(
  run: RunRecord | undefined,
  self: Self,
  probe: ProcessProbe = localProbe,
): boolean {
  if (run === undefined || run.finishedAt !== undefined) return false;
  if (run.id === self.runId) return true;
  // On this host, the run's own lock answers first, whatever the clocks say (live-lock.ts).
  const local = localLiveness(run.id);
  if (local !== undefined) return local === 'alive';
  if (self.machine !== undefined && run.machine === self.machine) {
    if (run.pid === self.pid && run.processStart === self.processStart) return liveRuns.has(run.id);
    return probe(run.pid, run.processStart);
  }
  return !run.leaseExpired;
}
