/**
 * A scripted fault proxy on a free loopback port in front of the sandbox (scripted
 * faults such as "reset after processing"). Per request: forward it (after holding it back a
 * while), answer it itself (JSON or any text: HTML, empty, cut short, oversized), forward it
 * and then answer badly (stall, dribble the headers or the body a byte at a time, cut the
 * connection, or a bad answer of its own), or drop it unseen.
 */
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface ProxiedRequest {
  method: string;
  path: string;
  body: string;
}

/** An answer the proxy gives itself: JSON `body`, or `text` as it is (HTML, '', '{"id":'). */
export interface ProxyAnswer {
  status: number;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

export type ProxyAction =
  /** Pass it on, after `holdMs` milliseconds (a slow network). */
  | { kind: 'forward'; holdMs?: number }
  /** Answer it here; the service never sees it. */
  | ({ kind: 'answer' } & ProxyAnswer)
  /** Pass it on, let the service act, then answer this instead of the service's answer. */
  | ({ kind: 'answer-after' } & ProxyAnswer)
  /** Pass it on, let the service act, then cut the client's connection without the answer. */
  | { kind: 'cut' }
  /** Cut the client's connection at once: the service never sees the request. */
  | { kind: 'drop' }
  /** Never answer (`forwardFirst`: after the service acted). The connection stays open. */
  | { kind: 'stall'; forwardFirst?: boolean }
  /** Pass it on, then send the service's answer one byte every `everyMs`: headers or body. */
  | { kind: 'dribble'; part: 'headers' | 'body'; everyMs: number };

export const FORWARD: ProxyAction = { kind: 'forward' };

interface Upstream {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Starts the proxy to `target`; `decide` picks each request's fate. Closed when the test ends. */
export async function scriptedProxy(
  target: string,
  decide: (request: ProxiedRequest) => ProxyAction,
): Promise<{ url: string }> {
  const upstream = new URL(target);
  const timers = new Set<NodeJS.Timeout>();
  const send = (req: IncomingMessage, body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const out = forward(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            }),
          );
          answer.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });
  const drip = (socket: Socket, bytes: Buffer, everyMs: number) => {
    let at = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || at >= bytes.length) {
        clearInterval(timer);
        timers.delete(timer);
        if (!socket.destroyed) socket.end();
        return;
      }
      socket.write(bytes.subarray(at, at + 1));
      at += 1;
    }, everyMs);
    timers.add(timer);
  };
  const act = async (req: IncomingMessage, res: ServerResponse, body: Buffer, action: ProxyAction) => {
    switch (action.kind) {
      case 'answer':
        answer(res, action);
        return;
      case 'drop':
        req.socket.destroy();
        return;
      case 'stall':
        if (action.forwardFirst) await send(req, body);
        return;
      case 'forward': {
        if (action.holdMs) await new Promise((resolve) => setTimeout(resolve, action.holdMs));
        const got = await send(req, body);
        res.writeHead(got.status, got.headers);
        res.end(got.body);
        return;
      }
      case 'cut':
        await send(req, body);
        req.socket.destroy();
        return;
      case 'answer-after':
        await send(req, body);
        answer(res, action);
        return;
      case 'dribble': {
        const got = await send(req, body);
        const head = [
          `HTTP/1.1 ${got.status} Dribbled`,
          `content-type: ${got.headers['content-type'] ?? 'application/json'}`,
          `content-length: ${got.body.length}`,
          'connection: close',
          '',
          '',
        ].join('\r\n');
        if (action.part === 'headers') {
          drip(req.socket, Buffer.concat([Buffer.from(head), got.body]), action.everyMs);
        } else {
          req.socket.write(head);
          drip(req.socket, got.body, action.everyMs);
        }
        return;
      }
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request = { method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString('utf8') };
      act(req, res, body, decide(request)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function answer(res: ServerResponse, action: ProxyAnswer): void {
  const text = action.text ?? JSON.stringify(action.body);
  const type = action.text === undefined ? 'application/json' : 'text/html';
  res.writeHead(action.status, { 'content-type': type, ...action.headers });
  res.end(text);
}
