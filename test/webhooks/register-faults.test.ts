/**
 * `payouts webhooks listen` over a PostgreSQL register that stalls, or an SQLite register another
 * process has locked (docs/register.md "When the register fails"): an event it cannot record in time is answered 503 (the service delivers it
 * again), and a stop ends the receiver within 10 s whatever the register does; once the
 * register answers again, events are recorded again.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'libsql';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { webhooksListenCommand } from '../../src/cli/webhooks.js';
import { RECEIVER_DEFAULTS, type WebhookReceiver } from '../../src/webhooks/receiver.js';
import { type ManualClock, manualClock } from '../helpers/manual-clock.js';
import { asAdmin, testRegisterDatabase } from '../helpers/postgres.js';
import { initTestRegister } from '../helpers/register.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { jsonLines, type Posted, payload, post, SECRET } from './helpers.js';

function io(): { io: CliIo; stderr: () => string } {
  const stdout = new PassThrough();
  const stderr = Object.assign(new PassThrough(), { isTTY: false });
  let text = '';
  stderr.on('data', (d: Buffer) => {
    text += d.toString('utf8');
  });
  stdout.resume();
  return { io: { stdout, stderr, env: {}, cwd: process.cwd() }, stderr: () => text };
}

describe('payouts webhooks listen with a register that stalls', () => {
  it('answers 503 while the register stalls, records again after, and stops within 10 s', {
    timeout: 60_000,
  }, async () => {
    const database = await testRegisterDatabase();
    const target = new URL(database);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
    // The receiver's deadlines run on a clock the test moves: its time passes only when said.
    const clock = manualClock();
    const listener = await listen(proxy.through(database), undefined, clock);
    const { receiver } = listener;
    const first = JSON.stringify(payload({ resourceId: 'tx-1' }));
    expect((await post(receiver.url, first)).status).toBe(200);

    proxy.set('stall');
    const stalled = JSON.stringify(
      payload({ resourceId: 'tx-2', data: { transactionId: 'tx-2', status: 'COMPLETED' } }),
    );
    expect((await answeredAtDeadline(clock, receiver, post(receiver.url, stalled))).status).toBe(503);

    proxy.set('pass');
    // Delivered again, as the service would: recorded once the register answers.
    await expect
      .poll(async () => (await post(receiver.url, stalled)).status, { timeout: 20_000, interval: 500 })
      .toBe(200);
    const recorded = await asAdmin(database, 'SELECT resource_id FROM payouts.events ORDER BY resource_id');
    expect(recorded.rows.map((r) => r.resource_id)).toEqual(['tx-1', 'tx-2']);

    proxy.set('stall');
    const third = JSON.stringify(
      payload({ resourceId: 'tx-3', data: { transactionId: 'tx-3', status: 'COMPLETED' } }),
    );
    expect((await answeredAtDeadline(clock, receiver, post(receiver.url, third))).status).toBe(503);
    const stoppedAt = Date.now();
    expect(await listener.stop()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(listener.stderr()).not.toMatch(/PG_\w{5}/);
  });
});

/**
 * The answer to a delivery the register does not record: none a millisecond before the record
 * deadline (the receiver has counted nothing unrecorded), then 503 at it.
 */
async function answeredAtDeadline(
  clock: ManualClock,
  receiver: WebhookReceiver,
  delivery: Promise<Posted>,
): Promise<Posted> {
  await clock.whenWaiting(RECEIVER_DEFAULTS.recordDeadlineMs);
  const unrecorded = receiver.stats.unrecorded;
  clock.advance(RECEIVER_DEFAULTS.recordDeadlineMs - 1);
  await new Promise((resolve) => setImmediate(resolve));
  expect(receiver.stats.unrecorded).toBe(unrecorded);
  clock.advance(1);
  return delivery;
}

