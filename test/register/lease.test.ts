/**
 * Whose claim is it (register/lease.ts): the process table where the holder ran in ours, its
 * lease (as the store timed it) anywhere else.
 */
import { describe, expect, it } from 'vitest';
import {
  holderAlive,
  leaseExpired,
  liveRunCount,
  markLive,
  newLease,
  newSelf,
  type Self,
} from '../../src/register/lease.js';
import type { RunRecord } from '../../src/register/types.js';

const machine = 'boot-1/pid:[4026531836]';
const self: Self = { runId: 'me', host: 'box', pid: 1, machine, processStart: '500' };

function run(fields: Partial<RunRecord>): RunRecord {
  return {
    id: 'holder',
    sheet: 's.csv',
    digest: 'd',
    host: 'box',
    pid: 1,
    startedAt: '2026-11-25T12:00:00.000Z',
    heartbeatAt: '2026-11-25T12:00:00.000Z',
    leaseExpiresAt: '2026-11-25T12:01:00.000Z',
    leaseExpired: false,
    ...fields,
  };
}

/** A process table where only these pids, started at these ticks, exist. */
const table =
  (live: Record<number, string>) =>
  (pid: number, start: string | undefined): boolean =>
    live[pid] !== undefined && (start === undefined || live[pid] === start);

describe('holderAlive', () => {
  const cases: Array<[string, RunRecord | undefined, boolean, Record<number, string>?]> = [
    ['no run recorded', undefined, false],
    ['a finished run', run({ finishedAt: '2026-11-25T12:00:30.000Z' }), false],
    ['this very run', run({ id: 'me', leaseExpired: true }), true],
    // Two containers sharing a host name, both pid 1, in separate PID namespaces: the lease decides.
    ['same host name and pid, another PID namespace, lease live', run({ machine: 'boot-1/pid:[99]' }), true],
    [
      'same host name and pid, another PID namespace, lease expired',
      run({ machine: 'boot-1/pid:[99]', leaseExpired: true }),
      false,
    ],
    ['another host, lease live', run({ host: 'elsewhere', pid: 7 }), true],
    ['another host, lease expired', run({ host: 'elsewhere', pid: 7, leaseExpired: true }), false],
    // Our own process table: a live process wins over a stale heartbeat (a clock a day ahead).
    [
      'our process table, process alive, lease expired',
      run({ machine, pid: 42, processStart: '900', leaseExpired: true }),
      true,
      { 42: '900' },
    ],
    [
      'our process table, process gone, lease live',
      run({ machine, pid: 42, processStart: '900' }),
      false,
      {},
    ],
    [
      'our process table, pid reused by another process',
      run({ machine, pid: 42, processStart: '900' }),
      false,
      { 42: '901' },
    ],
    // Our pid and start: an earlier run of this very process, alive only while marked live.
    ['an earlier run of this process, not live', run({ machine, pid: 1, processStart: '500' }), false],
    // Our pid but another start: a process before us that had our pid (a restarted container).
    ['our pid, another process start', run({ machine, pid: 1, processStart: '499' }), false, { 1: '500' }],
  ];
  it.each(cases)('%s', (_name, holder, alive, live = {}) => {
    expect(holderAlive(holder, self, table(live))).toBe(alive);
  });

  it('counts a run of this process alive while it is marked live', () => {
    const mine = run({ id: 'mine', machine, pid: 1, processStart: '500', leaseExpired: true });
    markLive('mine', true);
    expect(holderAlive(mine, self, table({}))).toBe(true);
    markLive('mine', false);
    expect(holderAlive(mine, self, table({}))).toBe(false);
  });

  it('knows this process: its kernel boot and PID namespace, and its start', () => {
    const me = newSelf();
    expect(me.pid).toBe(process.pid);
    expect(me.machine).toMatch(/^[0-9a-f-]{36}\/pid:\[\d+\]$/);
    expect(me.processStart).toMatch(/^\d+$/);
    expect(newSelf().runId).not.toBe(me.runId);
  });
});

describe('leaseExpired and liveRunCount: one rule for both stores, by the store time they read', () => {
  const end = '2026-11-25T12:01:00.000Z';
  const at = (iso: string) => Date.parse(iso);
  const boot = (id: string, uptimeMs: number) => ({ id, uptimeMs: () => uptimeMs });

  it.each([
    ['before its end by the store clock', { expiresAt: end }, { now: at('2026-11-25T12:00:59.999Z') }, false],
    ['at its end by the store clock', { expiresAt: end }, { now: at(end) }, true],
    ['a Date from PostgreSQL, past its end', { expiresAt: new Date(end) }, { now: at(end) + 1 }, true],
    // Written on the reader's boot: a wall clock set a day ahead cannot cut it short.
    [
      'on this boot, before its end by the boot clock, whatever the wall clock',
      { expiresAt: end, boot: 'b1', uptimeMs: 5000 },
      { now: at('2026-11-26T12:00:00.000Z'), boot: boot('b1', 4999) },
      false,
    ],
    [
      'on this boot, past its end by the boot clock, whatever the wall clock',
      { expiresAt: end, boot: 'b1', uptimeMs: '5000' },
      { now: at('2026-11-25T11:00:00.000Z'), boot: boot('b1', 5000) },
      true,
    ],
    [
      'written on another boot: the wall clock decides',
      { expiresAt: end, boot: 'b0', uptimeMs: 999_999 },
      { now: at(end), boot: boot('b1', 1) },
      true,
    ],
  ] as const)('a lease %s', (_, lease, time, expired) => {
    expect(leaseExpired(lease, time)).toBe(expired);
  });

  it('counts the live leases, and at least the asking run', () => {
    const time = { now: at('2026-11-25T12:00:30.000Z') };
    const live = { expiresAt: end };
    const dead = { expiresAt: '2026-11-25T12:00:00.000Z' };
    expect(liveRunCount([live, dead, live], time)).toBe(2);
    expect(liveRunCount([dead], time)).toBe(1);
  });

  it('gives a new lease its end by both clocks', () => {
    expect(newLease({ now: at('2026-11-25T12:00:00.000Z'), boot: boot('b1', 1000) }, 60_000)).toEqual({
      expiresAt: end,
      boot: 'b1',
      uptimeMs: 61_000,
    });
    expect(newLease({ now: at('2026-11-25T12:00:00.000Z') }, 60_000)).toEqual({
      expiresAt: end,
      boot: null,
      uptimeMs: null,
    });
  });
});
