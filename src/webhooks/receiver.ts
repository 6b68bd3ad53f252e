/**
 * The webhook receiver (docs/service.md "Webhooks"): a node:http server that takes the service's
 * POSTs, checks the signature on the raw body, reads the payload, drops duplicates by
 * resourceId + operation, records each new event durably and answers 200, then hands the event
 * to `onEvent`.
 *
 * The one ordering choice: an event is appended to the events file (fsynced) BEFORE the 200,
 * and processed after it. A 200 tells the service to stop retrying, so acknowledging before the
 * event is on disk would lose it to a crash; an fsynced append of one line takes milliseconds,
 * which keeps the answer quick (6.1 item 3). A write that fails is answered 500, so the service
 * delivers again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEADERS } from '../api/contract.js';
import { type Clock, systemClock } from '../clock.js';
import { ConfigError, StorageError } from '../errors.js';
import { EventLog, type EventRecord, eventsFileError, readEvents } from './events-file.js';
import { eventKey, parseWebhookBody } from './payload.js';
import { verifySignature } from './signature.js';

export interface ReceiverOptions {
  /** Interface to listen on; loopback unless said otherwise (put TLS in front for the service). */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /** The request path the service POSTs to. */
  path?: string;
  /**
   * The webhook secret, or the current and previous ones during a rotation (docs/service.md
   * "Webhook secret").
   */
  secrets: string | readonly string[];
  /** Called once per new event, after the 200, one event at a time in arrival order. */
  onEvent?: (record: EventRecord) => void | Promise<void>;
  /** JSONL file every new event is appended to, and read on start to keep de-duplicating. */
  eventsFile?: string;
  /**
   * Records a new event durably somewhere else too (the register), before it is acknowledged;
   * it must be idempotent: a redelivery after a restart without an events file comes again.
   */
  persist?: (record: EventRecord) => Promise<unknown>;
  /** Largest body accepted; larger is 413. */
  maxBodyBytes?: number;
  /** Told about duplicates, refused requests and failures (for logging; never gets a secret). */
  onNotice?: (notice: ReceiverNotice) => void;
  /** The clock of `receivedAt`; the wall clock by default. */
  clock?: Clock;
}

/** Something the receiver did besides accepting a new event. */
export type ReceiverNotice =
  | { kind: 'duplicate'; operation: string; resourceId: string }
  | { kind: 'rejected'; status: number; reason: string; remoteAddress: string | undefined }
  | { kind: 'failed'; reason: string; error: unknown }
  | { kind: 'bad-line'; file: string; line: number; problem: string };

export interface ReceiverStats {
  /** New events recorded. */
  accepted: number;
  duplicates: number;
  /** Requests refused (bad signature, malformed payload, wrong path or method, too large). */
  rejected: number;
  /** Events already in the events file when the receiver started. */
  loaded: number;
}

export interface WebhookReceiver {
  /**
   * The callback URL to give the service (behind your HTTPS front: docs/service.md "Webhook
   * delivery").
   */
  url: string;
  host: string;
  port: number;
  path: string;
  readonly stats: Readonly<ReceiverStats>;
  /** Resolves once every event accepted so far has been through `onEvent`. */
  idle(): Promise<void>;
  /** Stops listening, lets requests in flight finish (briefly), drains `onEvent`, closes the file. */
  close(): Promise<void>;
}

export const RECEIVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  path: '/webhooks',
  /** The sandbox's request limit (docs/api-assumptions.md); no event comes near it. */
  maxBodyBytes: 1024 * 1024,
  /** A request that has not arrived in full by then is cut. */
  requestTimeoutMs: 30_000,
  /** How long close() lets requests in flight finish before cutting them. */
  closeGraceMs: 5_000,
} as const;

const PERSISTED: Promise<void> = Promise.resolve();

