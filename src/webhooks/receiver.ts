/**
 * The webhook receiver (docs/webhooks.md): a node:http server that takes the service's POSTs,
 * checks the signature on the raw body as it arrives, reads the payload, and answers:
 *
 * - 200 only once the event is recorded: `persist` (the register) committed it, or held it
 *   already, which makes it a duplicate. The register decides what is new, not this process's
 *   memory: a redelivery after a restart is a duplicate too.
 * - 503 with Retry-After when the register cannot answer within `recordDeadlineMs` (a few
 *   seconds, under the service's delivery time-out): the service delivers again, and nothing
 *   waits on a register that stalls.
 *
 * The events file (`eventsFile`) is an export written after the commit, for `run --events`; a
 * failed write there is said and tried again, and never decides an answer. Everything a client
 * can make it hold is bounded: the body (tens of KB, refused with 413 before it is read whole),
 * the time to send headers and body, the connections, the bodies read at once, the keys of
 * recent events, and the log lines about refusals (a summary per interval).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { HEADERS } from '../api/contract.js';
import { type Clock, systemClock } from '../clock.js';
import { ConfigError } from '../errors.js';
import { EventLog, type EventRecord } from './events-file.js';
import { eventKey, parseWebhookBody } from './payload.js';
import { StreamingSignature } from './signature.js';

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
  /** JSONL file every new event is appended to once recorded (an export: it decides nothing). */
  eventsFile?: string;
  /**
   * Records an event durably (the register) before it is acknowledged; resolves true when it is
   * new, false when it was held already (a duplicate). Without it, the events file is the record
   * and only recent keys tell duplicates.
   */
  persist?: (record: EventRecord) => Promise<boolean>;
  /** Whether the store answers, for `GET /healthz` (a Kubernetes readiness probe). */
  ready?: () => Promise<unknown>;
  /** Largest body accepted; larger is 413. */
  maxBodyBytes?: number;
  /** How long recording an event may take before the answer is 503 with Retry-After. */
  recordDeadlineMs?: number;
  /** Told about duplicates, refusals (a summary per interval) and failures (never gets a secret). */
  onNotice?: (notice: ReceiverNotice) => void;
  /** The clock of `receivedAt`; the wall clock by default. */
  clock?: Clock;
}

/** Something the receiver did besides accepting a new event. */
export type ReceiverNotice =
  | { kind: 'duplicate'; operation: string; resourceId: string }
  /** Requests refused since the last summary, counted per status and reason. */
  | { kind: 'refused'; seconds: number; counts: Record<string, number> }
  | { kind: 'unrecorded'; reason: string; error?: unknown }
  | { kind: 'failed'; reason: string; error: unknown };

export interface ReceiverStats {
  /** New events recorded. */
  accepted: number;
  duplicates: number;
  /** Requests refused (bad signature, malformed payload, wrong path or method, too large, too many). */
  rejected: number;
  /** Events answered 503 because the register did not record them in time. */
  unrecorded: number;
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
  /**
   * A webhook payload is a few hundred bytes (docs/service.md "Webhook payload"): 64 KiB leaves
   * room for a generous `data` and refuses what no event needs.
   */
  maxBodyBytes: 64 * 1024,
  /** The headers of a request must have arrived by then. */
  headersTimeoutMs: 10_000,
  /** A request that has not arrived in full by then is cut. */
  requestTimeoutMs: 30_000,
  /** Recording an event (the register's commit) within this, else 503: under the service's delivery time-out. */
  recordDeadlineMs: 3_000,
  /** What a 503 asks the service to wait before delivering again. */
  retryAfterSeconds: 5,
  /** Connections held at once; more are refused by the kernel's backlog. */
  maxConnections: 1_000,
  /**
   * Bodies being read at once. When all are taken, the one read longest gives way if it has
   * taken over `slowBodyMs` (its connection is cut); else the new request is answered 503 at
   * once, its body unread.
   */
  maxBodiesInFlight: 256,
  /**
   * A body still arriving after this, while another request waits for its place, is cut: the
   * service sends a few hundred bytes at once, so only a client dripping bytes takes that long,
   * and a few hundred such clients must not keep every real delivery out.
   */
  slowBodyMs: 1_000,
  /** Keys of recent events kept to answer quick redeliveries without the register. */
  recentKeys: 20_000,
  /** Refusals are said once per this interval, counted. */
  refusalSummaryMs: 10_000,
  /** How long close() lets requests in flight finish before cutting them. */
  closeGraceMs: 5_000,
} as const;

