/**
 * The requests of a running receiver, each from its request line to its answer, in the order a
 * delivery goes: route, a place among the bodies read at once, the body read with its signature
 * checked, the payload read, the event recorded, the answer, and only then `onEvent`.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HEADERS } from '../../api/contract.js';
import { isoNow } from '../../clock.js';
import type { EventLog, EventRecord } from '../events-file.js';
import { parseWebhookBody } from '../payload.js';
import { StreamingSignature } from '../signature.js';
import { BodyPlaces } from './body-places.js';
import { withDeadline } from './deadline.js';
import { EventQueue } from './event-queue.js';
import { answer, readBody } from './http.js';
import { HEALTH_PATH, RECEIVER_DEFAULTS, type ReceiverSettings, type ReceiverStats } from './options.js';
import { EventRecorder, unrecordedNotice } from './recorder.js';
import { RefusalSummary } from './refusals.js';

/** A request turned away: its status, the reason it is told, and any headers of the answer. */
interface Refusal {
  status: number;
  reason: string;
  headers?: Record<string, string>;
}

/** How long `GET /healthz` waits for the register before saying it is not ready. */
const READY_DEADLINE_MS = 2_000;

/** What a 503 says to the service: deliver again after a while. */
const RETRY_LATER = { 'retry-after': String(RECEIVER_DEFAULTS.retryAfterSeconds) };

/** The receiver's requests, its counts, and what is still in flight. */
export class Deliveries {
  readonly stats: ReceiverStats = { accepted: 0, duplicates: 0, rejected: 0, unrecorded: 0 };
  private readonly refusals: RefusalSummary;
  private readonly places: BodyPlaces;
  private readonly recorder: EventRecorder;
  private readonly queue: EventQueue;
  private readonly inFlight = new Set<Promise<void>>();
  private closing = false;

  constructor(
    private readonly settings: ReceiverSettings,
    log: EventLog | undefined,
  ) {
    this.refusals = new RefusalSummary(settings.notify, settings.clock, RECEIVER_DEFAULTS.refusalSummaryMs);
    this.places = new BodyPlaces(
      { places: RECEIVER_DEFAULTS.maxBodiesInFlight, slowBodyMs: RECEIVER_DEFAULTS.slowBodyMs },
      settings.timers,
      () => this.count({ status: 408, reason: slowBodyReason() }),
    );
    this.recorder = new EventRecorder(settings, log);
    this.queue = new EventQueue(settings.onEvent, settings.notify);
  }

  /** The server's request listener: handles the request, held in flight until answered. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    const job = this.handle(req, res).catch((error: unknown) => {
      this.settings.notify({ kind: 'failed', reason: 'the request could not be handled', error });
      if (!res.headersSent) answer(res, 500, { error: 'internal error' });
    });
    this.inFlight.add(job);
    void job.finally(() => this.inFlight.delete(job));
  }

  /** Waits until no request is in flight and every accepted event went through `onEvent`. */
  async settle(): Promise<void> {
    for (;;) {
      const queued = this.queue.tail;
      await Promise.all(this.inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      await queued;
      if (queued === this.queue.tail && this.inFlight.size === 0) return;
    }
  }

  /** Stops `server` taking requests, lets those in flight finish (briefly), drains `onEvent`. */
  async close(server: Server): Promise<void> {
    this.closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const cancelGrace = this.settings.timers.once(
      RECEIVER_DEFAULTS.closeGraceMs,
      () => server.closeAllConnections(),
      { unref: true },
    );
    // Requests in flight end within the record deadline whatever the register does.
    await Promise.all(this.inFlight);
    server.closeAllConnections();
    cancelGrace();
    await stopped;
    await this.settle();
    this.refusals.flush();
    this.refusals.stop();
  }

  /** One request, step by step; every way out answers it (or its client has gone). */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = this.route(req);
    if (route === 'health') return health(res, this.settings);
    if (route !== 'delivery') return this.refuse(res, route);
    const body = await this.readSigned(req);
    if (body === 'aborted') return;
    if (!Buffer.isBuffer(body)) return this.refuse(res, body);
    const parsed = parseWebhookBody(body);
    if (!parsed.ok) return this.refuse(res, { status: 400, reason: parsed.problem });
    await this.accept(res, { receivedAt: isoNow(this.settings.clock), event: parsed.payload });
  }

