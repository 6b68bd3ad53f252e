import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { PATHS, type Simulation, TOKEN_PATH } from '../../src/api/contract.js';
import type { Rail } from '../../src/columns/rails.js';
import { type SandboxHandle, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import { type Json, VALID } from '../rows/fixtures.js';

/** Starts a sandbox on a free loopback port, closed when the test ends. */
export async function sandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const handle = await startSandbox({ port: 0, settleDelayMs: 5, ...options });
  onTestFinished(() => handle.close());
  return handle;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is empty; tests assert its shape field by field. */
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer under test, checked by the test itself
  body: any;
  text: string;
}

export interface CallOptions {
  token?: string;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string. */
  body?: unknown;
}

/** One HTTP request to the sandbox. */
export async function call(
  sb: SandboxHandle,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(sb.url + path, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
    text,
  };
}

export const PRIMARY = { username: 'integrator@example.com', password: 'sandbox-password' };
export const OTHER = { username: 'other@example.com', password: 'sandbox-password' };
export const CLIENT = { client_id: 'sandbox-client', client_secret: 'sandbox-secret' };

/** An access token of the user (the primary integrator by default). */
export async function token(sb: SandboxHandle, user = PRIMARY): Promise<string> {
  const answer = await call(sb, 'POST', TOKEN_PATH, {
    body: new URLSearchParams({ grant_type: 'password', ...CLIENT, ...user }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (answer.status !== 200) throw new Error(`token: ${answer.status} ${answer.text}`);
  return answer.body.access_token as string;
}

/**
 * An error body check (docs/service.md "Error body"): exact field set, timestamp with offset,
 * reason phrase, path.
 */
export function expectErrorBody(answer: Answer, status: number, path: string): void {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  const keys = Object.keys(answer.body)
    .filter((k) => k !== 'errors')
    .sort();
  if (keys.join(',') !== 'error,message,path,status,timestamp')
    throw new Error(`error body fields: ${keys.join(',')}`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/.test(answer.body.timestamp)) {
    throw new Error(`timestamp without offset: ${answer.body.timestamp}`);
  }
  const reasons: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    409: 'Conflict',
    413: 'Payload Too Large',
    422: 'Unprocessable Entity',
    429: 'Too Many Requests',
    500: 'Internal Server Error',
    502: 'Bad Gateway',
    503: 'Service Unavailable',
  };
  if (answer.body.status !== status || answer.body.error !== reasons[status] || answer.body.path !== path) {
    throw new Error(`error body: ${answer.text}`);
  }
  if (typeof answer.body.message !== 'string' || answer.body.message === '') throw new Error('empty message');
}

/** A valid RecipientRequest (test/rows/fixtures.ts) on a rail, for a beneficiary. */
export function recipientBody(rail: Rail, beneficiaryId: string, name = 'Ana Lopez'): Json {
  return { ...structuredClone(VALID[rail]), individualName: name, beneficiaryId };
}

/** Beneficiary, recipient and simulation in one go; returns their ids. */
export async function quoteFor(
  sb: SandboxHandle,
  accessToken: string,
  options: { rail?: Rail; amount?: string; name?: string } = {},
): Promise<{ beneficiaryId: string; recipientId: string; simulationId: string; simulation: Simulation }> {
  const rail = options.rail ?? 'ACH';
  const beneficiary = await call(sb, 'POST', PATHS.beneficiaries, {
    token: accessToken,
    body: { type: 'INDIVIDUAL', name: 'Ana Lopez', country: 'US' },
  });
  if (beneficiary.status !== 201) throw new Error(`beneficiary: ${beneficiary.text}`);
  const recipient = await call(sb, 'POST', PATHS.recipients, {
    token: accessToken,
    body: recipientBody(rail, beneficiary.body.id, options.name),
  });
  if (recipient.status !== 201) throw new Error(`recipient: ${recipient.text}`);
  const simulation = await call(sb, 'POST', PATHS.simulations, {
    token: accessToken,
    body: {
      recipientId: recipient.body.id,
      amount: options.amount ?? '100.00',
      currency: VALID[rail]['currency'],
    },
  });
  if (simulation.status !== 200) throw new Error(`simulation: ${simulation.text}`);
  return {
    beneficiaryId: beneficiary.body.id,
    recipientId: recipient.body.id,
    simulationId: simulation.body.id,
    simulation: simulation.body,
  };
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: string;
}

/**
 * A webhook receiver on a free loopback port. `status` decides each answer (200 by default),
 * from the number of the call (1-based); `holdMs` delays every answer.
 */
export async function receiver(status: (call: number) => number = () => 200, holdMs = 0) {
  const received: ReceivedWebhook[] = [];
  let calls = 0;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls += 1;
      received.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      const answer = status(calls);
      if (holdMs === 0) res.writeHead(answer).end();
      else setTimeout(() => res.writeHead(answer).end(), holdMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

export { eventually } from '../helpers/eventually.js';
