/**
 * A scripted HTTP proxy on a free loopback port in front of the sandbox (STYLE.md: scripted
 * faults such as "reset after processing"): per request, forward it (after holding it back a
 * while), answer it itself, or forward it and then cut the connection without the answer.
 */
import { createServer, request as forward } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface ProxiedRequest {
  method: string;
  path: string;
  body: string;
}

export type ProxyAction =
  /** Pass it on, after `holdMs` milliseconds (a slow network). */
  | { kind: 'forward'; holdMs?: number }
  /** Answer it here; the service never sees it. */
  | { kind: 'answer'; status: number; body: unknown; headers?: Record<string, string> }
  /** Pass it on, let the service act, then cut the client's connection without the answer. */
  | { kind: 'cut' }
  /** Cut the client's connection at once: the service never sees the request. */
  | { kind: 'drop' };

export const FORWARD: ProxyAction = { kind: 'forward' };

/** Starts the proxy to `target`; `decide` picks each request's fate. Closed when the test ends. */
export async function scriptedProxy(
  target: string,
  decide: (request: ProxiedRequest) => ProxyAction,
): Promise<{ url: string }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request = { method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString('utf8') };
      const action = decide(request);
      if (action.kind === 'answer') {
        res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
        res.end(JSON.stringify(action.body));
        return;
      }
      if (action.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      const send = () => {
        const out = forward(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: request.method,
            path: request.path,
            headers: { ...req.headers, host: upstream.host },
          },
          (answer) => {
            if (action.kind === 'cut') {
              answer.resume();
              answer.on('end', () => req.socket.destroy());
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        out.end(body);
      };
      const holdMs = action.kind === 'forward' ? (action.holdMs ?? 0) : 0;
      if (holdMs > 0) setTimeout(send, holdMs);
      else send();
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
