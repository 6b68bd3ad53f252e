import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, lockPathOf, type SheetLock } from '../../src/checkpoint/lock.js';
import { GuardError } from '../../src/errors.js';

let dir: string;
let sheet: string;
const held: SheetLock[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payouts-lock-'));
  sheet = join(dir, 'payroll.csv');
  await writeFile(sheet, 'reference,amount\n');
});
afterEach(async () => {
  await Promise.all(held.splice(0).map((l) => l.release()));
  await rm(dir, { recursive: true, force: true });
});

async function take(options: Parameters<typeof acquireLock>[1] = {}): Promise<SheetLock> {
  const lock = await acquireLock(sheet, options);
  held.push(lock);
  return lock;
}

/** The pid of a process that has certainly exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

async function writeLock(content: object | string, ageMs = 0): Promise<void> {
  const path = lockPathOf(sheet);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    await utimes(path, then, then);
  }
}

describe('acquireLock', () => {
  it('creates <sheet>.lock holding pid, hostname and start time', async () => {
    const lock = await take();
    expect(lock.path).toBe(`${sheet}.lock`);
    const content = JSON.parse(await readFile(lock.path, 'utf8'));
    expect(content).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(Date.parse(content.startedAt)).not.toBeNaN();
  });

  it('refuses a second run (GuardError, exit 4) naming the holder pid and start time', async () => {
    const first = await take();
    const err = (await acquireLock(sheet).catch((e: unknown) => e)) as GuardError;
    expect(err).toBeInstanceOf(GuardError);
    expect(err.exitCode).toBe(4);
    expect(err.message).toContain(`pid ${process.pid} on ${hostname()}, started ${first.holder.startedAt}`);
    expect(err.message).toContain(`remove ${sheet}.lock`);
  });

  it('is free again after release', async () => {
    const first = await take();
    await first.release();
    await expect(stat(first.path)).rejects.toMatchObject({ code: 'ENOENT' });
    await take();
  });

  it('release leaves alone a lock that is no longer ours', async () => {
    const first = await take();
    await writeLock({ pid: 1, hostname: 'other', startedAt: 'x', nonce: 'theirs' });
    await first.release();
    expect(JSON.parse(await readFile(lockPathOf(sheet), 'utf8')).nonce).toBe('theirs');
  });

  it('removes its exit handler when released', async () => {
    const before = process.listenerCount('exit');
    const lock = await take();
    expect(process.listenerCount('exit')).toBe(before + 1);
    await lock.release();
    expect(process.listenerCount('exit')).toBe(before);
  });
});

describe('stale locks', () => {
  it('takes over from a holder on this host whose process died', async () => {
    const pid = await deadPid();
    await writeLock({ pid, hostname: hostname(), startedAt: '2025-01-01T00:00:00.000Z', nonce: 'dead' });
    const lock = await take();
    const content = JSON.parse(await readFile(lock.path, 'utf8'));
    expect(content.pid).toBe(process.pid);
    expect(content.nonce).toBe(lock.holder.nonce);
  });

  it('takes over a lock naming our own pid that this process does not hold (a restarted container, pid 1 again)', async () => {
    await writeLock({
      pid: process.pid,
      hostname: hostname(),
      startedAt: '2025-01-01T00:00:00.000Z',
      nonce: 'earlier',
    });
    const lock = await take();
    expect(JSON.parse(await readFile(lock.path, 'utf8')).nonce).toBe(lock.holder.nonce);
  });

  it('refuses a holder on this host that is alive (another process)', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    try {
      await writeLock({
        pid: child.pid,
        hostname: hostname(),
        startedAt: '2025-01-01T00:00:00.000Z',
        nonce: 'alive',
      });
      await expect(acquireLock(sheet)).rejects.toThrow(`pid ${child.pid}`);
    } finally {
      child.kill();
    }
  });

  it('refuses a lock from another host refreshed recently, takes over one left unrefreshed', async () => {
    const foreign = {
      pid: 4242,
      hostname: 'cron-pod-7f9c',
      startedAt: '2025-01-01T00:00:00.000Z',
      nonce: 'f',
    };
    await writeLock(foreign, 60_000);
    await expect(acquireLock(sheet)).rejects.toThrow(/runs on another host and refreshed the lock 60 s ago/);
    await writeLock(foreign, 11 * 60_000);
    const lock = await take();
    expect(JSON.parse(await readFile(lock.path, 'utf8')).hostname).toBe(hostname());
  });

  it('a lock file without readable content is being written, unless old', async () => {
    await writeLock('');
    await expect(acquireLock(sheet)).rejects.toThrow(/being written/);
    await writeLock('', 60_000);
    await take();
  });

  it('two contenders for one stale lock: exactly one wins', async () => {
    const pid = await deadPid();
    await writeLock({ pid, hostname: hostname(), startedAt: '2025-01-01T00:00:00.000Z', nonce: 'dead' });
    const results = await Promise.allSettled([acquireLock(sheet), acquireLock(sheet), acquireLock(sheet)]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    held.push(...won.map((r) => (r as PromiseFulfilledResult<SheetLock>).value));
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(GuardError);
  });

  it('keeps its lock fresh while held (heartbeat)', async () => {
    const lock = await take({ heartbeatMs: 20 });
    const then = new Date(Date.now() - 3_600_000);
    await utimes(lock.path, then, then);
    // Poll rather than sleep a fixed time: a busy machine may delay the first beat.
    const deadline = Date.now() + 5_000;
    while (Date.now() - (await stat(lock.path)).mtimeMs > 10_000 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(Date.now() - (await stat(lock.path)).mtimeMs).toBeLessThan(10_000);
  });
});
