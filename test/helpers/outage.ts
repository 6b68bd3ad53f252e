/**
 * A TCP relay on a fixed loopback port in front of the sandbox that can be taken away and
 * brought back (the service removed mid-run). Taken away, it closes its port and cuts
 * every open connection, exactly what a client sees when the service's process dies; the
 * sandbox behind it keeps its ledger, so a resumed run is checked against the same one.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface Outage {
  url: string;
  /** Closes the port and cuts every connection: requests are refused from now on. */
  takeAway(): Promise<void>;
  /** Opens the same port again. */
  bringBack(): Promise<void>;
}

export async function removableService(target: string): Promise<Outage> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const relay = (client: Socket) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.pipe(server).pipe(client);
  };
  let server: Server = createServer(relay);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  onTestFinished(close);
  return {
    url: `http://127.0.0.1:${port}`,
    takeAway: close,
    async bringBack() {
      server = createServer(relay);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}
