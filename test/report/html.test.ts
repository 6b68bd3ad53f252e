import { describe, expect, it } from 'vitest';
import { BatchSummary } from '../../src/batch/summary.js';
import { WarningTally } from '../../src/batch/warnings.js';
import { type ReportFacts, renderReport } from '../../src/report/html.js';

function facts(overrides: Partial<ReportFacts> = {}): ReportFacts {
  const summary = new BatchSummary();
  summary.count('valid');
  summary.count('invalid');
  summary.byRail.set('ACH', 2);
  BatchSummary.add(summary.sheetTotals, 'USD', 125_050n);
  BatchSummary.add(summary.validTotals, 'USD', 100_000n);
  summary.noteLargePayment('USD', { minor: 100_000n, rowNumber: 2, reference: 'INV-<1>' });
  summary.errorGroups.add(3, ['amount must be greater than 0']);
  const warnings = new WarningTally();
  warnings.add(2, 'INV-<1>', [{ signal: 'changedBankDetails', message: 'bank details changed: "Ana" & co' }]);
  return {
    command: 'validate',
    sheetPath: '/data/november.csv',
    at: new Date('2026-11-25T10:00:00Z'),
    digest: 'a'.repeat(64),
    summary,
    warnings,
    resultsPath: '/data/november.results.csv',
    registerPath: null,
    ...overrides,
  };
}

describe('the approver report (report/html.ts)', () => {
  it('is one page that loads nothing: no script, no link, no URL but the SVG namespace', () => {
    const html = renderReport(facts());
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<iframe|<img|@import|url\(/i);
    const urls = html.match(/https?:\/\/[^\s"')<]+/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(['http://www.w3.org/2000/svg']));
    expect(html).toContain(`content="default-src 'none';style-src 'unsafe-inline';img-src data:"`);
    expect(html).toContain('@page { size: A4;');
  });

  it('shows the digest, the totals, the control totals, the warnings, the largest payments and the errors', () => {
    const controls = { expectCount: 3, expectTotals: new Map([['USD', 125_050n]]) };
    const html = renderReport(facts({ controls }));
    expect(html).toContain('a'.repeat(64));
    expect(html).toContain('1,250.50');
    expect(html).toContain('1,000.00');
    expect(html).toMatch(
      /<td>rows<\/td><td class="amount">3<\/td><td class="amount">2<\/td><td class="bad">does not match/,
    );
    expect(html).toMatch(/<td>USD total<\/td>.*<td class="ok">matches/);
    expect(html).toContain('Changed bank details: 1');
    expect(html).toContain('<td class="rows">3</td>');
    expect(html).toContain('amount must be greater than 0');
  });

  it('escapes every text that came from the sheet', () => {
    const html = renderReport(facts());
    expect(html).toContain('INV-&lt;1&gt;');
    expect(html).toContain('bank details changed: &quot;Ana&quot; &amp; co');
    expect(html).not.toContain('INV-<1>');
  });

  it('stays small for any sheet: rows per signal and per message are bounded', () => {
    const warnings = new WarningTally(false);
    const summary = new BatchSummary();
    for (let row = 2; row < 200_002; row++) {
      warnings.add(row, `REF-${row}`, [
        { signal: 'newPayee', message: `new payee: no earlier payout to Person ${row} is in the register` },
      ]);
      summary.errorGroups.add(row, [`routingNumber "${row}" is invalid`]);
      summary.noteLargePayment('USD', { minor: BigInt(row), rowNumber: row, reference: `REF-${row}` });
    }
    const html = renderReport(facts({ warnings, summary }));
    expect(html.length).toBeLessThan(2 * 1024 * 1024);
    expect(html).toContain('The first 50 of 200,000 rows');
    expect(html).toContain('REF-200001');
    expect(summary.largestPayments.get('USD')).toHaveLength(20);
  });
});
