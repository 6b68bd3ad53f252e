import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { webhooksListenCommand } from '../../src/cli/webhooks.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { startReceiver } from '../../src/webhooks/receiver.js';
import { runCli, withTempDir } from '../helpers/cli.js';
import { testRegisterPath } from '../helpers/register.js';

const SECRET = 'whsec-run-events-0123456789';
const ENV = {
  PAYOUTS_CLIENT_ID: 'sandbox-client',
  PAYOUTS_CLIENT_SECRET: 'sandbox-secret',
  PAYOUTS_USERNAME: 'integrator@example.com',
  PAYOUTS_PASSWORD: 'sandbox-password',
};

const HEADER =
  'reference,amount,currency,type,beneficiaryType,beneficiaryName,beneficiaryCountry,individualName,clabe,bankCode,receiverName';
const spei = (ref: string, name: string) =>
  `${ref},150.00,MXN,SPEI,INDIVIDUAL,${name},MX,${name},002010077777777771,002,${name}`;

describe('payouts run --events', () => {
  it('marks rows completed or failed from the webhook events the receiver recorded', async () => {
    await withTempDir(async (dir) => {
      const events = path.join(dir, 'events.jsonl');
      const receiver = await startReceiver({ port: 0, secrets: SECRET, eventsFile: events });
      const sandbox = await startSandbox({
        webhookSecret: SECRET,
        webhookUrl: receiver.url,
        settleDelayMs: 20,
        seed: 7,
      });
      try {
        const sheet = path.join(dir, 'spei.csv');
        // The sandbox fails transactions to recipients named FAIL... (its documented trigger).
        await writeFile(
          sheet,
          `${HEADER}\n${spei('E-1', 'Maria Ruiz')}\n${spei('E-2', 'FAIL Closed Account')}\n`,
        );
        const args = ['run', sheet, '--base-url', sandbox.url, '--json', '--rate', '100'];
        const first = await runCli(args, { env: ENV });
        // Both sent; the events may have been recorded while the run still ran (settling takes
        // 20 ms here), and the run then shows them already.
        const { statuses } = JSON.parse(first.stdout);
        expect(statuses.submitted + statuses.completed + statuses.failed).toBe(2);
        expect(statuses.completed).toBeLessThanOrEqual(1);
        expect(statuses.failed).toBeLessThanOrEqual(1);
        await sandbox.whenIdle();
        await receiver.idle();

        const second = await runCli([...args, '--events', events], { env: ENV });
        const summary = JSON.parse(second.stdout);
        expect(summary.statuses).toMatchObject({ completed: 1, failed: 1, submitted: 0 });
        expect(second.code).toBe(1);
        const rows = parse(await readFile(summary.results), { columns: true, bom: true }) as Record<
          string,
          string
        >[];
        expect(rows.map((r) => r['result.status'])).toEqual(['completed', 'failed']);
        expect(rows[1]!['result.errors']).not.toBe('');
        expect(sandbox.ledger().transactions).toHaveLength(2);
      } finally {
        await sandbox.close();
        await receiver.close();
      }
    });
  });

  it('records the events in the register: status and the next run know the outcomes without --events', async () => {
    await withTempDir(async (dir) => {
      let stop!: () => void;
      const stopSignal = new Promise<void>((resolve) => {
        stop = resolve;
      });
      let listening!: (receiver: WebhookReceiver) => void;
      const started = new Promise<WebhookReceiver>((resolve) => {
        listening = resolve;
      });
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: dir };
      const listener = webhooksListenCommand(
        {
          host: '127.0.0.1',
          port: 0,
          path: '/webhooks',
          eventsFile: undefined,
          register: testRegisterPath(),
          secrets: [SECRET],
          stopSignal,
          onListening: listening,
        },
        io,
      );
      const receiver = await started;
      const sandbox = await startSandbox({
        webhookSecret: SECRET,
        webhookUrl: receiver.url,
        settleDelayMs: 20,
        seed: 7,
      });
      try {
        const sheet = path.join(dir, 'spei.csv');
        await writeFile(
          sheet,
          `${HEADER}\n${spei('R-1', 'Maria Ruiz')}\n${spei('R-2', 'FAIL Closed Account')}\n`,
        );
        const args = ['run', sheet, '--base-url', sandbox.url, '--json', '--rate', '100'];
        const first = await runCli(args, { env: ENV });
        // Both sent; the events may have been recorded while the run still ran (settling takes
        // 20 ms here), and the run then shows them already.
        const { statuses } = JSON.parse(first.stdout);
        expect(statuses.submitted + statuses.completed + statuses.failed).toBe(2);
        expect(statuses.completed).toBeLessThanOrEqual(1);
        expect(statuses.failed).toBeLessThanOrEqual(1);
        await sandbox.whenIdle();
        await receiver.idle();

        const status = await runCli(['status', 'R-1', 'R-2', '--json'], { env: {} });
        const { references } = JSON.parse(status.stdout) as { references: { state: string }[] };
        expect(references.map((r) => r.state)).toEqual(['completed', 'failed']);

        const second = await runCli(args, { env: ENV });
        const summary = JSON.parse(second.stdout);
        expect(summary.statuses).toMatchObject({ skipped: 1, failed: 1, submitted: 0 });
        const rows = parse(await readFile(summary.results), { columns: true, bom: true }) as Record<
          string,
          string
        >[];
        expect(rows[0]!['result.errors']).toMatch(
          /^already paid: completed on .* from sheet spei\.csv as transaction /,
        );
        expect(rows[1]!['result.status']).toBe('failed');
        expect(sandbox.ledger().transactions).toHaveLength(2);
      } finally {
        await sandbox.close();
        stop();
        await listener;
      }
    });
  });

  it('reads an events file not written yet as one without events', async () => {
    await withTempDir(async (dir) => {
      const sandbox = await startSandbox({ port: 0 });
      try {
        const sheet = path.join(dir, 'spei.csv');
        await writeFile(sheet, `${HEADER}\n${spei('R-1', 'Maria Ruiz')}\n`);
        const events = path.join(dir, 'none.jsonl');
        const result = await runCli(['run', sheet, '--base-url', sandbox.url, '--events', events, '--json'], {
          env: ENV,
        });
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout).statuses.submitted).toBe(1);
      } finally {
        await sandbox.close();
      }
    });
  });
});