/** Starts the receiver; rejects with ConfigError when it has no secret or cannot listen. */
export async function startReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const secrets = (typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets]).filter(
    (s) => s !== '',
  );
  if (secrets.length === 0) {
    throw new ConfigError('the webhook receiver needs the webhook secret to check signatures');
  }
  const host = options.host ?? RECEIVER_DEFAULTS.host;
  const requestPath = options.path ?? RECEIVER_DEFAULTS.path;
  if (!requestPath.startsWith('/'))
    throw new ConfigError(`the webhook path must start with "/", got "${requestPath}"`);
  const maxBodyBytes = options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes;
  const clock = options.clock ?? systemClock;
  const notify = options.onNotice ?? (() => {});
  const stats: ReceiverStats = { accepted: 0, duplicates: 0, rejected: 0, loaded: 0 };

  // Each key maps to the append that recorded it: a duplicate arriving while the first copy is
  // still being written waits for that write and shares its fate.
  const seen = new Map<string, Promise<void>>();
  let log: EventLog | undefined;
  if (options.eventsFile !== undefined) {
    const file = options.eventsFile;
    const onBadLine = (line: number, problem: string) => notify({ kind: 'bad-line', file, line, problem });
    try {
      for await (const stored of readEvents(file, { onBadLine })) {
        seen.set(eventKey(stored.event), PERSISTED);
        stats.loaded += 1;
      }
      log = await EventLog.open(file);
    } catch (error) {
      // A file the receiver cannot use is the environment's problem, named with its errno.
      throw error instanceof StorageError ? error : eventsFileError(file, 'read', error);
    }
  }

  const inFlight = new Set<Promise<void>>();
  let processing: Promise<void> = Promise.resolve();
  /** Waits until no request is in flight and every accepted event went through `onEvent`. */
  const settle = async () => {
    for (;;) {
      const queued = processing;
      await Promise.all(inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      await queued;
      if (queued === processing && inFlight.size === 0) return;
    }
  };
  const enqueue = (record: EventRecord) => {
    const onEvent = options.onEvent;
    if (!onEvent) return;
    processing = processing.then(async () => {
      try {
        await onEvent(record);
      } catch (error) {
        const { operation, resourceId } = record.event;
        notify({ kind: 'failed', reason: `processing ${operation} ${resourceId} failed`, error });
      }
    });
  };

  let closing = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reject = (status: number, reason: string, headers: Record<string, string> = {}) => {
      stats.rejected += 1;
      notify({ kind: 'rejected', status, reason, remoteAddress: req.socket.remoteAddress });
      answer(res, status, { error: reason }, headers);
    };
    const pathname = new URL(req.url ?? '/', 'http://receiver').pathname;
    if (pathname !== requestPath) return reject(404, `no webhook endpoint at ${pathname}`);
    if (req.method !== 'POST') return reject(405, `${req.method} is not accepted - POST`, { allow: 'POST' });
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      return reject(413, `body over ${maxBodyBytes} bytes`, { connection: 'close' });
    }
    const body = await readBody(req, maxBodyBytes);
    if (body === 'too-large') return reject(413, `body over ${maxBodyBytes} bytes`, { connection: 'close' });
    if (body === 'aborted') return;

    // docs/service.md "Webhook signature": nothing of an unsigned or wrongly signed request is
    // looked at, let alone kept.
    const signature = req.headers[HEADERS.webhookSignature.toLowerCase()];
    if (signature === undefined) return reject(401, `missing ${HEADERS.webhookSignature} header`);
    if (!verifySignature(body, signature, secrets)) return reject(401, 'signature does not match');

    const parsed = parseWebhookBody(body);
    if (!parsed.ok) return reject(400, parsed.problem);
    const record: EventRecord = { receivedAt: new Date(clock.now()).toISOString(), event: parsed.payload };
    const key = eventKey(record.event);

    const earlier = seen.get(key);
    if (earlier !== undefined) {
      try {
        await earlier;
      } catch {
        // The first copy could not be recorded: this one is refused too, and the service retries.
        return answer(res, 500, { error: 'the event could not be recorded - deliver it again' });
      }
      stats.duplicates += 1;
      notify({ kind: 'duplicate', operation: record.event.operation, resourceId: record.event.resourceId });
      return answer(res, 200, { status: 'duplicate' });
    }

    const recorded = Promise.all([
      log ? log.append(record) : PERSISTED,
      options.persist ? options.persist(record) : PERSISTED,
    ]).then(() => {});
    seen.set(key, recorded);
    try {
      await recorded;
    } catch (error) {
      seen.delete(key);
      notify({ kind: 'failed', reason: 'the event could not be recorded', error });
      return answer(res, 500, { error: 'the event could not be recorded - deliver it again' });
    }
    stats.accepted += 1;
    answer(res, 200, { status: 'received' }, closing ? { connection: 'close' } : {});
    // docs/service.md "Webhook delivery": answer first, process afterwards.
    setImmediate(() => enqueue(record));
  }

  const server = createServer((req, res) => {
    const job = handle(req, res).catch((error: unknown) => {
      notify({ kind: 'failed', reason: 'the request could not be handled', error });
      if (!res.headersSent) answer(res, 500, { error: 'internal error' });
    });
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
  });
  server.requestTimeout = RECEIVER_DEFAULTS.requestTimeoutMs;

  let port: number;
  try {
    port = await listen(server, options.port ?? RECEIVER_DEFAULTS.port, host);
  } catch (error) {
    await log?.close();
    throw error;
  }

  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${requestPath}`,
    host,
    port,
    path: requestPath,
    stats,
    idle: settle,
    close: () => {
      closed ??= (async () => {
        closing = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), RECEIVER_DEFAULTS.closeGraceMs);
        grace.unref();
        await Promise.all(inFlight);
        server.closeAllConnections();
        clearTimeout(grace);
        await stopped;
        await settle();
        await log?.close();
      })();
      return closed;
    },
  };
}

function answer(
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

/** The raw body, unmodified (docs/service.md "Webhook signature"), or why there is none. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        resolve('too-large');
        return;
      }
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

function listen(server: Server, port: number, host: string): Promise<number> {
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