/** Another process holding the SQLite register's write lock until told to let go. */
async function holdWriteLock(file: string): Promise<{ release: () => Promise<void> }> {
  const script = `
    const Database = require('libsql');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script, file], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder ended with ${code}`)));
  });
  return {
    release: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.write('go\n');
      }),
  };
}

/** `webhooks listen` in this process on `register`, stopped by the returned function. */
async function listen(register: string, eventsFile: string | undefined, clock?: ManualClock) {
  const out = io();
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let started!: (r: WebhookReceiver) => void;
  const listening = new Promise<WebhookReceiver>((resolve) => {
    started = resolve;
  });
  const done = webhooksListenCommand(
    {
      host: '127.0.0.1',
      port: 0,
      path: '/webhooks',
      eventsFile,
      register,
      secrets: [SECRET],
      stopSignal,
      onListening: started,
      clock,
    },
    out.io,
  );
  const receiver = await listening;
  return {
    receiver,
    stderr: out.stderr,
    stop: () => {
      stop();
      return done;
    },
  };
}

describe('payouts webhooks listen with an SQLite register another process has locked', () => {
  it.each([
    ['without --events', false],
    ['with --events', true],
  ])(
    '%s: refuses bad signatures at once, says not ready, answers 503, and records the redelivery once after a restart',
    {
      timeout: 60_000,
    },
    async (_, withEvents) => {
      const dir = await mkdtemp(path.join(tmpdir(), 'payouts-locked-'));
      onTestFinished(() => rm(dir, { recursive: true, force: true }));
      const register = initTestRegister(path.join(dir, 'register.db'));
      const eventsFile = withEvents ? path.join(dir, 'events.jsonl') : undefined;
      // The receiver's deadlines run on a clock the test moves: its time passes only when said.
      const clock = manualClock();
      const first = await listen(register, eventsFile, clock);
      const one = JSON.stringify(payload({ resourceId: 'tx-1' }));
      expect((await post(first.receiver.url, one)).status).toBe(200);

      const lock = await holdWriteLock(register);
      const two = JSON.stringify(
        payload({ resourceId: 'tx-2', data: { transactionId: 'tx-2', status: 'COMPLETED' } }),
      );
      // A good event waits for the register; meanwhile a bad signature is answered at once.
      const waiting = post(first.receiver.url, two);
      await clock.whenWaiting(RECEIVER_DEFAULTS.recordDeadlineMs);
      expect((await post(first.receiver.url, two, { signature: 'bad' })).status).toBe(401);
      // The probe waits for the register 2 s, then says not ready; the event waits its 3 s.
      const health = fetch(new URL('/healthz', first.receiver.url));
      await clock.whenWaiting(2_000);
      clock.advance(2_000);
      expect((await health).status).toBe(503);
      expect(first.receiver.stats.unrecorded).toBe(0);
      clock.advance(RECEIVER_DEFAULTS.recordDeadlineMs - 2_000);
      expect((await waiting).status).toBe(503);
      expect(await first.stop()).toBe(0);
      await lock.release();

      // The service delivers it again, to the receiver started anew: recorded, once.
      const second = await listen(register, eventsFile);
      expect(await post(second.receiver.url, two)).toEqual({ status: 200, body: { status: 'received' } });
      expect(await post(second.receiver.url, two)).toEqual({ status: 200, body: { status: 'duplicate' } });
      expect((await fetch(new URL('/healthz', second.receiver.url))).status).toBe(200);
      expect(await second.stop()).toBe(0);
      const db = new Database(register, { readonly: true });
      const recorded = db.prepare('SELECT resource_id FROM events ORDER BY resource_id').all() as {
        resource_id: string;
      }[];
      db.close();
      expect(recorded.map((r) => r.resource_id)).toEqual(['tx-1', 'tx-2']);
      if (eventsFile !== undefined) {
        const ids = (await jsonLines(eventsFile)).map(
          (l) => (l['event'] as { resourceId: string }).resourceId,
        );
        expect(ids).toEqual(['tx-1', 'tx-2']);
      }
    },
  );
});
