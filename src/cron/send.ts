/**
 * The signals for cron at a command's end (docs/container.md "Signals for cron"): the metrics
 * file, the push to a Pushgateway and the notification, sent together once the command knows
 * how it ended, whatever that was (exit 2 included: a missing volume must raise an alert).
 * Each is best effort: one that fails is one `warn` record, never another exit code, and all of
 * them share one deadline, so they never hold the end back by more than it.
 */
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.js';
import { EXIT } from '../errors.js';
import { accepted, failureInWords, send } from './http.js';
import { type CronCommand, type CronNumbers, exposition, metricFamilies, secondsOf } from './metrics.js';
import { lastSuccessIn, writeAtomically } from './metrics-file.js';
import { notifyText } from './notify-text.js';
import { pushMetrics } from './pushgateway.js';

/** How long the signals may add to a command's end (README "Signals for cron"). */
export const CRON_DEADLINE_MS = 5_000;

/** Where a command's signals go, as its options or environment named them. */
export interface CronTargets {
  /** `--metrics-file PATH`, resolved. */
  metricsFile?: string;
  /** `--push-metrics URL`: the gateway's address. */
  pushUrl?: URL;
  /** `--notify URL`: the incoming webhook. */
  notifyUrl?: URL;
}

/** What a command's end says to cron: its counts, and its `--json` summary object. */
export interface CronEnd {
  exitCode: number;
  /** Rows (reconcile: payouts) per status; none when the command ended before counting. */
  rows?: ReadonlyMap<string, number>;
  /** Amounts per status, then currency, in minor units. */
  amounts?: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
  /** The message of the error that ended the command, if one did. */
  error?: string;
  /** Writes the `--json` summary object with `extra` fields added (the notification's text). */
  writeSummary(out: NodeJS.WritableStream, extra: Record<string, unknown>): Promise<void>;
}

/** The signals of one command, set up once its options are read. */
export interface CronSignals {
  command: CronCommand;
  /**
   * Sends them all within 5 s, or `leftMs` when less is left (after a stop signal); logs one
   * warning for each that failed.
   */
  send(end: CronEnd, logger: Logger, leftMs?: number): Promise<void>;
}

/** What the signals need to know before the command's end. */
export interface CronSetup {
  command: CronCommand;
  /** Every status the command counts, in order: each is a row metric, 0 where none. */
  statuses: readonly string[];
  targets: CronTargets;
  /** The service's origin: the gateway groups by it ('' when the command never knew it). */
  origin: string;
  /** What the notification names: the sheet's name (run), the service (reconcile). */
  subject: string;
  clock?: Clock;
}

/** The signals of a command, or undefined when it asked for none. */
export function cronSignals(setup: CronSetup): CronSignals | undefined {
  const { targets } = setup;
  if (!targets.metricsFile && !targets.pushUrl && !targets.notifyUrl) return undefined;
  const clock = setup.clock ?? systemClock;
  const startedMs = clock.now();
  return {
    command: setup.command,
    async send(end, logger, leftMs) {
      const endedMs = clock.now();
      const numbers: CronNumbers = {
        command: setup.command,
        exitCode: end.exitCode,
        startedMs,
        endedMs,
        rows: new Map(setup.statuses.map((s) => [s, end.rows?.get(s) ?? 0])),
        amounts: end.amounts ?? new Map(),
        ...(end.exitCode === EXIT.ok ? { lastSuccess: secondsOf(endedMs) } : {}),
      };
      const deadline = AbortSignal.timeout(
        Math.max(0, Math.min(CRON_DEADLINE_MS, leftMs ?? CRON_DEADLINE_MS)),
      );
      const each: Promise<void>[] = [];
      const attempt = (what: string, where: string, work: () => Promise<void>) =>
        each.push(
          withinDeadline(work, deadline).catch((error: unknown) =>
            warn(logger, what, where, error, deadline),
          ),
        );
      if (targets.metricsFile) {
        const file = targets.metricsFile;
        attempt('the metrics file', file, async () => writeMetricsFile(file, numbers));
      }
      if (targets.pushUrl) {
        const url = targets.pushUrl;
        attempt('the metrics push', url.origin, () => pushMetrics(url, setup.origin, numbers, deadline));
      }
      if (targets.notifyUrl) {
        const url = targets.notifyUrl;
        const text = notifyText({
          command: setup.command,
          subject: setup.subject,
          exitCode: end.exitCode,
          rows: numbers.rows,
          amounts: numbers.amounts,
          ...(end.error !== undefined ? { error: end.error } : {}),
        });
        attempt('the notification', url.origin, () => notify(url, end, text, deadline));
      }
      await Promise.all(each);
    },
  };
}

/** Writes the metrics file; a failed run keeps the last success the file held. */
async function writeMetricsFile(file: string, numbers: CronNumbers): Promise<void> {
  const lastSuccess = numbers.lastSuccess ?? (await lastSuccessIn(file, numbers.command));
  const families = metricFamilies({ ...numbers, ...(lastSuccess !== undefined ? { lastSuccess } : {}) });
  await writeAtomically(file, exposition(families));
}

/** POSTs the summary object with its `text` to the incoming webhook. */
async function notify(url: URL, end: CronEnd, text: string, signal: AbortSignal): Promise<void> {
  const body = new PassThrough();
  // The summary is streamed as --json streams it (a million warned references are no one string);
  // a body the hook never reads is dropped when the request ends, which ends the writing too.
  end.writeSummary(body, { text }).then(
    () => body.end(),
    (error: unknown) => body.destroy(error as Error),
  );
  let answer: Awaited<ReturnType<typeof send>>;
  try {
    answer = await send(url, 'POST', signal, { contentType: 'application/json', data: body });
  } finally {
    if (!body.writableFinished) body.destroy();
  }
  if (!accepted(answer))
    throw new Error(`the hook answered ${answer.status}${answer.text ? `: ${answer.text.trim()}` : ''}`);
}

/** Runs `work`, or rejects when the deadline passes first (a file write on a stalled disk). */
function withinDeadline(work: () => Promise<void>, deadline: AbortSignal): Promise<void> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(deadline.reason);
    deadline.addEventListener('abort', onAbort, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => deadline.removeEventListener('abort', onAbort));
  });
}

/** The one warning of a signal that failed: what, where (an origin or a path), and why. */
function warn(logger: Logger, what: string, where: string, error: unknown, deadline: AbortSignal): void {
  const reason = failureInWords(error, deadline.aborted);
  logger.warn(
    { cron: what, target: where, reason },
    `${what} (${where}) failed: ${reason} - the exit code is unchanged`,
  );
}
