/**
 * The report's "Approved by" section (docs/approval.md, "Where approvals are kept, and shown"):
 * who approved, with which key and when, escaped; "Not yet approved" when nobody did; nothing
 * when the command did not look (validate).
 */
import { describe, expect, it } from 'vitest';
import { BatchSummary } from '../../src/batch/summary.js';
import { WarningTally } from '../../src/batch/warnings.js';
import { type ReportFacts, renderReport } from '../../src/report/html.js';

function facts(overrides: Partial<ReportFacts> = {}): ReportFacts {
  const summary = new BatchSummary();
  summary.count('submitted');
  BatchSummary.add(summary.validTotals, 'USD', 100_000n);
  return {
    command: 'run',
    sheetPath: '/data/november.csv',
    at: new Date('2026-11-26T10:00:00Z'),
    digest: 'a'.repeat(64),
    summary,
    warnings: new WarningTally(),
    resultsPath: '/data/november.results.csv',
    registerPath: null,
    ...overrides,
  };
}

describe('the report names the approvers', () => {
  it('lists each approver with the key and when it was recorded', () => {
    const html = renderReport(
      facts({
        approvals: [
          {
            principal: 'alice@example.com',
            fingerprint: 'SHA256:abc+/def',
            recordedAt: '2026-11-26T09:12:34.567Z',
          },
          {
            principal: '<bob>@example.com',
            fingerprint: 'SHA256:xyz',
            recordedAt: '2026-11-25T08:00:00.000Z',
          },
        ],
      }),
    );
    expect(html).toContain('<h2>Approved by</h2>');
    expect(html).toContain(
      '<td>alice@example.com</td><td class="digest">SHA256:abc+/def</td><td>2026-11-26 09:12:34 UTC</td>',
    );
    expect(html).toContain('&lt;bob&gt;@example.com');
    expect(html).not.toContain('<bob>');
    expect(html).not.toContain('Not yet approved');
  });

  it('says "Not yet approved" when no approval was counted, and nothing when none was looked for', () => {
    expect(renderReport(facts({ approvals: [] }))).toContain('Not yet approved');
    const validate = renderReport(facts({ command: 'validate' }));
    expect(validate).not.toContain('Approved by');
    expect(validate).not.toContain('Not yet approved');
  });
});
