/**
 * The compiled `payouts webhooks listen` with its PostgreSQL register behind the TCP fault
 * proxy: whatever the network to the database does, an event is answered 200 only once it is
 * recorded, 503 with Retry-After within the record deadline otherwise (docs/webhooks.md "The
 * delivery guarantee"), `GET /healthz` says so, and the receiver records again once the
 * database is back.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/payouts.js';
import { testRegisterDatabase } from '../helpers/postgres.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { payload, SECRET, sign, tempDir } from '../webhooks/helpers.js';

interface Answer {
  status: number;
  retryAfter: string | null;
  ms: number;
}

async function deliver(url: URL, resourceId: string): Promise<Answer> {
  const body = JSON.stringify(
    payload({ resourceId, data: { transactionId: resourceId, status: 'COMPLETED' } }),
  );
  const started = Date.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-webhook-signature': sign(body) },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    ms: Date.now() - started,
  };
}

async function health(url: URL): Promise<number> {
  const response = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(15_000) });
  await response.text();
  return response.status;
}

/** Delivers until 200 (as the service does, without its 5 s wait); the answers on the way. */
async function deliverUntilRecorded(url: URL, resourceId: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    const { status } = await deliver(url, resourceId);
    statuses.push(status);
    if (status === 200) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return statuses;
}

async function recorded(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ resource_id: string }>(
      'SELECT resource_id FROM payouts.events ORDER BY resource_id',
    );
    return rows.map((r) => r.resource_id);
  } finally {
    await client.end();
  }
}

/** `webhooks listen` (the compiled CLI) with a fresh PostgreSQL register behind the proxy. */
async function listenThroughProxy() {
  const database = await testRegisterDatabase();
  const target = new URL(database);
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
  const dir = await tempDir();
  const secretFile = path.join(dir, 'webhook.secret');
  await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
  const child = spawnCli(
    ['webhooks', 'listen', '--port', '0', '--register', proxy.through(database), '--secret-file', secretFile],
    {},
  );
  expect(await child.whenLines('webhook receiver listening', 1)).toBe(true);
  const line = child
    .stderr()
    .split('\n')
    .find((l) => l.includes('webhook receiver listening'))!;
  const url = new URL((JSON.parse(line) as { url: string }).url);
  return { database, target, proxy, child, url };
}

describe('webhooks listen with its PostgreSQL register behind a faulty network', () => {
  it('answers 503 in time while the database stalls, is refused or cut, and records each event once when it is back', async () => {
    const { database, target, proxy, child, url } = await listenThroughProxy();
    expect((await deliver(url, 'tx-pass')).status).toBe(200);
    expect(await health(url)).toBe(200);

    // A stall: no answer from the database at all. 503 past the 3 s record deadline, never later.
    proxy.set('stall');
    const stalled = await deliver(url, 'tx-stall');
    expect(stalled).toMatchObject({ status: 503, retryAfter: '5' });
    expect(stalled.ms).toBeGreaterThanOrEqual(2_900);
    expect(stalled.ms).toBeLessThan(6_000);
    expect(await health(url)).toBe(503);
    proxy.set('pass');
    expect((await deliverUntilRecorded(url, 'tx-stall')).at(-1)).toBe(200);

    // Refused: a new connection fails at once, and the open ones are cut.
    proxy.set('refuse');
    const refused = await deliver(url, 'tx-refuse');
    expect(refused.status).toBe(503);
    expect(refused.ms).toBeLessThan(6_000);
    proxy.set('pass');
    expect((await deliverUntilRecorded(url, 'tx-refuse')).at(-1)).toBe(200);

    // Cut: every open connection reset, new ones welcome. The receiver recovers by itself.
    proxy.set('cut');
    expect((await deliverUntilRecorded(url, 'tx-cut')).at(-1)).toBe(200);

    // Every event once, the redeliveries of events recorded before answered as duplicates.
    expect((await deliver(url, 'tx-pass')).status).toBe(200);
    expect((await deliver(url, 'tx-stall')).status).toBe(200);
    child.child.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit.code).toBe(0);
    expect(await recorded(database)).toEqual(['tx-cut', 'tx-pass', 'tx-refuse', 'tx-stall']);
    // The URL's password never in a log line.
    expect(exit.stderr).not.toContain(target.password);
  });

  it('answers 503 in time, never 200, while its open connection goes silent and new ones would work', async () => {
    const { database, proxy, child, url } = await listenThroughProxy();
    expect((await deliver(url, 'tx-before')).status).toBe(200);
    // A failover behind a path that went silent: no reset comes for the connection held.
    proxy.set('stall', { newConnections: 'pass' });
    for (const id of ['tx-silent-1', 'tx-silent-2']) {
      const answer = await deliver(url, id);
      expect(answer).toMatchObject({ status: 503, retryAfter: '5' });
      expect(answer.ms).toBeLessThan(6_000);
    }
    proxy.set('pass');
    for (const id of ['tx-silent-1', 'tx-silent-2'])
      expect((await deliverUntilRecorded(url, id)).at(-1)).toBe(200);
    child.child.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
    expect(await recorded(database)).toEqual(['tx-before', 'tx-silent-1', 'tx-silent-2']);
  });

  it('stays up while its connections are cut and refused under 3,000 events 20 at a time: each recorded once', {
    timeout: 120_000,
  }, async () => {
    const { database, proxy, child, url } = await listenThroughProxy();
    const ids = Array.from({ length: 3000 }, (_, i) => `tx-load-${String(i).padStart(4, '0')}`);
    const answers = new Map<number, number>();
    let next = 0;
    let outageAt: number | undefined;
    // Twenty senders, as the service's delivery workers, each redelivering until 200.
    const senders = 20;
    const metOutage = new Set<number>();
    const sender = async (who: number) => {
      for (let i = next++; i < ids.length; i = next++) {
        if (i === 1000) {
          outageAt = Date.now();
          proxy.set('refuse');
        }
        for (let attempt = 0; attempt < 60; attempt++) {
          const { status } = await deliver(url, ids[i]!);
          answers.set(status, (answers.get(status) ?? 0) + 1);
          // The outage ends once every sender has met it: the event, not a guess.
          if (proxy.mode === 'refuse' && status === 503) metOutage.add(who);
          if (proxy.mode === 'refuse' && metOutage.size === senders) proxy.set('pass');
          if (status === 200) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    };
    await Promise.all(Array.from({ length: senders }, (_, who) => sender(who)));
    expect(outageAt).toBeDefined();
    // The outage was felt (503s), the receiver stayed up, and every event is there once.
    expect(answers.get(503) ?? 0).toBeGreaterThanOrEqual(senders);
    expect(proxy.mode).toBe('pass');
    expect(child.child.exitCode).toBeNull();
    expect(await health(url)).toBe(200);
    const all = await recorded(database);
    expect(all).toHaveLength(3000);
    expect(new Set(all).size).toBe(3000);
    child.child.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
  });
});
