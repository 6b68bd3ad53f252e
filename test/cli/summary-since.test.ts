/**
 * The human summary's lines on the previous batch (cli/summary.ts): amounts grouped as the
 * totals above them are, while the JSON summary keeps the plain decimals.
 */
import { describe, expect, it } from 'vitest';
import type { SincePrevious } from '../../src/batch/since-previous.js';
import { BatchSummary } from '../../src/batch/summary.js';
import { WarningTally } from '../../src/batch/warnings.js';
import { humanSummary, type SummaryFacts, summaryJson } from '../../src/cli/summary.js';

const since: SincePrevious = {
  batch: { sheet: 'october.csv', at: '2026-10-28T09:15:00.000Z', rows: 1834, chosenBy: 'latest' },
  totals: {
    MXN: { previous: '3150000.00', current: '3149000.50', change: '-999.50' },
    USD: { previous: '1250.00', current: '1251250.00', change: '+1250000.00' },
  },
  missingPayees: [{ name: 'Hans Weber', lastReference: 'OCT-0007', amount: '10000.00', currency: 'USD' }],
  changedAmounts: [
    { name: 'Ana Lima', currency: 'USD', previous: '1200.00', current: '1251250.00', change: '+1250050.00' },
  ],
};

function facts(): SummaryFacts {
  const summary = new BatchSummary();
  summary.count('valid');
  return {
    command: 'validate',
    sheetPath: 'november.csv',
    format: 'csv',
    summary,
    digest: 'a'.repeat(64),
    resultsPath: 'november.results.csv',
    registerPath: 'payouts.db',
    unknownColumns: [],
    samples: [],
    warnings: new WarningTally(false),
    sincePrevious: since,
  };
}

describe('the summary of what changed since the previous batch', () => {
  it('groups the amounts for people, as the totals are', () => {
    const lines = humanSummary(facts());
    const at = lines.indexOf(
      'Since the previous batch (october.csv, 2026-10-28, 1,834 rows: the latest batch paid, no earlier sheet having this name):',
    );
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 5)).toEqual([
      '  MXN 3,150,000.00 then, 3,149,000.50 now (-999.50)',
      '  USD 1,250.00 then, 1,251,250.00 now (+1,250,000.00)',
      '  1 payee paid then and missing now: Hans Weber',
      '  1 payee with another amount, the largest change: Ana Lima 1,200.00 -> 1,251,250.00 USD',
    ]);
  });

  it('names the previous batch in the JSON summary by sheet, time and rows, at the top and under batch', () => {
    const json = JSON.parse(JSON.stringify(summaryJson(facts()))) as {
      sincePrevious: SincePrevious & { sheet: string; at: string; rows: number };
    };
    const { sheet, at, rows, chosenBy } = json.sincePrevious as unknown as {
      chosenBy: string;
    } & typeof json.sincePrevious;
    expect({ sheet, at, rows, chosenBy }).toEqual(json.sincePrevious.batch);
    expect(Object.keys(json.sincePrevious)).toEqual([
      'sheet',
      'at',
      'rows',
      'chosenBy',
      'batch',
      'totals',
      'missingPayees',
      'changedAmounts',
    ]);
    expect(json.sincePrevious.sheet).toBe(since.batch.sheet);
  });

  it('keeps the plain decimals in the JSON summary', () => {
    const json = JSON.parse(JSON.stringify(summaryJson(facts()))) as { sincePrevious: SincePrevious };
    expect(json.sincePrevious.totals['USD']).toEqual({
      previous: '1250.00',
      current: '1251250.00',
      change: '+1250000.00',
    });
  });
});
