import { stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import type { EventRecord } from '../../src/webhooks/events-file.js';
import { RECEIVER_DEFAULTS, type ReceiverNotice } from '../../src/webhooks/receiver.js';
import { manualClock } from '../helpers/manual-clock.js';
import { call, quoteFor, sandbox, token } from '../sandbox/helpers.js';
import { jsonLines, payload, post, receiver, SECRET, sign, tempDir } from './helpers.js';

describe('webhook receiver: signature', () => {
  it('answers 401 to a missing or wrong signature and neither records nor processes the event', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const events: EventRecord[] = [];
    const notices: ReceiverNotice[] = [];
    const r = await receiver({
      eventsFile,
      onEvent: (e) => void events.push(e),
      onNotice: (n) => void notices.push(n),
    });
    const body = JSON.stringify(payload());

    expect(await post(r.url, body, { signature: null })).toEqual({
      status: 401,
      body: { error: 'missing X-Service-Webhook-Signature header' },
    });
    expect((await post(r.url, body, { signature: sign(body, 'not-the-secret') })).status).toBe(401);
    expect((await post(r.url, body, { signature: 'garbage' })).status).toBe(401);
    // The right signature of another body: the body was changed on the way.
    expect((await post(r.url, body.replace('tx-1', 'tx-2'), { signature: sign(body) })).status).toBe(401);

    await r.idle();
    expect(events).toEqual([]);
    expect(await jsonLines(eventsFile)).toEqual([]);
    expect(r.stats).toMatchObject({ accepted: 0, rejected: 4 });
    // Refusals are said as one summary per interval, counted, never one line per request.
    expect(notices).toEqual([]);
    await r.close();
    expect(notices).toEqual([
      {
        kind: 'refused',
        seconds: expect.any(Number),
        counts: { '401 missing X-Service-Webhook-Signature header': 1, '401 signature does not match': 3 },
      },
    ]);
    expect(JSON.stringify(notices)).not.toContain(SECRET);
  });

  it('answers 200 to a good signature, records the event (file mode 0600) and hands it to onEvent', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const events: EventRecord[] = [];
    const r = await receiver({ eventsFile, onEvent: (e) => void events.push(e) });
    const event = payload({ data: { transactionId: 'tx-1', status: 'COMPLETED', extra: [1, 2] } });
    // Whitespace the service may put in its JSON: the signature covers the bytes as sent.
    const body = `${JSON.stringify(event, null, 1)}\n`;

    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'received' } });
    await r.idle();

    expect(events).toEqual([{ receivedAt: expect.any(String), event }]);
    const lines = await jsonLines(eventsFile);
    expect(lines).toEqual([{ receivedAt: events[0]!.receivedAt, event }]);
    expect(new Date(lines[0]!['receivedAt'] as string).toISOString()).toBe(lines[0]!['receivedAt']);
    if (process.platform !== 'win32') expect((await stat(eventsFile)).mode & 0o777).toBe(0o600);
  });

  it('accepts the previous secret too while a rotation is under way', async () => {
    const r = await receiver({ secrets: ['new-secret-value', SECRET] });
    const a = JSON.stringify(payload({ resourceId: 'a' }));
    const b = JSON.stringify(payload({ resourceId: 'b' }));
    expect((await post(r.url, a, { signature: sign(a, 'new-secret-value') })).status).toBe(200);
    expect((await post(r.url, b, { signature: sign(b, SECRET) })).status).toBe(200);
    expect(r.stats.accepted).toBe(2);
  });

  it('refuses to start without a secret, or with an events file it cannot open', async () => {
    await expect(receiver({ secrets: [] })).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(receiver({ secrets: '' })).rejects.toMatchObject({ code: 'CONFIG' });
    const dir = await tempDir();
    // A storage problem (exit 2 here: a receiver sends no money), never a bug.
    const events = path.join(dir, 'missing', 'events.jsonl');
    await expect(receiver({ eventsFile: events })).rejects.toMatchObject({
      code: 'STORAGE',
      exitCode: 2,
      message: `cannot write the events file ${events} (fix the file or its folder, or give another --events PATH): no such file or directory (ENOENT)`,
    });
  });
});

