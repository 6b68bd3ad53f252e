/** `payouts webhooks listen`: receive, verify, de-duplicate and record webhook events. */
import path from 'node:path';
import type { Logger } from 'pino';
import type { Argv } from 'yargs';
import { STOP_GRACE_MS } from '../../batch/stop-grace.js';
import { type Clock, systemClock, timersOf } from '../../clock.js';
import { UsageError } from '../../errors.js';
import {
  REGISTER_ENV,
  type RegisterSource,
  registerLocationText,
  registerSourceOf,
  shownLocation,
} from '../../register/location.js';
import { openRegisterUntilStopped } from '../../register/open.js';
import type { Register, EventRecord as RegisterEvent, Settlement } from '../../register/types.js';
import { isLoopbackHost } from '../../webhooks/callback-url.js';
import type { EventRecord } from '../../webhooks/events-file.js';
import {
  RECEIVER_DEFAULTS,
  type ReceiverNotice,
  startReceiver,
  type WebhookReceiver,
} from '../../webhooks/receiver.js';
import { transactionOutcomeOf } from '../../webhooks/reconcile.js';
import { secretFingerprint } from '../../webhooks/secret.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type Ending, lifecycleOf } from '../lifecycle.js';
import { type CommandLog, type LogArgs, logOptions, logSettingsOf, openCommandLog } from '../logging.js';
import { registerOption } from '../options.js';
import { untilStopped } from '../signals.js';
import { secretInputOptions, webhookSecretsFrom } from './secret-input.js';

/** The port `payouts webhooks listen` uses when --port is not given (the sandbox's is 8787). */
export const DEFAULT_LISTEN_PORT = 8788;

export interface WebhooksListenOptions {
  host: string;
  port: number;
  path: string;
  /** JSONL file of events received, besides the register (none: only the register). */
  eventsFile: string | undefined;
  /** The register the events are recorded in (README `--register`). */
  register: string;
  /** Which of --register, PAYOUTS_REGISTER and the default named it. */
  registerFrom?: RegisterSource;
  /** Current secret first, then any previous one still accepted. */
  secrets: string[];
  /** Resolves when the receiver should stop; SIGINT or SIGTERM by default. */
  stopSignal?: Promise<void>;
  /** Told the running receiver (tests use its URL). */
  onListening?: (receiver: WebhookReceiver) => void;
  /** The receiver's clock and timers, and the stop's grace; the wall clock and Node's by default. */
  clock?: Clock;
}

/** `payouts webhooks listen`: runs the receiver until stopped; resolves to the exit code. */
export function webhooksListenCommand(
  options: WebhooksListenOptions,
  io: CliIo,
  log: CommandLog = receiverLog({}, io),
): Promise<number> {
  return lifecycleOf(log, (log, atEnd) => listen(options, io, log, atEnd));
}

/**
 * The receiver's log: a receiver's events are what it shows a person watching it, so its
 * records are `info` at a terminal too, unless --log-level says otherwise.
 */
function receiverLog(args: LogArgs, io: CliIo): CommandLog {
  return openCommandLog(logSettingsOf({ ...args, 'log-level': args['log-level'] ?? 'info' }, io), io);
}

/** Serves until stopped, one log line per event; says how it ended (lifecycle.ts). */
async function listen(
  options: WebhooksListenOptions,
  io: CliIo,
  log: CommandLog,
  atEnd: (cleanup: () => unknown) => void,
): Promise<Ending> {
  const { logger } = log;
  // A log file that fails while serving (disk full) is said at once on stderr; the receiver goes
  // on: the events it records in the register are the outcomes of payments, its log lines are not.
  log.onFailure((failure) =>
    io.stderr.write(
      `payouts: ${failure.message}. Events are still verified and recorded in the register, without log lines\n`,
    ),
  );
  // Listening for the signals first: one that follows the "listening" line at once stops cleanly.
  const stop = untilStopped(options.stopSignal);
  atEnd(() => stop.dispose());
  // Once stopped, the register is not waited for past the stop's grace: a write still waiting
  // through an outage (its sender already answered 503) must not hold the exit (10 s).
  const abandon = new AbortController();
  const opened = await openRegister(options, logger, stop.stopped, abandon.signal);
  // Stopping is how a receiver ends: a signal here is no interrupted run (exit 0).
  if ('stopped' in opened) {
    return {
      exitCode: outcomeCode(true),
      finished: {
        msg: `webhook receiver stopped: ${opened.stopped}`,
        fields: { register: shownLocation(options.register) },
      },
    };
  }
  const { register } = opened;
  let receiver: WebhookReceiver | undefined;
  try {
    receiver = await startListening(options, logger, register);
  } finally {
    if (receiver === undefined) await register.close();
  }
  sayListening(options, logger, receiver, register);
  options.onListening?.(receiver);
  await stop.stopped;
  const cancelGrace = timersOf(options.clock ?? systemClock).once(STOP_GRACE_MS, () => abandon.abort());
  await receiver.close();
  // Every request is answered: what the register has not committed by now was answered 503.
  abandon.abort();
  cancelGrace();
  await register.close();
  return {
    exitCode: outcomeCode(true),
    finished: { msg: 'webhook receiver stopped', fields: { ...receiver.stats } },
  };
}

