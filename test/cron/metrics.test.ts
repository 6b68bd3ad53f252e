/**
 * The metrics in Prometheus' text format (docs/container.md "Signals for cron"): HELP and TYPE
 * for each, gauges only, no sample timestamps, label values escaped, amounts in decimal units
 * from minor units; the previous last success read back from a file; the gateway's group URL.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type CronNumbers,
  escapeLabelValue,
  exposition,
  metricFamilies,
  secondsOf,
} from '../../src/cron/metrics.js';
import { lastSuccessOf } from '../../src/cron/metrics-file.js';
import { currenciesIn, groupUrl } from '../../src/cron/pushgateway.js';

const NUMBERS: CronNumbers = {
  command: 'run',
  exitCode: 1,
  startedMs: 1_795_000_000_000,
  endedMs: 1_795_000_012_345,
  rows: new Map([
    ['submitted', 2],
    ['failed', 1],
    ['skipped', 0],
  ]),
  amounts: new Map([
    ['submitted', new Map([['USD', 123_456_789_012_345_678n]])],
    ['failed', new Map([['EUR', 5n]])],
  ]),
};

describe('the text exposition format', () => {
  it('says every metric with HELP and TYPE gauge, amounts in decimal units, no timestamps', () => {
    expect(exposition(metricFamilies(NUMBERS))).toMatchInlineSnapshot(`
      "# HELP payouts_rows Rows of the last run per status (reconcile: payouts per outcome).
      # TYPE payouts_rows gauge
      payouts_rows{command="run",status="submitted"} 2
      payouts_rows{command="run",status="failed"} 1
      payouts_rows{command="run",status="skipped"} 0
      # HELP payouts_amount Amount of the last run per status and currency, in decimal units.
      # TYPE payouts_amount gauge
      payouts_amount{command="run",status="submitted",currency="EUR"} 0.00
      payouts_amount{command="run",status="submitted",currency="USD"} 1234567890123456.78
      payouts_amount{command="run",status="failed",currency="EUR"} 0.05
      payouts_amount{command="run",status="failed",currency="USD"} 0.00
      payouts_amount{command="run",status="skipped",currency="EUR"} 0.00
      payouts_amount{command="run",status="skipped",currency="USD"} 0.00
      # HELP payouts_exit_code Exit code of the last run.
      # TYPE payouts_exit_code gauge
      payouts_exit_code{command="run"} 1
      # HELP payouts_duration_seconds How long the last run took, in seconds.
      # TYPE payouts_duration_seconds gauge
      payouts_duration_seconds{command="run"} 12.345
      # HELP payouts_last_run_timestamp_seconds When the last run ended, in seconds since the epoch.
      # TYPE payouts_last_run_timestamp_seconds gauge
      payouts_last_run_timestamp_seconds{command="run"} 1795000012.345
      "
    `);
  });

  it('says the last success only when it is known', () => {
    const text = exposition(metricFamilies({ ...NUMBERS, lastSuccess: '1794000000.5' }));
    expect(text).toContain('# TYPE payouts_last_success_timestamp_seconds gauge\n');
    expect(text).toContain('payouts_last_success_timestamp_seconds{command="run"} 1794000000.5\n');
    expect(exposition(metricFamilies(NUMBERS))).not.toContain('payouts_last_success');
  });

  it('gives every status of a currency the gateway still holds, at 0', () => {
    const text = exposition(metricFamilies({ ...NUMBERS, amounts: new Map() }, ['MXN']));
    expect(text.match(/^payouts_amount\{.*$/gm)).toEqual([
      'payouts_amount{command="run",status="submitted",currency="MXN"} 0.00',
      'payouts_amount{command="run",status="failed",currency="MXN"} 0.00',
      'payouts_amount{command="run",status="skipped",currency="MXN"} 0.00',
    ]);
  });

  it('escapes backslash, double quote and line feed in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const text = exposition([
      {
        name: 'payouts_rows',
        help: 'odd \\ help\nline',
        samples: [{ labels: [['status', 'x"y']], value: '1' }],
      },
    ]);
    expect(text).toBe(
      '# HELP payouts_rows odd \\\\ help\\nline\n# TYPE payouts_rows gauge\npayouts_rows{status="x\\"y"} 1\n',
    );
  });

  it('writes milliseconds as exact decimal seconds', () => {
    expect(secondsOf(0)).toBe('0.000');
    expect(secondsOf(1_005)).toBe('1.005');
    expect(secondsOf(1_795_000_000_001)).toBe('1795000000.001');
  });

  it.skipIf(!existsSync('/usr/bin/promtool'))('has nothing for promtool check metrics to say', () => {
    const text = exposition(metricFamilies({ ...NUMBERS, lastSuccess: '1794000000.5' }));
    const said = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(said).toBe('');
  });
});

describe('the previous last success of a metrics file', () => {
  const FILE = [
    '# TYPE payouts_last_success_timestamp_seconds gauge',
    'payouts_last_success_timestamp_seconds{command="reconcile"} 17.5',
    'payouts_last_success_timestamp_seconds{command="run"} 1794000000.123',
  ].join('\n');

  it('is the value of the command asked for', () => {
    expect(lastSuccessOf(FILE, 'run')).toBe('1794000000.123');
    expect(lastSuccessOf(FILE, 'reconcile')).toBe('17.5');
  });

  it('is none in a file that holds none, or holds something else there', () => {
    expect(lastSuccessOf('', 'run')).toBeUndefined();
    expect(lastSuccessOf('payouts_last_success_timestamp_seconds{command="run"} NaN', 'run')).toBeUndefined();
  });
});

describe("the gateway's group", () => {
  it('is job payouts, the command, and the origin in base64 (it holds slashes)', () => {
    const url = groupUrl(new URL('https://gateway.example.com/prefix/'), 'run', 'https://api.example.com');
    expect(url.href).toBe(
      `https://gateway.example.com/prefix/metrics/job/payouts/command/run/origin@base64/${Buffer.from('https://api.example.com').toString('base64url')}`,
    );
    expect(groupUrl(new URL('http://127.0.0.1:9091'), 'reconcile', '').pathname).toBe(
      '/metrics/job/payouts/command/reconcile/origin@base64/=',
    );
  });

  it("reads the currencies of the group's amounts from the gateway's API", () => {
    const amount = (labels: Record<string, string>) => ({ labels, value: '1' });
    const answer = JSON.stringify({
      status: 'success',
      data: [
        {
          labels: { job: 'payouts', command: 'run', origin: 'https://a' },
          payouts_amount: { metrics: [amount({ currency: 'USD' }), amount({ currency: 'EUR' })] },
        },
        {
          labels: { job: 'payouts', command: 'run', origin: 'https://b' },
          payouts_amount: { metrics: [amount({ currency: 'MXN' })] },
        },
        {
          labels: { job: 'payouts', command: 'reconcile', origin: 'https://a' },
          payouts_amount: { metrics: [amount({ currency: 'BRL' })] },
        },
      ],
    });
    expect(currenciesIn(answer, 'run', 'https://a').sort()).toEqual(['EUR', 'USD']);
    expect(currenciesIn('not json', 'run', 'https://a')).toEqual([]);
  });
});