/** The readiness endpoint, for probes; not the webhook path. */
export const HEALTH_PATH = '/healthz';

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
  const recordDeadlineMs = options.recordDeadlineMs ?? RECEIVER_DEFAULTS.recordDeadlineMs;
  const clock = options.clock ?? systemClock;
  const notify = options.onNotice ?? (() => {});
  const stats: ReceiverStats = { accepted: 0, duplicates: 0, rejected: 0, unrecorded: 0 };
  const refusals = new RefusalSummary(notify);
  const recent = new RecentKeys(RECEIVER_DEFAULTS.recentKeys);
  const log = options.eventsFile === undefined ? undefined : await EventLog.open(options.eventsFile);
  // Without a register the events file is the record; with one, the file is its export.
  const record: (event: EventRecord) => Promise<boolean> =
    options.persist ?? (async (event) => (log === undefined ? true : log.append(event).then(() => true)));
  const exportEvent = async (event: EventRecord) => {
    if (log === undefined || options.persist === undefined) return;
    try {
      await log.append(event);
    } catch (error) {
      notify({
        kind: 'failed',
        reason: 'the event is recorded, but the events file could not be written (tried again)',
        error,
      });
    }
  };

  const inFlight = new Set<Promise<void>>();
  /** The requests whose bodies are being read, with when the reading began, oldest first. */
  const reading = new Map<IncomingMessage, number>();
  /** Cuts the body read longest, if it has taken over `slowBodyMs`; whether a place was freed. */
  const cutSlowestBody = (): boolean => {
    const oldest = reading.entries().next().value;
    if (oldest === undefined || performance.now() - oldest[1] < RECEIVER_DEFAULTS.slowBodyMs) return false;
    const [req] = oldest;
    reading.delete(req);
    stats.rejected += 1;
    refusals.add(408, `body not sent within ${RECEIVER_DEFAULTS.slowBodyMs} ms while others waited: cut`);
    req.socket.destroy();
    return true;
  };
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
  const enqueue = (event: EventRecord) => {
    const onEvent = options.onEvent;
    if (!onEvent) return;
    processing = processing.then(async () => {
      try {
        await onEvent(event);
      } catch (error) {
        const { operation, resourceId } = event.event;
        notify({ kind: 'failed', reason: `processing ${operation} ${resourceId} failed`, error });
      }
    });
  };

  let closing = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reject = (status: number, reason: string, headers: Record<string, string> = {}) => {
      stats.rejected += 1;
      refusals.add(status, reason);
      answer(res, status, { error: reason }, headers);
    };
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://receiver').pathname;
    } catch {
      return reject(400, 'the request line holds no readable URL', { connection: 'close' });
    }
    if (pathname === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD'))
      return health(res, options.ready);
    if (pathname !== requestPath) return reject(404, `no webhook endpoint at ${boundedPath(pathname)}`);
    if (req.method !== 'POST') return reject(405, 'only POST is accepted', { allow: 'POST' });
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      return reject(413, `body over ${maxBodyBytes} bytes`, { connection: 'close' });
    }
    if (reading.size >= RECEIVER_DEFAULTS.maxBodiesInFlight && !cutSlowestBody()) {
      return reject(503, 'too many requests at once', {
        'retry-after': String(RECEIVER_DEFAULTS.retryAfterSeconds),
        connection: 'close',
      });
    }
    reading.set(req, performance.now());
    const signature = new StreamingSignature(secrets);
    let body: Buffer | 'too-large' | 'aborted';
    try {
      body = await readBody(req, maxBodyBytes, signature);
    } finally {
      reading.delete(req);
    }
    if (body === 'too-large') return reject(413, `body over ${maxBodyBytes} bytes`, { connection: 'close' });
    if (body === 'aborted') return;

    // docs/service.md "Webhook signature": nothing of an unsigned or wrongly signed request is
    // looked at, let alone kept.
    const header = req.headers[HEADERS.webhookSignature.toLowerCase()];
    if (header === undefined) return reject(401, `missing ${HEADERS.webhookSignature} header`);
    if (!signature.matches(header)) return reject(401, 'signature does not match');

    const parsed = parseWebhookBody(body);
    if (!parsed.ok) return reject(400, parsed.problem);
    const event: EventRecord = { receivedAt: new Date(clock.now()).toISOString(), event: parsed.payload };
    const key = eventKey(event.event);

    // A copy of an event recorded a moment ago, or still being recorded, shares that outcome.
    let recording = recent.get(key);
    const first = recording === undefined;
    if (recording === undefined) {
      recording = record(event);
      recent.set(key, recording);
    }
    let isNew: boolean;
    try {
      isNew = (await withDeadline(recording, recordDeadlineMs)) && first;
    } catch (error) {
      recent.delete(key, recording);
      stats.unrecorded += 1;
      notify({
        kind: 'unrecorded',
        reason:
          error === DEADLINE
            ? `the register did not record the event within ${recordDeadlineMs / 1000} s`
            : 'the register could not record the event',
        ...(error === DEADLINE ? {} : { error }),
      });
      return answer(
        res,
        503,
        { error: 'the event could not be recorded now - deliver it again' },
        { 'retry-after': String(RECEIVER_DEFAULTS.retryAfterSeconds) },
      );
    }
    if (!isNew) {
      stats.duplicates += 1;
      notify({ kind: 'duplicate', operation: event.event.operation, resourceId: event.event.resourceId });
      return answer(res, 200, { status: 'duplicate' }, closing ? { connection: 'close' } : {});
    }
    stats.accepted += 1;
    await exportEvent(event);
    answer(res, 200, { status: 'received' }, closing ? { connection: 'close' } : {});
    // docs/service.md "Webhook delivery": answer first, process afterwards.
    setImmediate(() => enqueue(event));
  }

  const server = createServer(
    {
      headersTimeout: RECEIVER_DEFAULTS.headersTimeoutMs,
      requestTimeout: RECEIVER_DEFAULTS.requestTimeoutMs,
      // Node applies the two time-outs in a periodic sweep (30 s by default): every second,
      // so that 30 s means 30 s.
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      const job = handle(req, res).catch((error: unknown) => {
        notify({ kind: 'failed', reason: 'the request could not be handled', error });
        if (!res.headersSent) answer(res, 500, { error: 'internal error' });
      });
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    },
  );
  server.maxConnections = RECEIVER_DEFAULTS.maxConnections;

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
        // Requests in flight end within the record deadline whatever the register does.
        await Promise.all(inFlight);
        server.closeAllConnections();
        clearTimeout(grace);
        await stopped;
        await settle();
        refusals.flush();
        refusals.stop();
        await log?.close();
      })();
      return closed;
    },
  };
}