  /** Where a request goes: the readiness probe, a delivery, or a refusal of what it asks. */
  private route(req: IncomingMessage): 'health' | 'delivery' | Refusal {
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://receiver').pathname;
    } catch {
      return {
        status: 400,
        reason: 'the request line holds no readable URL',
        headers: { connection: 'close' },
      };
    }
    if (pathname === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) return 'health';
    if (pathname !== this.settings.path)
      return { status: 404, reason: `no webhook endpoint at ${boundedPath(pathname)}` };
    if (req.method !== 'POST')
      return { status: 405, reason: 'only POST is accepted', headers: { allow: 'POST' } };
    return 'delivery';
  }

  /**
   * The body of a delivery, read in one of the places for bodies, its signature checked as it
   * arrives (docs/service.md "Webhook signature": nothing of an unsigned or wrongly signed
   * request is looked at, let alone kept); or why it is refused.
   */
  private async readSigned(req: IncomingMessage): Promise<Buffer | Refusal | 'aborted'> {
    const { maxBodyBytes } = this.settings;
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) return tooLarge(maxBodyBytes);
    if (!this.places.take(req)) {
      return {
        status: 503,
        reason: 'too many requests at once',
        headers: { ...RETRY_LATER, connection: 'close' },
      };
    }
    const signature = new StreamingSignature(this.settings.secrets);
    let body: Buffer | 'too-large' | 'aborted';
    try {
      body = await readBody(req, maxBodyBytes, signature);
    } finally {
      this.places.release(req);
    }
    if (body === 'too-large') return tooLarge(maxBodyBytes);
    if (body === 'aborted') return body;
    const header = req.headers[HEADERS.webhookSignature.toLowerCase()];
    if (header === undefined) return { status: 401, reason: `missing ${HEADERS.webhookSignature} header` };
    if (!signature.matches(header)) return { status: 401, reason: 'signature does not match' };
    return body;
  }

  /** Records a signed event and answers: 200 once recorded or held already, 503 when it is not. */
  private async accept(res: ServerResponse, event: EventRecord): Promise<void> {
    const recorded = await this.recorder.record(event);
    if (typeof recorded === 'object') {
      this.stats.unrecorded += 1;
      this.settings.notify(unrecordedNotice(recorded.unrecorded, this.settings.recordDeadlineMs));
      const error = 'the event could not be recorded now - deliver it again';
      return answer(res, 503, { error }, RETRY_LATER);
    }
    if (recorded === 'duplicate') {
      this.stats.duplicates += 1;
      const { operation, resourceId } = event.event;
      this.settings.notify({ kind: 'duplicate', operation, resourceId });
      return answer(res, 200, { status: 'duplicate' }, this.closingHeaders());
    }
    this.stats.accepted += 1;
    await this.recorder.export(event);
    answer(res, 200, { status: 'received' }, this.closingHeaders());
    // docs/service.md "Webhook delivery": answer first, process afterwards.
    setImmediate(() => this.queue.add(event));
  }

  /** Answers a refusal, counted for the stats and the next summary. */
  private refuse(res: ServerResponse, refusal: Refusal): void {
    this.count(refusal);
    answer(res, refusal.status, { error: refusal.reason }, refusal.headers);
  }

  private count(refusal: Refusal): void {
    this.stats.rejected += 1;
    this.refusals.add(refusal.status, refusal.reason);
  }

  /** While closing, a keep-alive connection is told to end with its answer. */
  private closingHeaders(): Record<string, string> {
    return this.closing ? { connection: 'close' } : {};
  }
}

/** `GET /healthz`: 200 when the register answers (within 2 s), 503 when it does not. */
async function health(res: ServerResponse, settings: ReceiverSettings): Promise<void> {
  const { ready, timers } = settings;
  if (ready === undefined) return answer(res, 200, { status: 'ready' });
  try {
    await withDeadline(Promise.resolve().then(ready), READY_DEADLINE_MS, timers);
    answer(res, 200, { status: 'ready' });
  } catch {
    answer(res, 503, { status: 'not ready: the register does not answer' });
  }
}

function tooLarge(maxBodyBytes: number): Refusal {
  return { status: 413, reason: `body over ${maxBodyBytes} bytes`, headers: { connection: 'close' } };
}

function slowBodyReason(): string {
  return `body not sent within ${RECEIVER_DEFAULTS.slowBodyMs} ms while others waited: cut`;
}

/** A path as a refusal may name it: no client makes a log line long. */
function boundedPath(pathname: string): string {
  return pathname.length > 100 ? `${pathname.slice(0, 100)}...` : pathname;
}
