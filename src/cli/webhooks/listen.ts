/** `payouts webhooks listen`: receive, verify, de-duplicate and record webhook events. */
import path from 'node:path';
import type { Logger } from 'pino';
import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { isLoopbackHost } from '../../sandbox/callback-url.js';
import type { EventRecord } from '../../webhooks/events-file.js';
import {
  RECEIVER_DEFAULTS,
  type ReceiverNotice,
  startReceiver,
  type WebhookReceiver,
} from '../../webhooks/receiver.js';
import { secretFingerprint } from '../../webhooks/secret.js';
import type { CliIo } from '../io.js';
import { createLogger } from '../logging.js';
import { untilSignalled } from '../signals.js';
import { secretInputOptions, webhookSecretsFrom } from './secret-input.js';

/** The port `payouts webhooks listen` uses when --port is not given (the sandbox's is 8787). */
export const DEFAULT_LISTEN_PORT = 8788;

export interface WebhooksListenOptions {
  host: string;
  port: number;
  path: string;
  /** JSONL file of events received (none: nothing is recorded). */
  eventsFile: string | undefined;
  /** Current secret first, then any previous one still accepted. */
  secrets: string[];
  /** Resolves when the receiver should stop; SIGINT or SIGTERM by default. */
  stopSignal?: Promise<void>;
  /** Told the running receiver (tests use its URL). */
  onListening?: (receiver: WebhookReceiver) => void;
}

/** `payouts webhooks listen`: runs the receiver until stopped, one log line per event. */
export async function webhooksListenCommand(options: WebhooksListenOptions, io: CliIo): Promise<number> {
  const logger = createLogger({ stderr: io.stderr });
  const receiver = await startReceiver({
    host: options.host,
    port: options.port,
    path: options.path,
    secrets: options.secrets,
    eventsFile: options.eventsFile,
    onEvent: (record) => logger.info(eventFields(record), 'webhook event'),
    onNotice: (notice) => logNotice(logger, notice),
  });
  logger.info(
    {
      url: receiver.url,
      events: options.eventsFile ?? null,
      eventsAlreadyRecorded: receiver.stats.loaded,
      secretFingerprints: options.secrets.map(secretFingerprint),
    },
    'webhook receiver listening',
  );
  if (!isLoopbackHost(options.host)) {
    logger.warn(
      { host: options.host },
      'serving plain HTTP beyond loopback: the service must reach it through an HTTPS front',
    );
  }
  if (options.eventsFile === undefined) {
    logger.warn('no --events file: events are only logged, and duplicates are caught only until it stops');
  }
  options.onListening?.(receiver);
  await (options.stopSignal ?? untilSignalled());
  await receiver.close();
  logger.info({ ...receiver.stats }, 'webhook receiver stopped');
  logger.flush();
  return 0;
}

/** Declares `listen` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function listenCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'listen',
    'receive webhook events: verify, de-duplicate, record them (--events) and log one line each',
    (c) =>
      secretInputOptions(c)
        .option('port', {
          type: 'number',
          default: DEFAULT_LISTEN_PORT,
          describe: 'TCP port (0: any free one)',
        })
        .option('host', {
          type: 'string',
          default: RECEIVER_DEFAULTS.host,
          describe: 'interface to listen on',
        })
        .option('path', {
          type: 'string',
          default: RECEIVER_DEFAULTS.path,
          describe: 'request path the service posts to',
        })
        .option('events', {
          type: 'string',
          describe: 'JSONL file to append each new event to (used by reconciliation)',
        }),
    async (args) => {
      setExit(
        await webhooksListenCommand(
          {
            host: args.host,
            port: portOf(args.port),
            path: args.path,
            eventsFile: args.events === undefined ? undefined : path.resolve(io.cwd, args.events),
            secrets: await webhookSecretsFrom(args, io),
          },
          io,
        ),
      );
    },
  );
}

function portOf(port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${String(port)}`);
  }
  return port;
}

/** What a log line shows of an event: no payment details beyond status and reference. */
function eventFields(record: EventRecord): Record<string, unknown> {
  const { event } = record;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    operation: event.operation,
    resourceId: event.resourceId,
    success: event.success,
    status: text(event.data['status']),
    reference: text(event.data['reference']),
    message: event.message ?? undefined,
  };
}

/** One log line per notice; the logger masks digit runs and redacts secrets in every string. */
function logNotice(logger: Logger, notice: ReceiverNotice): void {
  switch (notice.kind) {
    case 'duplicate':
      logger.info(
        { operation: notice.operation, resourceId: notice.resourceId },
        'duplicate delivery ignored',
      );
      return;
    case 'rejected':
      logger.warn(
        { status: notice.status, reason: notice.reason, remoteAddress: notice.remoteAddress },
        'delivery refused',
      );
      return;
    case 'failed':
      logger.error(
        { error: notice.error instanceof Error ? notice.error.message : String(notice.error) },
        notice.reason,
      );
      return;
    case 'bad-line':
      logger.warn(
        { file: notice.file, line: notice.line, problem: notice.problem },
        'events file line skipped',
      );
      return;
  }
}
