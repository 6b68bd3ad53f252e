/**
 * The metrics of a run or a reconcile in Prometheus' text exposition format (docs/container.md
 * "Signals for cron"): gauges only, HELP and TYPE for each, no sample timestamps, amounts in
 * decimal units straight from minor units (rows/money.ts), never through a float. A few lines
 * of text are written here rather than through prom-client: its global registry and
 * collectors are made for a process that is scraped, and a run writes one set of numbers once.
 */
import { formatMinor } from '../rows/money.js';

/** The commands that send signals for cron. */
export type CronCommand = 'run' | 'reconcile';

/** What the end of a command says in numbers. */
export interface CronNumbers {
  command: CronCommand;
  exitCode: number;
  /** When the command began and ended, in milliseconds since the epoch. */
  startedMs: number;
  endedMs: number;
  /** Rows (reconcile: payouts) per status, every status of the command. */
  rows: ReadonlyMap<string, number>;
  /** Amounts per status, then currency, in minor units. */
  amounts: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
  /** The last success's time in seconds, as text: now for a success, else the one kept, if any. */
  lastSuccess?: string;
}

/** One metric: its name, what it says, and its samples (label pairs and the value as text). */
export interface MetricFamily {
  name: string;
  help: string;
  samples: { labels: readonly (readonly [string, string])[]; value: string }[];
}

/** The name of the metric a failed run never sends (its previous value stands). */
export const LAST_SUCCESS = 'payouts_last_success_timestamp_seconds';

/**
 * The metrics of one command's end. An amount is given for every status of every currency the
 * run saw, and of `alsoCurrencies` (0 where none): a status that had money before and has none
 * now reads 0, not its old value.
 */
export function metricFamilies(numbers: CronNumbers, alsoCurrencies: readonly string[] = []): MetricFamily[] {
  const command = ['command', numbers.command] as const;
  const seen = [...numbers.amounts.values()].flatMap((m) => [...m.keys()]);
  const currencies = [...new Set([...seen, ...alsoCurrencies])].sort();
  const families: MetricFamily[] = [
    {
      name: 'payouts_rows',
      help: 'Rows of the last run per status (reconcile: payouts per outcome).',
      samples: [...numbers.rows].map(([status, n]) => ({
        labels: [command, ['status', status]],
        value: String(n),
      })),
    },
    {
      name: 'payouts_amount',
      help: 'Amount of the last run per status and currency, in decimal units.',
      samples: [...numbers.rows.keys()].flatMap((status) =>
        currencies.map((currency) => ({
          labels: [command, ['status', status], ['currency', currency]],
          value: formatMinor(numbers.amounts.get(status)?.get(currency) ?? 0n),
        })),
      ),
    },
    gauge('payouts_exit_code', 'Exit code of the last run.', command, String(numbers.exitCode)),
    gauge(
      'payouts_duration_seconds',
      'How long the last run took, in seconds.',
      command,
      secondsOf(numbers.endedMs - numbers.startedMs),
    ),
    gauge(
      'payouts_last_run_timestamp_seconds',
      'When the last run ended, in seconds since the epoch.',
      command,
      secondsOf(numbers.endedMs),
    ),
  ];
  if (numbers.lastSuccess !== undefined)
    families.push(
      gauge(
        LAST_SUCCESS,
        'When the last run that exited 0 ended, in seconds since the epoch.',
        command,
        numbers.lastSuccess,
      ),
    );
  return families;
}

function gauge(name: string, help: string, command: readonly [string, string], value: string): MetricFamily {
  return { name, help, samples: [{ labels: [command], value }] };
}

/** Milliseconds as decimal seconds ("12.345"), exactly. */
export function secondsOf(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  return `${Math.floor(whole / 1000)}.${String(whole % 1000).padStart(3, '0')}`;
}

/** The families as Prometheus' text exposition format: HELP, TYPE gauge, then the samples. */
export function exposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} gauge`);
    for (const { labels, value } of family.samples) {
      const pairs = labels.map(([name, text]) => `${name}="${escapeLabelValue(text)}"`);
      lines.push(`${family.name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${value}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A label value as the format writes it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text as the format writes it: backslash and line feed escaped. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
