import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { WebhookPayload } from '../../src/api/contract.js';
import { type ReceiverOptions, startReceiver, type WebhookReceiver } from '../../src/webhooks/receiver.js';

export const SECRET = 'whsec-test-0123456789-abcdefghij';

/** A temporary directory removed when the test ends. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-webhooks-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A receiver on a free loopback port, closed when the test ends. */
export async function receiver(options: Partial<ReceiverOptions> = {}): Promise<WebhookReceiver> {
  const handle = await startReceiver({ port: 0, secrets: SECRET, ...options });
  onTestFinished(() => handle.close());
  return handle;
}

/** A webhook payload (docs/service.md "Webhook payload"). */
export function payload(overrides: Partial<WebhookPayload> = {}): WebhookPayload {
  return {
    operation: 'TRANSACTION_COMPLETED',
    resourceId: 'tx-1',
    createdAt: '2026-01-02T03:04:05.678',
    integratorId: 'int-1',
    beneficiaryId: 'ben-1',
    message: null,
    success: true,
    data: { transactionId: 'tx-1', status: 'COMPLETED' },
    ...overrides,
  };
}

/** Base64 HMAC-SHA256, written here independently of src/webhooks/signature.ts. */
export function sign(body: string, secret = SECRET): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('base64');
}

export interface Posted {
  status: number;
  body: unknown;
}

/** POSTs a raw body with the given headers (signed with SECRET unless `signature` says otherwise). */
export async function post(
  url: string,
  body: string,
  options: { signature?: string | null; method?: string } = {},
): Promise<Posted> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const signature = options.signature === undefined ? sign(body) : options.signature;
  if (signature !== null) headers['x-service-webhook-signature'] = signature;
  const response = await fetch(url, {
    method: options.method ?? 'POST',
    headers,
    body: options.method === 'GET' ? undefined : body,
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** The lines of a JSONL file, parsed (none when it does not exist). */
export async function jsonLines(file: string): Promise<Record<string, unknown>[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
