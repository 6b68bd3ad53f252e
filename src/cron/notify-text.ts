/**
 * The `text` of a notification: one or two lines a person reads in a chat channel (Slack,
 * Mattermost and Teams incoming webhooks show `text`): what ran on what, how it ended in words,
 * the counts, what was sent, and what needs attention.
 */
import { formatAmountForPeople } from '../batch/summary.js';
import { EXIT, EXIT_INTERNAL } from '../errors.js';
import { scrub } from '../redact.js';
import type { CronCommand } from './metrics.js';

/** What the text says of a command's end. */
export interface NotifyFacts {
  command: CronCommand;
  /** The sheet's name (run), or the service's origin (reconcile); empty when not known. */
  subject: string;
  exitCode: number;
  /** Rows (reconcile: payouts) per status, in the command's order. */
  rows: ReadonlyMap<string, number>;
  /** Amounts per status, then currency, in minor units. */
  amounts: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
  /** The message of the error that ended the command, if one did. */
  error?: string;
}

/** Each exit code in words (README "Exit codes"). */
const OUTCOME_IN_WORDS: Readonly<Record<number, string>> = {
  [EXIT.ok]: 'succeeded',
  [EXIT.rowsNotOk]: 'failed: rows need attention',
  [EXIT.usage]: 'failed before sending anything: usage, configuration, sheet or register',
  [EXIT.auth]: 'failed: the service refused the credentials',
  [EXIT.guard]: 'failed: a batch guard refused, nothing was sent',
  [EXIT.interrupted]: 'interrupted by a signal: run again to resume',
  [EXIT.unavailable]: 'failed: the service or storage was unavailable, run again later',
  [EXIT_INTERNAL]: 'failed on a bug in payouts',
};

/** What each command counts, which statuses it calls sent (and the word), and which need a look. */
const READING: Readonly<
  Record<
    CronCommand,
    { noun: string; sent: readonly string[]; sentWord: string; attention: readonly string[] }
  >
> = {
  run: {
    noun: 'row',
    sent: ['submitted', 'completed'],
    sentWord: 'sent',
    attention: ['invalid', 'failed', 'unknown'],
  },
  reconcile: { noun: 'payout', sent: ['completed'], sentWord: 'completed', attention: ['failed', 'unknown'] },
};

/** The exit code in words, with the code. */
export function outcomeInWords(exitCode: number): string {
  return `${OUTCOME_IN_WORDS[exitCode] ?? 'ended'} (exit ${exitCode})`;
}

/** The notification's text: the first line always, the second when something needs a look. */
export function notifyText(facts: NotifyFacts): string {
  const reading = READING[facts.command];
  const total = [...facts.rows.values()].reduce((a, b) => a + b, 0);
  const counts = [...facts.rows]
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n.toLocaleString('en-US')} ${status}`);
  const of = facts.subject === '' ? '' : ` of ${facts.subject}`;
  const first = [
    `payouts ${facts.command}${of}: ${outcomeInWords(facts.exitCode)}`,
    total === 0 ? `no ${reading.noun}s` : `${countOf(total, reading.noun)}: ${counts.join(', ')}`,
    sentTotals(facts),
  ];
  const lines = [first.join(' - ')];
  const attention = reading.attention.filter((s) => (facts.rows.get(s) ?? 0) > 0);
  const second: string[] = [];
  if (attention.length > 0) {
    const n = attention.reduce((sum, s) => sum + (facts.rows.get(s) ?? 0), 0);
    const which = attention.map((s) => `${(facts.rows.get(s) ?? 0).toLocaleString('en-US')} ${s}`);
    second.push(`${countOf(n, reading.noun)} need${n === 1 ? 's' : ''} attention (${which.join(', ')})`);
  }
  if (facts.error !== undefined) second.push(facts.error);
  if (second.length > 0) lines.push(second.join(' - '));
  // A message may quote a cell: what leaves for a chat channel is scrubbed as a log is.
  return scrub(lines.join('\n'));
}

/** "sent USD 1,250.00, EUR 80.00", or "nothing sent". */
function sentTotals(facts: NotifyFacts): string {
  const { sent, sentWord: word } = READING[facts.command];
  const totals = new Map<string, bigint>();
  for (const status of sent)
    for (const [currency, minor] of facts.amounts.get(status) ?? [])
      totals.set(currency, (totals.get(currency) ?? 0n) + minor);
  const shown = [...totals]
    .filter(([, minor]) => minor > 0n)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, minor]) => `${currency} ${formatAmountForPeople(minor)}`);
  return shown.length === 0 ? `nothing ${word}` : `${word} ${shown.join(', ')}`;
}

function countOf(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : `${noun}s`}`;
}
