/**
 * Debian's Prometheus Pushgateway on 127.0.0.1 at a free port, stopped when the test ends, and
 * a local receiver of notifications that keeps every byte it was sent (headers included), for
 * the signals for cron (docs/container.md "Signals for cron").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { onTestFinished } from 'vitest';

/** Where Debian installs the gateway (package prometheus-pushgateway). */
export const PUSHGATEWAY = '/usr/bin/prometheus-pushgateway';
export const HAS_PUSHGATEWAY = existsSync(PUSHGATEWAY);

/** A port nobody listens on now (the gateway takes it a moment later). */
export async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Gateway {
  url: string;
  /** What the gateway serves on /metrics: the text format, every group's metrics. */
  metrics(): Promise<string>;
}

/** Starts the gateway (no persistence), ready to take pushes; stopped when the test ends. */
export async function testPushgateway(): Promise<Gateway> {
  const port = await freePort();
  const child: ChildProcess = spawn(PUSHGATEWAY, [`--web.listen-address=127.0.0.1:${port}`], {
    stdio: 'ignore',
  });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 10_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > until || child.exitCode !== null) throw new Error('the pushgateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, metrics: () => fetch(`${url}/metrics`).then((r) => r.text()) };
}

/**
 * The value of the sample of `name` whose labels include `labels` in a text exposition, or
 * undefined; throws when more than one sample matches (the labels did not say which).
 */
export function sampleOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  const found = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  const value = found[0]?.split(' ').at(-1);
  return value === undefined ? undefined : Number(value);
}

export interface Receiver {
  url: string;
  /** Every request's body, parsed as JSON. */
  bodies(): unknown[];
  /** Every byte every connection sent, as text (request lines, headers and bodies). */
  bytes(): string;
  requests(): { method: string; path: string; contentType: string | undefined }[];
}

/** A local incoming webhook that answers `status` (or never answers); closed when the test ends. */
export async function testReceiver(answer: { status?: number; never?: boolean } = {}): Promise<Receiver> {
  const raw: Buffer[] = [];
  const bodies: unknown[] = [];
  const requests: { method: string; path: string; contentType: string | undefined }[] = [];
  const server = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'],
      });
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        bodies.push(JSON.parse(text));
      } catch {
        bodies.push(text);
      }
      if (answer.never) return;
      response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.on('connection', (socket) => socket.on('data', (chunk: Buffer) => raw.push(chunk)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks/T000/B000/planted-hook-token`,
    bodies: () => [...bodies],
    bytes: () => Buffer.concat(raw).toString('utf8'),
    requests: () => [...requests],
  };
}
