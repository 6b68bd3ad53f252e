/**
 * `--push-metrics URL`: the metrics pushed to a Prometheus Pushgateway, job `payouts`, grouped
 * by command and service origin (docs/container.md "Signals for cron"). The origin holds `/`,
 * so it takes the gateway's base64 form of a grouping value (`origin@base64/...`).
 *
 * Which verb: PUT replaces the whole group, POST only the metrics (by name) it carries. A
 * success PUTs everything, its last success included: nothing of the runs before it is left.
 * A failed run must leave the last success standing, so it POSTs and never carries that metric;
 * every other metric it carries whole, which replaces what the run before left under the same
 * name (rows per status carry every status, 0 where none). An amount is the one name a failed
 * run may have nothing of (it ended before reading a row), and the gateway keeps a name that a
 * POST carries without samples: so the failed run first reads the currencies the group holds
 * and carries each of them, 0 where it had none, and no amount of the run before survives.
 */
import { EXIT } from '../errors.js';
import { accepted, send } from './http.js';
import { type CronNumbers, exposition, LAST_SUCCESS, metricFamilies } from './metrics.js';

/** The gateway's job for payouts' metrics. */
export const PUSH_JOB = 'payouts';

/** The content type of the text exposition format (its parameters written without spaces). */
const TEXT_FORMAT = 'text/plain;version=0.0.4;charset=utf-8';

/** The URL of the group of `command` and `origin` on the gateway at `base`. */
export function groupUrl(base: URL, command: string, origin: string): URL {
  const url = new URL(base);
  const prefix = url.pathname.replace(/\/+$/, '');
  // The gateway reads an empty value in its base64 form as "=".
  const value = origin === '' ? '=' : Buffer.from(origin, 'utf8').toString('base64url');
  url.pathname = `${prefix}/metrics/job/${PUSH_JOB}/command/${command}/origin@base64/${value}`;
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * Pushes the numbers of a command's end; throws what failed (an answer not 2xx is an error
 * naming its status). `signal` is the signals' deadline.
 */
export async function pushMetrics(
  base: URL,
  origin: string,
  numbers: CronNumbers,
  signal: AbortSignal,
): Promise<void> {
  const group = groupUrl(base, numbers.command, origin);
  const success = numbers.exitCode === EXIT.ok;
  const standing = success ? [] : await currenciesStanding(base, numbers.command, origin, signal);
  const families = metricFamilies(success ? numbers : { ...numbers, lastSuccess: undefined }, standing);
  const text = exposition(families.filter((f) => success || f.name !== LAST_SUCCESS));
  const answer = await send(group, success ? 'PUT' : 'POST', signal, {
    contentType: TEXT_FORMAT,
    data: text,
  });
  if (!accepted(answer))
    throw new Error(`the gateway answered ${answer.status}${answer.text ? `: ${answer.text.trim()}` : ''}`);
}

/**
 * The currencies of the amounts the gateway holds in the group, from its API; none when it
 * cannot say (the push still goes: only a currency the run lacks could then stay).
 */
async function currenciesStanding(
  base: URL,
  command: string,
  origin: string,
  signal: AbortSignal,
): Promise<string[]> {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v1/metrics`;
  const answer = await send(url, 'GET', signal, undefined, API_ANSWER_KEPT).catch(() => undefined);
  if (answer === undefined || !accepted(answer)) return [];
  return currenciesIn(answer.text, command, origin);
}

/** How much of the gateway's API answer is read: a gateway of many groups says a lot. */
const API_ANSWER_KEPT = 8 * 1024 * 1024;

/** The currencies of `payouts_amount` in the group of `command` and `origin` of an API answer. */
export function currenciesIn(json: string, command: string, origin: string): string[] {
  let answer: unknown;
  try {
    answer = JSON.parse(json);
  } catch {
    return [];
  }
  const groups = (answer as { data?: unknown }).data;
  if (!Array.isArray(groups)) return [];
  const currencies = new Set<string>();
  for (const group of groups as GatewayGroup[]) {
    const labels = group?.labels ?? {};
    if (labels['job'] !== PUSH_JOB || labels['command'] !== command || (labels['origin'] ?? '') !== origin)
      continue;
    for (const metric of group.payouts_amount?.metrics ?? []) {
      const currency = metric?.labels?.['currency'];
      if (typeof currency === 'string' && currency !== '') currencies.add(currency);
    }
  }
  return [...currencies];
}

/** A group as the gateway's API gives it, as far as read here. */
interface GatewayGroup {
  labels?: Record<string, string>;
  payouts_amount?: { metrics?: { labels?: Record<string, string> }[] };
}