/** The rejection of a recording that took longer than its deadline. */
const DEADLINE = Symbol('deadline');

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(DEADLINE), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `GET /healthz`: 200 when the register answers (within 2 s), 503 when it does not. */
async function health(res: ServerResponse, ready: ReceiverOptions['ready']): Promise<void> {
  if (ready === undefined) return answer(res, 200, { status: 'ready' });
  try {
    await withDeadline(Promise.resolve().then(ready), 2_000);
    answer(res, 200, { status: 'ready' });
  } catch {
    answer(res, 503, { status: 'not ready: the register does not answer' });
  }
}

/** A path as a refusal may name it: no client makes a log line long. */
function boundedPath(pathname: string): string {
  return pathname.length > 100 ? `${pathname.slice(0, 100)}...` : pathname;
}

/**
 * The keys of recent events with their recording, oldest dropped first: a redelivery that
 * comes quickly is answered without the register; older ones ask it (which knows them all).
 */
class RecentKeys {
  private readonly keys = new Map<string, Promise<boolean>>();

  constructor(private readonly limit: number) {}

  get(key: string): Promise<boolean> | undefined {
    return this.keys.get(key);
  }

  set(key: string, recording: Promise<boolean>): void {
    this.keys.set(key, recording);
    if (this.keys.size > this.limit) this.keys.delete(this.keys.keys().next().value as string);
  }

  /** Forgets a key whose recording failed, unless a newer one took its place. */
  delete(key: string, recording: Promise<boolean>): void {
    if (this.keys.get(key) === recording) this.keys.delete(key);
  }
}

/** Refusals counted per status and reason, said once per interval (never a line per request). */
class RefusalSummary {
  private counts: Record<string, number> = {};
  private since = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly notify: (notice: ReceiverNotice) => void) {
    this.timer = setInterval(() => this.flush(), RECEIVER_DEFAULTS.refusalSummaryMs);
    this.timer.unref();
  }

  add(status: number, reason: string): void {
    // Reasons that name a path are counted by their status alone: a client cannot make keys grow.
    const key = `${status} ${status === 404 ? 'no webhook endpoint there' : reason}`;
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }

  flush(): void {
    if (Object.keys(this.counts).length === 0) return;
    const now = Date.now();
    this.notify({ kind: 'refused', seconds: Math.round((now - this.since) / 1000), counts: this.counts });
    this.counts = {};
    this.since = now;
  }

  stop(): void {
    clearInterval(this.timer);
  }
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

/**
 * The raw body, unmodified (docs/service.md "Webhook signature"), its signature computed as it
 * arrives; or why there is none. Past `limit` the rest is not kept.
 */
function readBody(
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
