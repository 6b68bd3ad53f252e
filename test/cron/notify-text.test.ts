/**
 * The notification's text (docs/container.md "Signals for cron"): one or two lines a person
 * reads in a chat channel: the sheet, the exit code in words, the counts, what was sent, and
 * what needs attention.
 */
import { describe, expect, it } from 'vitest';
import { type NotifyFacts, notifyText, outcomeInWords } from '../../src/cron/notify-text.js';

const RUN: NotifyFacts = {
  command: 'run',
  subject: 'payroll-2026-11.csv',
  exitCode: 0,
  rows: new Map([
    ['valid', 0],
    ['invalid', 0],
    ['submitted', 48],
    ['completed', 1],
    ['failed', 0],
    ['unknown', 0],
    ['skipped', 2],
  ]),
  amounts: new Map([
    ['submitted', new Map([['USD', 24_381_100n]])],
    [
      'completed',
      new Map([
        ['USD', 100n],
        ['EUR', 12_345n],
      ]),
    ],
    ['skipped', new Map([['USD', 999n]])],
  ]),
};

describe('the text of a notification', () => {
  it('says a success in one line: the sheet, the outcome, the counts, the totals sent', () => {
    expect(notifyText(RUN)).toBe(
      'payouts run of payroll-2026-11.csv: succeeded (exit 0) - 51 rows: 48 submitted, 1 completed, 2 skipped - sent EUR 123.45, USD 243,812.00',
    );
  });

  it('says on a second line how many rows need attention, and which', () => {
    const rows = new Map(RUN.rows);
    rows.set('invalid', 1);
    rows.set('failed', 2);
    const text = notifyText({ ...RUN, exitCode: 1, rows });
    expect(text.split('\n')).toEqual([
      'payouts run of payroll-2026-11.csv: failed: rows need attention (exit 1) - 54 rows: 1 invalid, 48 submitted, 1 completed, 2 failed, 2 skipped - sent EUR 123.45, USD 243,812.00',
      '3 rows need attention (1 invalid, 2 failed)',
    ]);
  });

  it('says a run that never started, and why', () => {
    const text = notifyText({
      ...RUN,
      exitCode: 2,
      rows: new Map([...RUN.rows.keys()].map((s) => [s, 0])),
      amounts: new Map(),
      error: 'there is no payouts register at /data/register.db (named by PAYOUTS_REGISTER): no such file',
    });
    expect(text.split('\n')).toEqual([
      'payouts run of payroll-2026-11.csv: failed before sending anything: usage, configuration, sheet or register (exit 2) - no rows - nothing sent',
      'there is no payouts register at /data/register.db (named by PAYOUTS_REGISTER): no such file',
    ]);
  });

  it('says what reconcile learned, of which service', () => {
    const text = notifyText({
      command: 'reconcile',
      subject: 'https://api.example.com',
      exitCode: 1,
      rows: new Map([
        ['completed', 1],
        ['failed', 1],
        ['pending', 0],
      ]),
      amounts: new Map([['completed', new Map([['USD', 150n]])]]),
    });
    expect(text.split('\n')).toEqual([
      'payouts reconcile of https://api.example.com: failed: rows need attention (exit 1) - 2 payouts: 1 completed, 1 failed - completed USD 1.50',
      '1 payout needs attention (1 failed)',
    ]);
  });

  it('never shows an account number or a secret an error message quoted', () => {
    const text = notifyText({ ...RUN, exitCode: 2, error: 'account 000123456789 password=hunter2 refused' });
    expect(text).not.toContain('000123456789');
    expect(text).not.toContain('hunter2');
  });

  it('has words for every exit code', () => {
    for (const code of [0, 1, 2, 3, 4, 5, 6, 70]) expect(outcomeInWords(code)).not.toMatch(/^ended/);
    expect(outcomeInWords(99)).toBe('ended (exit 99)');
  });
});
