/**
 * What the webhook receiver is given and what it tells: its options and their defaults, its
 * notices and counts, the handle of a running receiver, and the settings resolved from the
 * options once, at start.
 */
import { type Clock, systemClock, type Timers, timersOf } from '../../clock.js';
import { ConfigError } from '../../errors.js';
import type { EventRecord } from '../events-file.js';

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
  /**
   * The clock of `receivedAt`, and with its `timers` of every deadline, summary and retry; the
   * wall clock and Node's timers by default.
   */
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

/** The options with their defaults filled in, checked once at start. */
export interface ReceiverSettings {
  secrets: string[];
  host: string;
  path: string;
  maxBodyBytes: number;
  recordDeadlineMs: number;
  clock: Clock;
  timers: Timers;
  notify: (notice: ReceiverNotice) => void;
  onEvent: ReceiverOptions['onEvent'];
  persist: ReceiverOptions['persist'];
  ready: ReceiverOptions['ready'];
}

/** The settings of `options`; a ConfigError when there is no secret or the path is not one. */
export function settingsOf(options: ReceiverOptions): ReceiverSettings {
  const secrets = (typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets]).filter(
    (s) => s !== '',
  );
  if (secrets.length === 0) {
    throw new ConfigError('the webhook receiver needs the webhook secret to check signatures');
  }
  const path = options.path ?? RECEIVER_DEFAULTS.path;
  if (!path.startsWith('/')) throw new ConfigError(`the webhook path must start with "/", got "${path}"`);
  const clock = options.clock ?? systemClock;
  return {
    secrets,
    host: options.host ?? RECEIVER_DEFAULTS.host,
    path,
    maxBodyBytes: options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
    recordDeadlineMs: options.recordDeadlineMs ?? RECEIVER_DEFAULTS.recordDeadlineMs,
    clock,
    timers: timersOf(clock),
    notify: options.onNotice ?? (() => {}),
    onEvent: options.onEvent,
    persist: options.persist,
    ready: options.ready,
  };
}
