import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { testDatabase } from '../helpers/postgres.js';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.js';

/** A server that sends back every byte it gets, on 127.0.0.1; closed when the test ends. */
async function echoServer(): Promise<{ host: string; port: number }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { host: '127.0.0.1', port: (server.address() as { port: number }).port };
}

/** A client connection to the proxy that collects what comes back and how it ended. */
async function client(proxy: TcpProxy) {
  const socket = connect(proxy.port, proxy.host);
  onTestFinished(() => {
    socket.destroy();
  });
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on('error', (e) => {
    error = e;
  });
  // Not events.once: it rejects on 'error', and a reset is an outcome these tests look for.
  const closed = new Promise<true>((resolve) => socket.on('close', () => resolve(true)));
  // A refused connection may be reset before it is even reported connected.
  await Promise.race([new Promise((resolve) => socket.on('connect', resolve)), closed]);
  return {
    socket,
    received: () => received,
    error: () => error,
    closed,
    /** Whether `text` came back within `ms`. */
    async echoed(text: string, ms = 2_000): Promise<boolean> {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if (received.includes(text)) return true;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return false;
    },
  };
}

/** Settles with 'timed out' if `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  return Promise.race([
    promise,
    new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), ms)),
  ]);
}

describe('tcpProxy against an echo server', () => {
  it('pass forwards both ways and counts the connections', async () => {
    const proxy = await tcpProxy(await echoServer());
    const a = await client(proxy);
    const b = await client(proxy);
    a.socket.write('hello');
    b.socket.write('world');
    expect(await a.echoed('hello')).toBe(true);
    expect(await b.echoed('world')).toBe(true);
    expect(proxy.counts()).toMatchObject({ accepted: 2, open: 2, refused: 0, cut: 0 });
    a.socket.end();
    await a.closed;
    await expect.poll(() => proxy.counts().open).toBe(1);
  });

  it('cut resets every open connection and keeps accepting new ones', async () => {
    const proxy = await tcpProxy(await echoServer());
    const a = await client(proxy);
    a.socket.write('before');
    expect(await a.echoed('before')).toBe(true);
    proxy.set('cut');
    expect(await within(a.closed, 2_000)).toBe(true);
    expect(a.error()?.code).toBe('ECONNRESET');
    expect(proxy.counts()).toMatchObject({ open: 0, cut: 1 });

    const b = await client(proxy);
    b.socket.write('after');
    expect(await b.echoed('after')).toBe(true);
  });

  it('refuse closes new connections at once and cuts the open ones', async () => {
    const proxy = await tcpProxy(await echoServer());
    const open = await client(proxy);
    proxy.set('refuse');
    expect(await within(open.closed, 2_000)).toBe(true);
    const late = await client(proxy);
    late.socket.write('anyone?');
    expect(await within(late.closed, 2_000)).toBe(true);
    expect(late.received()).toBe('');
    expect(proxy.counts()).toMatchObject({ accepted: 1, refused: 1, cut: 1, open: 0 });
  });

  it('stall moves no byte either way, then delivers what it held, in order, on pass', async () => {
    const proxy = await tcpProxy(await echoServer());
    const a = await client(proxy);
    proxy.set('stall');
    a.socket.write('one ');
    a.socket.write('two');
    // A connection made during the stall is held too: not even the server sees it yet.
    const b = await client(proxy);
    b.socket.write('three');
    expect(await a.echoed('one', 300)).toBe(false);
    expect(await b.echoed('three', 100)).toBe(false);
    expect(a.received()).toBe('');
    expect(proxy.counts().open).toBe(2);

    proxy.set('pass');
    expect(await a.echoed('one two')).toBe(true);
    expect(await b.echoed('three')).toBe(true);
  });

  it('refuses connections beyond its bound, and close() ends everything', async () => {
    const proxy = await tcpProxy(await echoServer(), { maxConnections: 2 });
    const a = await client(proxy);
    await client(proxy);
    const third = await client(proxy);
    expect(await within(third.closed, 2_000)).toBe(true);
    expect(proxy.counts()).toMatchObject({ accepted: 2, refused: 1, open: 2 });
    await proxy.close();
    expect(await within(a.closed, 2_000)).toBe(true);
    expect(proxy.counts().open).toBe(0);
  });
});

describe('tcpProxy in front of the test PostgreSQL', () => {
  /** A pg client through the proxy whose errors are kept, ended when the test ends. */
  async function pgClient(url: string) {
    const errors: Error[] = [];
    const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    db.on('error', (error) => errors.push(error));
    onTestFinished(() => db.end().catch(() => {}));
    await db.connect();
    return { db, errors };
  }

  it('a query through pass works; after cut the client gets an error; a new client works again', async () => {
    const url = await testDatabase();
    const target = new URL(url);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
    const { db, errors } = await pgClient(proxy.through(url));
    expect((await db.query('SELECT 1 + 1 AS two')).rows).toEqual([{ two: 2 }]);

    proxy.set('cut');
    await expect(db.query('SELECT 1')).rejects.toThrow();
    await expect.poll(() => errors.length).toBeGreaterThan(0);

    const again = await pgClient(proxy.through(url));
    expect((await again.db.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
  });

  it('under stall a query does not complete until the stall ends', async () => {
    const url = await testDatabase();
    const target = new URL(url);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
    const { db } = await pgClient(proxy.through(url));
    proxy.set('stall');
    const query = db.query('SELECT 42 AS answer');
    expect(await within(query, 1_000)).toBe('timed out');
    proxy.set('pass');
    expect((await query).rows).toEqual([{ answer: 42 }]);
  });

  it('refuse makes a new connection fail', async () => {
    const url = await testDatabase();
    const target = new URL(url);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
    proxy.set('refuse');
    const db = new pg.Client({ connectionString: proxy.through(url), connectionTimeoutMillis: 5_000 });
    db.on('error', () => {});
    await expect(db.connect()).rejects.toThrow();
    expect(proxy.counts()).toMatchObject({ refused: 1, accepted: 0 });
  });
});
