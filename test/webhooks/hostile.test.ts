/**
 * The compiled `payouts webhooks listen` under hostile clients (docs/webhooks.md "Limits"): many
 * connections announcing bodies far over the limit and sending them slowly, while the service
 * delivers real events. The real events are answered 200 and recorded once; the hostile bodies
 * are refused with 413 without being read whole; the receiver's peak memory stays small.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnCli } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { jsonLines, payload, SECRET, sign, tempDir } from './helpers.js';

const MB = 1024 * 1024;
const HOSTILE = 300;
const ANNOUNCED = 1_000_000;
/** What each hostile client tries to send of its announced body, over about three seconds. */
const SENT = ANNOUNCED - 1;
const CHUNK = 32 * 1024;
const EVERY_MS = 100;
const EVENTS = 40;

/** A value of /proc/PID/status in bytes (VmHWM: the peak resident set). */
function procStatus(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)\s*kB/.exec(line ?? '')?.[1]) * 1024;
}

/** Bytes the process has read through read(2) and its kin: sockets included. */
function bytesRead(pid: number): number {
  return Number(/rchar:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

/** `webhooks listen` as a child on a free port with a SQLite register in `dir`. */
async function listen(dir: string) {
  const secretFile = path.join(dir, 'webhook.secret');
  await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
  const register = initTestRegister(path.join(dir, 'register.db'));
  const events = path.join(dir, 'events.jsonl');
  const child = spawnCli(
    [
      'webhooks',
      'listen',
      '--port',
      '0',
      '--register',
      register,
      '--secret-file',
      secretFile,
      '--events',
      events,
    ],
    {},
  );
  expect(await child.whenLines('webhook receiver listening', 1)).toBe(true);
  const line = child
    .stderr()
    .split('\n')
    .find((l) => l.includes('webhook receiver listening'))!;
  const url = new URL((JSON.parse(line) as { url: string }).url);
  return { child, url, register, events, pid: child.child.pid! };
}

interface Hostile {
  /** The status line the receiver answered with, if any. */
  status: () => number | undefined;
  /** Bytes of the body handed to the socket before it was answered or closed. */
  sentBeforeAnswer: () => number;
  /** Resolves when the connection is closed, by either side. */
  closed: Promise<void>;
}

/**
 * A client announcing a 1,000,000-byte body and sending it slowly, a chunk every 100 ms; or
 * (`chunked`) sending one of that size without announcing its length, so that only its growth
 * tells.
 */
function hostile(url: URL, { chunked = false } = {}): Hostile {
  const socket: Socket = connect(Number(url.port), url.hostname);
  onTestFinished(() => {
    socket.destroy();
  });
  let sent = 0;
  let sentBeforeAnswer: number | undefined;
  let status: number | undefined;
  let response = '';
  let timer: NodeJS.Timeout | undefined;
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    sentBeforeAnswer ??= sent;
    response += chunk.toString('latin1');
    status ??= Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]) || undefined;
  });
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      sentBeforeAnswer ??= sent;
      resolve();
    }),
  );
  socket.on('connect', () => {
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `X-Service-Webhook-Signature: ${sign('not the body')}\r\n` +
        (chunked ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${ANNOUNCED}\r\n\r\n`),
    );
    const chunk = Buffer.alloc(CHUNK, 0x7b);
    timer = setInterval(() => {
      if (socket.destroyed || sent >= SENT) {
        clearInterval(timer);
        return;
      }
      const piece = chunk.subarray(0, Math.min(CHUNK, SENT - sent));
      sent += piece.length;
      if (chunked) socket.write(`${piece.length.toString(16)}\r\n`);
      socket.write(piece);
      if (chunked) socket.write('\r\n');
    }, EVERY_MS);
  });
  return { status: () => status, sentBeforeAnswer: () => sentBeforeAnswer ?? sent, closed };
}

/** POSTs a signed event; the answer's status. */
async function deliver(url: URL, body: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-webhook-signature': sign(body) },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

describe('webhooks listen under hostile clients', () => {
  it('answers real events 200 and records them once while 300 clients send oversized bodies slowly; SIGTERM exits within 10 s', async () => {
    const dir = await tempDir();
    const receiver = await listen(dir);
    const readBefore = bytesRead(receiver.pid);

    const attackers = Array.from({ length: HOSTILE }, () => hostile(receiver.url));
    const bodies = Array.from({ length: EVENTS }, (_, i) =>
      JSON.stringify(
        payload({ resourceId: `tx-${i}`, data: { transactionId: `tx-${i}`, status: 'COMPLETED' } }),
      ),
    );
    // The real deliveries, spread over the attack, each delivered twice (a redelivery).
    const statuses: number[] = [];
    for (const [i, body] of bodies.entries()) {
      statuses.push(await deliver(receiver.url, body));
      if (i % 4 === 0) statuses.push(await deliver(receiver.url, body));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(attackers.map((a) => a.closed));

    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = attackers.filter((a) => a.status() === 413).length;
    const closedUnanswered = attackers.filter((a) => a.status() === undefined).length;
    expect(refused + closedUnanswered).toBe(HOSTILE);
    expect(refused).toBeGreaterThan(0);
    // Answered (or closed) long before the body was sent, and never read whole: the receiver
    // read a small part of the 300 MB the clients tried to send.
    for (const a of attackers) expect(a.sentBeforeAnswer()).toBeLessThan(SENT);
    const read = bytesRead(receiver.pid) - readBefore;
    expect(read).toBeLessThan((HOSTILE * SENT) / 10);
    const peak = procStatus(receiver.pid, 'VmHWM');
    expect(peak).toBeLessThan(200 * MB);

    const started = Date.now();
    receiver.child.child.kill('SIGTERM');
    const exit = await receiver.child.exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(exit.code).toBe(0);

    const exported = await jsonLines(receiver.events);
    expect(exported).toHaveLength(EVENTS);
    const db = new Database(receiver.register, { readonly: true });
    const rows = db.prepare('SELECT resource_id FROM events ORDER BY resource_id').all() as Array<{
      resource_id: string;
    }>;
    db.close();
    expect(rows.map((r) => r.resource_id).sort()).toEqual(bodies.map((_, i) => `tx-${i}`).sort());
    console.log(
      `hostile (announced): ${refused} answered 413, ${closedUnanswered} closed unanswered, receiver read ${(read / MB).toFixed(1)} MB, peak RSS ${(peak / MB).toFixed(0)} MB, SIGTERM exit in ${Date.now() - started} ms`,
    );
  });

  it('refuses bodies that grow past the limit without a Content-Length, and stops reading them', async () => {
    const dir = await tempDir();
    const receiver = await listen(dir);
    const readBefore = bytesRead(receiver.pid);
    const attackers = Array.from({ length: 50 }, () => hostile(receiver.url, { chunked: true }));
    const body = JSON.stringify(payload());
    expect(await deliver(receiver.url, body)).toBe(200);
    await Promise.all(attackers.map((a) => a.closed));

    expect(attackers.map((a) => a.status())).toEqual(attackers.map(() => 413));
    // Past 64 KiB the receiver answers and stops reading: a few chunks each, never the megabyte.
    for (const a of attackers) expect(a.sentBeforeAnswer()).toBeLessThan(SENT / 4);
    const read = bytesRead(receiver.pid) - readBefore;
    expect(read).toBeLessThan((50 * SENT) / 4);
    console.log(
      `hostile (chunked): receiver read ${(read / MB).toFixed(1)} MB of the ${((50 * SENT) / MB).toFixed(0)} MB sent`,
    );
    receiver.child.child.kill('SIGTERM');
    expect((await receiver.child.exited).code).toBe(0);
  });

  it('lets real deliveries in while 300 clients hold every body place dripping a byte at a time', async () => {
    const dir = await tempDir();
    const receiver = await listen(dir);
    // Each announces a small body and sends a byte of it every 500 ms: over 256 of them would
    // keep every real delivery at 503 until the 30 s request deadline, and again after.
    const drippers = Array.from({ length: HOSTILE }, () => {
      const socket = connect(Number(receiver.url.port), receiver.url.hostname);
      onTestFinished(() => {
        socket.destroy();
      });
      socket.on('error', () => {});
      socket.write(
        `POST ${receiver.url.pathname} HTTP/1.1\r\nHost: ${receiver.url.host}\r\nContent-Length: 1000\r\n\r\n`,
      );
      return socket;
    });
    const drip = setInterval(() => {
      for (const socket of drippers) if (!socket.destroyed) socket.write('{');
    }, 500);
    onTestFinished(() => clearInterval(drip));
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const body = JSON.stringify(payload({ resourceId: `tx-drip-${i}` }));
      statuses.push(await deliver(receiver.url, body));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // The places went to the real deliveries by cutting the drippers that held them longest.
    expect(drippers.filter((s) => s.destroyed).length).toBeGreaterThanOrEqual(5);
    clearInterval(drip);
    receiver.child.child.kill('SIGTERM');
    expect((await receiver.child.exited).code).toBe(0);
    expect(
      (await jsonLines(receiver.events)).map((e) => (e['event'] as { resourceId: string }).resourceId),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `tx-drip-${i}`));
  });
});
