/**
 * `payouts webhooks listen` over a PostgreSQL register that stalls (docs/register.md "When the
 * register fails"): an event it cannot record in time is answered 503 (the service delivers it
 * again), and a stop ends the receiver within 10 s whatever the register does; once the
 * register answers again, events are recorded again.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { webhooksListenCommand } from '../../src/cli/webhooks.js';
import type { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { asAdmin, testDatabase } from '../helpers/postgres.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { payload, post, SECRET } from './helpers.js';

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
    const database = await testDatabase();
    const target = new URL(database);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
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
        eventsFile: undefined,
        register: proxy.through(database),
        secrets: [SECRET],
        stopSignal,
        onListening: started,
      },
      out.io,
    );
    const receiver = await listening;
    const first = JSON.stringify(payload({ resourceId: 'tx-1' }));
    expect((await post(receiver.url, first)).status).toBe(200);

    proxy.set('stall');
    const stalled = JSON.stringify(
      payload({ resourceId: 'tx-2', data: { transactionId: 'tx-2', status: 'COMPLETED' } }),
    );
    const asked = Date.now();
    expect((await post(receiver.url, stalled)).status).toBe(503);
    expect(Date.now() - asked).toBeLessThan(4_500);

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
    expect((await post(receiver.url, third)).status).toBe(503);
    const stoppedAt = Date.now();
    stop();
    expect(await done).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(out.stderr()).not.toMatch(/PG_\w{5}/);
  });
});
