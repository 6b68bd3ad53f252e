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
import { createServer } from 'node:http';
import { EventLog } from './events-file.js';
import { Deliveries } from './receiver/deliveries.js';
import { listen } from './receiver/http.js';
import {
  RECEIVER_DEFAULTS,
  type ReceiverOptions,
  type ReceiverSettings,
  settingsOf,
  type WebhookReceiver,
} from './receiver/options.js';

export {
  HEALTH_PATH,
  RECEIVER_DEFAULTS,
  type ReceiverNotice,
  type ReceiverOptions,
  type ReceiverStats,
  type WebhookReceiver,
} from './receiver/options.js';

/** Starts the receiver; rejects with ConfigError when it has no secret or cannot listen. */
export async function startReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const settings = settingsOf(options);
  const log =
    options.eventsFile === undefined ? undefined : await EventLog.open(options.eventsFile, settings.clock);
  const deliveries = new Deliveries(settings, log);
  const server = createServer(
    {
      headersTimeout: RECEIVER_DEFAULTS.headersTimeoutMs,
      requestTimeout: RECEIVER_DEFAULTS.requestTimeoutMs,
      // Node applies the two time-outs in a periodic sweep (30 s by default): every second,
      // so that 30 s means 30 s.
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => deliveries.serve(req, res),
  );
  server.maxConnections = RECEIVER_DEFAULTS.maxConnections;
  let port: number;
  try {
    port = await listen(server, options.port ?? RECEIVER_DEFAULTS.port, settings.host);
  } catch (error) {
    await log?.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    url: receiverUrl(settings, port),
    host: settings.host,
    port,
    path: settings.path,
    stats: deliveries.stats,
    idle: () => deliveries.settle(),
    close: () => {
      closed ??= deliveries.close(server).then(() => log?.close());
      return closed;
    },
  };
}

/** The URL the receiver answers on; an IPv6 host in brackets. */
function receiverUrl(settings: ReceiverSettings, port: number): string {
  const { host, path } = settings;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
}