describe('webhook receiver: requests it refuses', () => {
  it('answers 400 to a signed body that is not a webhook payload', async () => {
    const events: EventRecord[] = [];
    const r = await receiver({ onEvent: (e) => void events.push(e) });
    const notJson = '{"operation":';
    expect(await post(r.url, notJson)).toEqual({ status: 400, body: { error: 'the body is not JSON' } });
    const { resourceId: _omitted, ...withoutId } = payload();
    const answer = await post(r.url, JSON.stringify(withoutId));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: expect.stringMatching(/^not a webhook payload \(.*resourceId/) });
    expect((await post(r.url, JSON.stringify({ ...payload(), success: 'yes' }))).status).toBe(400);
    expect((await post(r.url, '[]')).status).toBe(400);
    await r.idle();
    expect(events).toEqual([]);
  });

  it('reads a payload without message or data as null and {}', async () => {
    const events: EventRecord[] = [];
    const r = await receiver({ onEvent: (e) => void events.push(e) });
    const { message: _m, data: _d, ...bare } = payload();
    expect((await post(r.url, JSON.stringify(bare))).status).toBe(200);
    await r.idle();
    expect(events[0]?.event).toMatchObject({ message: null, data: {} });
  });

  it('answers 404 off its path, 405 to other methods, 413 over the size limit', async () => {
    const r = await receiver({ path: '/hooks/in', maxBodyBytes: 1000 });
    const body = JSON.stringify(payload());
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/in$/);
    expect((await post(r.url.replace('/hooks/in', '/other'), body)).status).toBe(404);
    expect((await post(r.url, body, { method: 'GET' })).status).toBe(405);
    expect((await post(r.url, body, { method: 'PUT' })).status).toBe(405);
    const big = JSON.stringify(payload({ data: { padding: 'x'.repeat(2000) } }));
    expect((await post(r.url, big)).status).toBe(413);
    expect((await post(`${r.url}?from=service`, body)).status).toBe(200);
    expect(r.stats).toMatchObject({ accepted: 1, rejected: 4 });
  });
});

