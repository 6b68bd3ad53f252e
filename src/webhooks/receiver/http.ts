/**
 * The receiver's node:http plumbing: an answer as JSON, the raw body read with its signature
 * computed as it arrives, and listening on a port with a failure said in words.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../errors.js';
import type { StreamingSignature } from '../signature.js';

/** Answers `status` with `body` as JSON. */
export function answer(
  res: ServerResponse,
  status: number,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * The raw body, unmodified (docs/service.md "Webhook signature"), its signature computed as it
 * arrives; or why there is none. Past `limit` the rest is not kept.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  signature: StreamingSignature,
): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        chunks.length = 0;
        req.resume();
        resolve('too-large');
        return;
      }
      signature.update(chunk);
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve('aborted'));
    req.on('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });
}

/** Listens on `host:port` (0: a free one); resolves to the port, or rejects with a ConfigError. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new ConfigError(
          `the webhook receiver cannot listen on ${host}:${port}: ${error.code ?? error.message}`,
          {
            cause: error,
          },
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
