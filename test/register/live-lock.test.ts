/** A run's liveness on this host by an OS lock only the kernel releases (live-lock.ts). */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { liveRunCount } from '../../src/register/lease.js';
import { LiveLock, localLiveness } from '../../src/register/live-lock.js';

async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-live-test-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const LIBSQL = path.resolve(import.meta.dirname, '../../node_modules/libsql');

/** Another process holding the lock of `runId` the way LiveLock does; resolves once it holds it. */
async function holderProcess(dir: string, runId: string) {
  const script = `const D = require(${JSON.stringify(LIBSQL)}); const db = new D(${JSON.stringify(
    path.join(dir, `${runId}.lock`),
  )}); db.exec('BEGIN EXCLUSIVE'); console.log('held'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

describe('live locks', () => {
  it('says alive while another process holds the lock, dead at once after SIGKILL', async () => {
    const dir = await folder();
    const child = await holderProcess(dir, 'run-a');
    expect(localLiveness('run-a', dir)).toBe('alive');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(localLiveness('run-a', dir)).toBe('dead');
  });

  it('knows nothing of a run without a lock file here (another host, or a clean end)', async () => {
    const dir = await folder();
    expect(localLiveness('elsewhere', dir)).toBeUndefined();
    const lock = LiveLock.acquire('ended', dir)!;
    expect(localLiveness('ended', dir)).toBe('alive');
    lock.release();
    expect(localLiveness('ended', dir)).toBeUndefined();
  });

  it('counts a run known dead on this host out of the --rate share, lease or not', () => {
    const lease = { expiresAt: new Date(Date.now() + 60_000).toISOString() };
    const leases = [
      { ...lease, id: 'me' },
      { ...lease, id: 'dead-1' },
      { ...lease, id: 'dead-2' },
      { ...lease, id: 'alive' },
      { ...lease, id: 'elsewhere' },
    ];
    const said = { me: 'alive', 'dead-1': 'dead', 'dead-2': 'dead', alive: 'alive' } as const;
    const count = liveRunCount(leases, { now: Date.now() }, (id) => said[id as keyof typeof said]);
    expect(count).toBe(3);
  });
});