describe('webhook receiver: answer first, process afterwards', () => {
  it('answers 200 while onEvent is still busy, and processes events one at a time in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const order: string[] = [];
    const r = await receiver({
      onEvent: async (e) => {
        order.push(`start ${e.event.resourceId}`);
        if (e.event.resourceId === 'first') await gate;
        order.push(`end ${e.event.resourceId}`);
      },
    });
    const first = JSON.stringify(payload({ resourceId: 'first' }));
    const second = JSON.stringify(payload({ resourceId: 'second' }));
    expect((await post(r.url, first)).status).toBe(200);
    expect((await post(r.url, second)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(['start first']);
    release();
    await r.idle();
    expect(order).toEqual(['start first', 'end first', 'start second', 'end second']);
  });

  it('keeps answering when onEvent throws, and reports it', async () => {
    const notices: ReceiverNotice[] = [];
    const r = await receiver({
      onEvent: () => {
        throw new Error('handler broke');
      },
      onNotice: (n) => void notices.push(n),
    });
    const body = JSON.stringify(payload());
    expect((await post(r.url, body)).status).toBe(200);
    await r.idle();
    expect(notices).toEqual([
      expect.objectContaining({ kind: 'failed', reason: 'processing TRANSACTION_COMPLETED tx-1 failed' }),
    ]);
  });
});

describe('webhook receiver: duplicates by resourceId and operation', () => {
  it('answers 200 to a second delivery of resourceId + operation but records and processes it once', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const events: EventRecord[] = [];
    const r = await receiver({ eventsFile, onEvent: (e) => void events.push(e) });
    const body = JSON.stringify(payload());
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'received' } });
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'duplicate' } });
    // Same pair, another body (a later createdAt): still the same event.
    const again = JSON.stringify(payload({ createdAt: '2026-01-02T03:04:06.000' }));
    expect(await post(r.url, again)).toEqual({ status: 200, body: { status: 'duplicate' } });
    // Same resource, another operation: a new event.
    const other = JSON.stringify(payload({ operation: 'TRANSACTION_CREATED' }));
    expect(await post(r.url, other)).toEqual({ status: 200, body: { status: 'received' } });
    await r.idle();
    expect(events.map((e) => e.event.operation)).toEqual(['TRANSACTION_COMPLETED', 'TRANSACTION_CREATED']);
    expect(await jsonLines(eventsFile)).toHaveLength(2);
    expect(r.stats).toMatchObject({ accepted: 2, duplicates: 2 });
  });

  it('records one of two copies that arrive at the same time', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const r = await receiver({ eventsFile });
    const body = JSON.stringify(payload());
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(r.url, body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => (a.body as { status: string }).status === 'received')).toHaveLength(1);
    expect(await jsonLines(eventsFile)).toHaveLength(1);
  });

  it('after a restart, the register says what is a duplicate: the events file is not read back', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    // A register in memory: an event is new once, whatever process records it.
    const held = new Set<string>();
    const persist = async (e: EventRecord) => {
      const key = `${e.event.resourceId} ${e.event.operation}`;
      if (held.has(key)) return false;
      held.add(key);
      return true;
    };
    const body = JSON.stringify(payload());
    const first = await receiver({ eventsFile, persist });
    expect((await post(first.url, body)).status).toBe(200);
    await first.close();

    const events: EventRecord[] = [];
    const second = await receiver({ eventsFile, persist, onEvent: (e) => void events.push(e) });
    expect(await post(second.url, body)).toEqual({ status: 200, body: { status: 'duplicate' } });
    const next = JSON.stringify(payload({ resourceId: 'tx-2' }));
    expect(await post(second.url, next)).toEqual({ status: 200, body: { status: 'received' } });
    await second.idle();
    expect(events.map((e) => e.event.resourceId)).toEqual(['tx-2']);
    expect(second.stats).toMatchObject({ accepted: 1, duplicates: 1 });
    // The export holds each event once: a duplicate is not written again.
    expect(
      (await jsonLines(eventsFile)).map((l) => (l['event'] as { resourceId: string }).resourceId),
    ).toEqual(['tx-1', 'tx-2']);
  });

  it('appends on a fresh line after a line cut short by a crash', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const kept = { receivedAt: '2026-01-02T03:04:05.000Z', event: payload({ resourceId: 'kept' }) };
    await writeFile(eventsFile, `${JSON.stringify(kept)}\n{"receivedAt":"2026-01-02T03:04:06.000Z","ev`);
    const r = await receiver({ eventsFile });
    const body = JSON.stringify(payload({ resourceId: 'new' }));
    expect((await post(r.url, body)).status).toBe(200);
    await r.close();
    const { readEvents } = await import('../../src/webhooks/events-file.js');
    const read: string[] = [];
    const bad: number[] = [];
    for await (const e of readEvents(eventsFile, { onBadLine: (line) => void bad.push(line) }))
      read.push(e.event.resourceId);
    expect(read).toEqual(['kept', 'new']);
    expect(bad).toEqual([2]);
  });
});

