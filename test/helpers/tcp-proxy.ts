/**
 * A TCP fault proxy on a free loopback port in front of a real server (the test PostgreSQL, an
 * echo server), beside the HTTP fault proxy of docs/testing.md "A fault proxy": a test switches,
 * at any moment, what the network between a database client and its server does.
 *
 * - `pass`: bytes are forwarded both ways.
 * - `cut`: every open connection is reset now; new ones are accepted and forwarded.
 * - `refuse`: open connections are reset now, and new ones are closed as soon as they arrive.
 * - `stall`: sockets stay open and no byte moves either way, as behind a dead router. Bytes
 *   sent meanwhile are held (by the proxy, one chunk per direction at most, the rest in the
 *   kernel's buffers through TCP flow control) and delivered, in order, when the mode goes back
 *   to `pass`; a `cut` or `refuse` discards them with their connection. A connection accepted
 *   during a stall reaches the server only once it ends.
 *
 * Bounded: at most `maxConnections` pairs at once, more are closed at once. Closed when the
 * test that started it ends.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export type TcpProxyMode = 'pass' | 'cut' | 'refuse' | 'stall';

export interface TcpProxyCounts {
  /** Connections accepted and forwarded (or held) since the proxy started. */
  accepted: number;
  /** Client connections open now. */
  open: number;
  /** Connections closed on arrival (`refuse`, or over `maxConnections`). */
  refused: number;
  /** Open connections reset by `cut` or `refuse`. */
  cut: number;
}

export interface TcpProxy {
  host: string;
  port: number;
  /** The mode in force. */
  readonly mode: TcpProxyMode;
  /** Switches the mode now (see the file's comment for what each does). */
  set(mode: TcpProxyMode): void;
  counts(): TcpProxyCounts;
  /** `url` with its host and port replaced by the proxy's (a PostgreSQL URL, say). */
  through(url: string): string;
  /** Stops accepting and destroys every connection; safe to call twice. */
  close(): Promise<void>;
}

export interface TcpProxyOptions {
  mode?: TcpProxyMode;
  maxConnections?: number;
}

/** One client connection and its connection to the server (absent until it is opened). */
interface Pair {
  client: Socket;
  server: Socket | undefined;
  /** A chunk read while stalled, per direction, delivered on `pass`. */
  held: { up: Buffer[]; down: Buffer[] };
}

/** Starts a proxy to `target` on 127.0.0.1, port 0; closed when the current test ends. */
export async function tcpProxy(
  target: { host: string; port: number },
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  const proxy = await startTcpProxy(target, options);
  onTestFinished(() => proxy.close());
  return proxy;
}

/** `tcpProxy` without the test hook, for code that closes it itself. */
export async function startTcpProxy(
  target: { host: string; port: number },
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  let mode: TcpProxyMode = options.mode ?? 'pass';
  const maxConnections = options.maxConnections ?? 100;
  const pairs = new Set<Pair>();
  const counts = { accepted: 0, refused: 0, cut: 0 };

  const reset = (socket: Socket | undefined) => {
    if (socket === undefined || socket.destroyed) return;
    // An RST, as a network failure or a killed server gives: the peer sees ECONNRESET.
    socket.resetAndDestroy();
  };
  /** Ends a pair: reset (`hard`, a fault) or closed as the other side closed. */
  const drop = (pair: Pair, hard: boolean) => {
    if (!pairs.delete(pair)) return;
    for (const socket of [pair.client, pair.server]) {
      if (hard) reset(socket);
      else socket?.destroySoon();
    }
  };
  const forward = (from: Socket, to: () => Socket | undefined, held: Buffer[]) => {
    from.on('data', (chunk: Buffer) => {
      const destination = to();
      if (mode === 'stall' || destination === undefined || held.length > 0) {
        held.push(chunk);
        // Nothing more is read until the stall ends: the kernel and TCP hold the rest.
        from.pause();
        return;
      }
      destination.write(chunk);
    });
    // A side that finished sending finishes the other (a client's orderly close).
    from.on('end', () => to()?.end());
  };
  const openServerSide = (pair: Pair) => {
    const server = connect(target.port, target.host);
    pair.server = server;
    server.on('error', () => drop(pair, true));
    server.on('close', () => drop(pair, false));
    forward(server, () => pair.client, pair.held.down);
    if (mode === 'stall') server.pause();
    else flush(pair);
  };
  /** Delivers what a stall held and lets both sides read again. */
  const flush = (pair: Pair) => {
    if (pair.server === undefined) return openServerSide(pair);
    for (const chunk of pair.held.up.splice(0)) pair.server.write(chunk);
    for (const chunk of pair.held.down.splice(0)) pair.client.write(chunk);
    pair.client.resume();
    pair.server.resume();
  };

  const server: Server = createServer((client) => {
    if (mode === 'refuse' || pairs.size >= maxConnections) {
      counts.refused += 1;
      client.on('error', () => {});
      reset(client);
      return;
    }
    counts.accepted += 1;
    const pair: Pair = { client, server: undefined, held: { up: [], down: [] } };
    pairs.add(pair);
    client.on('error', () => drop(pair, true));
    client.on('close', () => drop(pair, false));
    forward(client, () => pair.server, pair.held.up);
    if (mode === 'stall') client.pause();
    else openServerSide(pair);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };

  let closed: Promise<void> | undefined;
  return {
    host: '127.0.0.1',
    port,
    get mode() {
      return mode;
    },
    set(next) {
      mode = next;
      if (next === 'cut' || next === 'refuse') {
        for (const pair of [...pairs]) {
          counts.cut += 1;
          drop(pair, true);
        }
      } else if (next === 'pass') {
        for (const pair of pairs) flush(pair);
      } else {
        for (const pair of pairs) {
          pair.client.pause();
          pair.server?.pause();
        }
      }
    },
    counts: () => ({ ...counts, open: pairs.size }),
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const pair of [...pairs]) drop(pair, true);
      });
      return closed;
    },
  };
}
