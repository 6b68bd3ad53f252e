import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the test server received it. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  body: string;
  /** 0-based index of this request among those to the same path. */
  index: number;
}

/** Scripted behaviour of one path; may be async. */
export type Handler = (exchange: Exchange) => unknown;

export interface TestServer {
  url: string;
  received: Received[];
  /** Requests received for one path. */
  count(path: string): number;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1, port 0, so tests meet real sockets,
 * routing by path; each handler scripts the faults of its path by request index.
 */
export async function startServer(routes: Record<string, Handler>): Promise<TestServer> {
  const received: Received[] = [];
  const perPath = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? '', path, headers: req.headers, body });
      const index = perPath.get(path) ?? 0;
      perPath.set(path, index + 1);
      const handler = routes[path];
      if (!handler) {
        json(res, 404, errorBody(404, 'Not Found', `no route ${path}`, path));
        return;
      }
      Promise.resolve(handler({ req, res, body, index })).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    count: (path) => received.filter((r) => r.path === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Picks the handler for the request's index; the last one repeats. */
export function script(...handlers: Handler[]): Handler {
  return (exchange) => handlers[Math.min(exchange.index, handlers.length - 1)]!(exchange);
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers });
  res.end(text);
}

/** The error body (docs/service.md "Error body"). */
export function errorBody(status: number, error: string, message: string, path: string) {
  return { timestamp: '2025-01-01T00:00:00+00:00', status, error, message, path };
}

/** Answers `status` with the service's error body. */
export function fail(status: number, message = 'boom', headers: Record<string, string> = {}): Handler {
  return ({ res, req }) => json(res, status, errorBody(status, 'Error', message, req.url ?? ''), headers);
}

/** 204, no body. */
export const noContent: Handler = ({ res }) => res.writeHead(204).end();

export function ok(body: unknown, status = 200, headers: Record<string, string> = {}): Handler {
  return ({ res }) => json(res, status, body, headers);
}

/** Cuts the connection after the whole request was read: it "may have taken effect". */
export const resetAfterRequest: Handler = ({ req }) => {
  req.socket.destroy();
};

/** Answers only after `ms`, to trip the client's headers timeout. */
export function slow(ms: number, then: Handler): Handler {
  return (exchange) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (!exchange.res.destroyed && !exchange.req.socket.destroyed) void then(exchange);
        resolve();
      }, ms);
      exchange.req.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
}

export const TOKEN = { access_token: 'tok-1', token_type: 'Bearer', expires_in: 3600, scope: 'read write' };

/** A token endpoint handing out tok-1, tok-2, ... */
export const tokenEndpoint: Handler = ({ res, index }) =>
  json(res, 200, { ...TOKEN, access_token: `tok-${index + 1}` });