describe('webhook receiver: the register decides, in time', () => {
  it('answers 503 with Retry-After when the register does not record in time, and 401 meanwhile', async () => {
    let stalled = true;
    const held = new Set<string>();
    const notices: ReceiverNotice[] = [];
    const clock = manualClock();
    const r = await receiver({
      clock,
      onNotice: (n) => void notices.push(n),
      persist: async (e) => {
        // A stalled register: this write never answers.
        if (stalled) return new Promise<boolean>(() => {});
        const known = held.has(e.event.resourceId);
        held.add(e.event.resourceId);
        return !known;
      },
    });
    const body = JSON.stringify(payload());
    const waiting = post(r.url, body);
    // The record deadline is set: the event waits for the register.
    await clock.whenWaiting(RECEIVER_DEFAULTS.recordDeadlineMs);
    clock.advance(RECEIVER_DEFAULTS.recordDeadlineMs - 1);
    // A bad signature is answered while the good event waits for the register, a moment before its deadline.
    const bad = await post(r.url, body, { signature: sign(body, 'not-the-secret') });
    expect(bad.status).toBe(401);
    expect(r.stats).toMatchObject({ unrecorded: 0, rejected: 1 });
    clock.advance(1);
    expect(await waiting).toEqual({
      status: 503,
      body: { error: 'the event could not be recorded now - deliver it again' },
    });
    expect(notices).toContainEqual({
      kind: 'unrecorded',
      reason: 'the register did not record the event within 3 s',
    });
    // The register answers again: the redelivery is recorded, once.
    stalled = false;
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'received' } });
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'duplicate' } });
    expect(r.stats).toMatchObject({ accepted: 1, duplicates: 1, unrecorded: 1, rejected: 1 });
  });

  it('says the deadline it was given when the register does not record in time', async () => {
    const notices: ReceiverNotice[] = [];
    const clock = manualClock();
    const r = await receiver({
      clock,
      recordDeadlineMs: 300,
      onNotice: (n) => void notices.push(n),
      persist: () => new Promise<boolean>(() => {}),
    });
    const waiting = post(r.url, JSON.stringify(payload()));
    await clock.whenWaiting(300);
    clock.advance(300);
    expect((await waiting).status).toBe(503);
    expect(notices).toEqual([
      { kind: 'unrecorded', reason: 'the register did not record the event within 0.3 s' },
    ]);
  });

  it('answers 503 when the register refuses the write, and never calls it a duplicate afterwards', async () => {
    let fail = true;
    const r = await receiver({
      persist: async () => {
        if (fail) throw new Error('Connection terminated unexpectedly');
        return true;
      },
    });
    const body = JSON.stringify(payload());
    const refused = await post(r.url, body);
    expect(refused.status).toBe(503);
    fail = false;
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'received' } });
  });

  it('says ready on /healthz while the register answers, and not ready when it does not', async () => {
    let state: 'up' | 'down' | 'stalled' = 'up';
    const clock = manualClock();
    const r = await receiver({
      clock,
      ready: async () => {
        if (state === 'down') throw new Error('refused');
        if (state === 'stalled') await new Promise(() => {});
      },
    });
    const health = r.url.replace(/\/webhooks$/, '/healthz');
    expect(await post(health, '', { method: 'GET' })).toEqual({ status: 200, body: { status: 'ready' } });
    state = 'down';
    expect((await post(health, '', { method: 'GET' })).status).toBe(503);
    state = 'stalled';
    let answered = false;
    const asking = post(health, '', { method: 'GET' }).finally(() => {
      answered = true;
    });
    // The probe waits for the register 2 s, and not a moment less.
    await clock.whenWaiting(2_000);
    clock.advance(1_999);
    state = 'up';
    expect((await post(health, '', { method: 'GET' })).status).toBe(200);
    expect(answered).toBe(false);
    clock.advance(1);
    expect(await asking).toEqual({
      status: 503,
      body: { status: 'not ready: the register does not answer' },
    });
  });
});