/**
 * The register events go into, so that confirmed outcomes show in `payouts status` and in the
 * next results file without --events; or how the wait for it was stopped.
 */
function openRegister(
  options: WebhooksListenOptions,
  logger: Logger,
  stopped: Promise<void>,
  abandon: AbortSignal,
) {
  return openRegisterUntilStopped(options.register, {
    from: options.registerFrom,
    warn: (message) => logger.warn(message),
    abandon,
    stopped,
    onOutage: (words) =>
      logger.warn(`the register does not answer (${words}): events are answered 503 until it does`),
  });
}

/** The "listening" line, with a warning when plain HTTP is served beyond loopback. */
function sayListening(
  options: WebhooksListenOptions,
  logger: Logger,
  receiver: WebhookReceiver,
  register: Register,
): void {
  logger.info(
    {
      url: receiver.url,
      register: register.location,
      events: options.eventsFile ?? null,
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
}

/** The receiver, recording each new event in the register (and the events file, if given). */
function startListening(options: WebhooksListenOptions, logger: Logger, register: Register) {
  return startReceiver({
    host: options.host,
    port: options.port,
    path: options.path,
    secrets: options.secrets,
    eventsFile: options.eventsFile,
    clock: options.clock,
    onEvent: (record) => logger.info(eventFields(record), 'webhook event'),
    onNotice: (notice) => logNotice(logger, notice),
    persist: (record) => register.recordEvent(registerEventOf(record), settlementOf(record)),
    // Ready while the register takes a write now (a read goes through a write lock another
    // process holds): what a readiness probe asks.
    ready: () => register.ready(),
  });
}

/** A received event as the register keeps it. */
function registerEventOf(record: EventRecord): RegisterEvent {
  const { event } = record;
  return {
    integratorId: event.integratorId,
    resourceId: event.resourceId,
    operation: event.operation,
    success: event.success,
    message: event.message,
    occurredAt: event.createdAt,
    receivedAt: record.receivedAt,
    payload: JSON.stringify(event),
  };
}

/** What a settling event (TRANSACTION_COMPLETED / _FAILED) says of its transaction. */
function settlementOf(record: EventRecord): Settlement | undefined {
  const settled = transactionOutcomeOf(record.event, record.receivedAt);
  if (settled === undefined) return undefined;
  return {
    transactionId: settled.transactionId,
    state: settled.outcome.status,
    error: settled.outcome.status === 'failed' ? (settled.outcome.message ?? 'the transaction failed') : null,
  };
}

/** Declares `listen` on the `webhooks` builder; its handler passes the exit code to `setExit`. */
export function listenCommand<T>(y: Argv<T>, io: CliIo, setExit: (code: number) => void): Argv<T> {
  return y.command(
    'listen',
    'receive webhook events: verify, de-duplicate, record them (--events) and log one line each',
    (c) =>
      registerOption(
        logOptions(secretInputOptions(c)),
        `the register the events are recorded in (default ${REGISTER_ENV}, else the state directory)`,
      )
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
          describe: 'JSONL file to append each new event to, besides the register',
        }),
    async (args) => {
      const options = {
        host: args.host,
        port: portOf(args.port),
        path: args.path,
        eventsFile: args.events === undefined ? undefined : path.resolve(io.cwd, args.events),
        register: registerLocationText(args.register, io.env, io.cwd),
        registerFrom: registerSourceOf(args.register, io.env),
        secrets: await webhookSecretsFrom(args, io),
      };
      setExit(await webhooksListenCommand(options, io, receiverLog(args as LogArgs, io)));
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
    case 'refused':
      logger.warn({ seconds: notice.seconds, counts: notice.counts }, 'deliveries refused');
      return;
    case 'unrecorded':
      logger.warn(
        notice.error === undefined
          ? {}
          : { error: notice.error instanceof Error ? notice.error.message : String(notice.error) },
        `${notice.reason}: answered 503, the service delivers it again`,
      );
      return;
    case 'failed':
      logger.error(
        { error: notice.error instanceof Error ? notice.error.message : String(notice.error) },
        notice.reason,
      );
      return;
  }
}