describe('webhook receiver: what a client can make it hold', () => {
  it('refuses a body announced over the limit with 413 before reading it, and one that grows past it', async () => {
    const r = await receiver();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(r.port, '127.0.0.1', () => {
        // Headers announce a million bytes; none of the body is sent.
        socket.write(
          `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`,
        );
      });
      let text = '';
      socket.on('data', (d) => {
        text += d.toString();
        if (text.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    // Chunked, no length announced: cut once past the limit.
    const chunked = await fetch(r.url, {
      method: 'POST',
      headers: { 'x-service-webhook-signature': 'x' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(8 * 1024).fill(120));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit).catch(() => undefined);
    if (chunked !== undefined) expect(chunked.status).toBe(413);
    expect(RECEIVER_DEFAULTS.maxBodyBytes).toBe(64 * 1024);
  });

  it('gives a body place held over 1 s to a new delivery when every place is taken, and not before', async () => {
    const clock = manualClock();
    const notices: ReceiverNotice[] = [];
    const r = await receiver({ clock, onNotice: (n) => void notices.push(n) });
    // Clients that announce a small body, send a byte of it and hold their place.
    const holders = Array.from({ length: RECEIVER_DEFAULTS.maxBodiesInFlight }, () => {
      const socket = connect(r.port, '127.0.0.1');
      onTestFinished(() => {
        socket.destroy();
      });
      socket.on('error', () => {});
      socket.write(`POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{`);
      return socket;
    });
    // Every place taken, none held long: a request is turned away at once, its body unread (a
    // badly signed probe, 401 while a place is free, records nothing).
    await vi.waitFor(async () => expect((await post(r.url, '{}', { signature: 'x' })).status).toBe(503), {
      timeout: 10_000,
    });
    const body = JSON.stringify(payload());
    expect((await post(r.url, body)).status).toBe(503);
    clock.advance(RECEIVER_DEFAULTS.slowBodyMs - 1);
    expect((await post(r.url, body)).status).toBe(503);
    expect(holders.filter((s) => s.destroyed)).toHaveLength(0);
    clock.advance(1);
    expect(await post(r.url, body)).toEqual({ status: 200, body: { status: 'received' } });
    // One holder was cut to make room; its place went to the delivery and is free again.
    await vi.waitFor(() => expect(holders.filter((s) => s.destroyed)).toHaveLength(1));
    expect((await post(r.url, JSON.stringify(payload({ resourceId: 'tx-2' })))).status).toBe(200);
    expect(holders.filter((s) => s.destroyed)).toHaveLength(1);
    for (const socket of holders) socket.destroy();
    await r.close();
    expect(notices.at(-1)).toMatchObject({
      kind: 'refused',
      counts: expect.objectContaining({ '408 body not sent within 1000 ms while others waited: cut': 1 }),
    });
  });

  it('answers 400 to a request line whose URL cannot be read', async () => {
    const r = await receiver();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(r.port, '127.0.0.1', () => {
        socket.write('POST http://[/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
      });
      let text = '';
      socket.on('data', (d) => {
        text += d.toString();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('webhook receiver against the sandbox', () => {
  it('records each event once when the sandbox delivers every event twice (--duplicate-rate 1)', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const r = await receiver({ eventsFile });
    const sb = await sandbox({ webhookSecret: SECRET, webhookUrl: r.url, duplicateRate: 1 });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken);
    const created = await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId, reference: 'INV-1' },
    });
    expect(created.status).toBe(201);
    await sb.whenIdle();
    await r.idle();

    const deliveries = sb.ledger().webhookDeliveries;
    expect(deliveries).toHaveLength(6);
    expect(deliveries.every((d) => d.status === 'delivered' && d.lastStatus === 200)).toBe(true);
    const lines = await jsonLines(eventsFile);
    const recorded = lines.map((l) => {
      const event = l['event'] as { operation: string; resourceId: string };
      return `${event.operation} ${event.resourceId}`;
    });
    expect(recorded.sort()).toEqual(
      [
        `BENEFICIARY_CREATED ${ids.beneficiaryId}`,
        `TRANSACTION_COMPLETED ${created.body.id}`,
        `TRANSACTION_CREATED ${created.body.id}`,
      ].sort(),
    );
    expect(r.stats).toMatchObject({ accepted: 3, duplicates: 3, rejected: 0 });
  });

  it('refuses the sandbox deliveries signed with a secret it does not hold', async () => {
    const r = await receiver();
    const sb = await sandbox({ webhookSecret: 'another-secret', webhookUrl: r.url, webhookMaxAttempts: 1 });
    const accessToken = await token(sb);
    await call(sb, 'POST', PATHS.beneficiaries, {
      token: accessToken,
      body: { type: 'INDIVIDUAL', name: 'A', country: 'US' },
    });
    await sb.whenIdle();
    expect(sb.ledger().webhookDeliveries).toEqual([
      expect.objectContaining({ status: 'failed', lastStatus: 401 }),
    ]);
    expect(r.stats).toMatchObject({ accepted: 0, rejected: 1 });
  });
});
