/**
 * The approver's report (README "The approver's view", docs/approval.md "The report"): one
 * self-contained HTML page that opens offline and prints on A4. Inline CSS, charts as inline SVG,
 * no script and no request of any kind. Everything in it was gathered while the rows streamed by
 * (BatchSummary, WarningTally), so its size is bounded whatever the sheet's: a million rows give
 * the same few hundred KB.
 */
import type { PolicyView } from '../approvals/policy-gate.js';
import type { ControlTotals } from '../batch/guards.js';
import { chosenInWords, LISTED_SHOWN, type SincePrevious } from '../batch/since-previous.js';
import {
  type BatchSummary,
  formatAmountForPeople,
  groupDecimalForPeople,
  ROW_STATUSES,
  type RowStatus,
} from '../batch/summary.js';
import type { Signal, WarningTally } from '../batch/warnings.js';
import type { PayoutsError } from '../errors.js';
import { AtomicFile } from '../sheet/atomic-file.js';

/** What the report shows. */
export interface ReportFacts {
  command: 'validate' | 'run';
  sheetPath: string;
  /** When the report was made. */
  at: Date;
  digest: string;
  summary: BatchSummary;
  warnings: WarningTally;
  controls?: ControlTotals;
  /** A batch guard that refused (control totals, approval). */
  guardError?: PayoutsError;
  resultsPath: string;
  registerPath: string | null;
  /** `--hold-changed-payees` was given. */
  holdChangedPayees?: boolean;
  sandbox?: boolean;
  /** What changed since the previous batch the register paid; null without one. */
  sincePrevious?: SincePrevious | null;
  /** The register's approval policy as judged for this batch; null or undefined: none. */
  policy?: PolicyView | null;
  /** The signed approvals the batch relied on (README "Approvals"); undefined: not looked at. */
  approvals?: readonly { principal: string; fingerprint: string; recordedAt: string }[];
}

/** Writes the report atomically: nothing at `path` until it is whole. */
export async function writeReport(path: string, facts: ReportFacts): Promise<void> {
  const file = await AtomicFile.create(path);
  try {
    file.stream.end(renderReport(facts));
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
}

const SIGNAL_TITLES: Record<Signal, string> = {
  newPayee: 'New payees',
  changedBankDetails: 'Changed bank details',
  possibleDuplicate: 'Possible duplicates',
  unusualAmount: 'Unusual amounts',
};

const STATUS_COLOURS: Record<RowStatus, string> = {
  valid: '#2e7d32',
  submitted: '#1565c0',
  completed: '#2e7d32',
  skipped: '#757575',
  invalid: '#c62828',
  failed: '#c62828',
  unknown: '#ef6c00',
};

/** The whole page. */
export function renderReport(facts: ReportFacts): string {
  const { summary, warnings } = facts;
  const title = `${facts.command === 'validate' ? 'Batch check' : 'Batch run'}: ${baseName(facts.sheetPath)}`;
  const parts: string[] = [];
  parts.push(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none';style-src 'unsafe-inline';img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}</style></head><body>`);
  parts.push(`<header><h1>${esc(title)}</h1>${facts.sandbox ? '<p class="banner">Rehearsal against the embedded sandbox: nothing real was paid.</p>' : ''}
<dl class="facts">
<dt>Sheet</dt><dd>${esc(facts.sheetPath)}</dd>
<dt>Made</dt><dd>${esc(facts.at.toISOString().replace('T', ' ').slice(0, 19))} UTC by payouts ${facts.command}</dd>
<dt>Batch digest</dt><dd class="digest">${esc(facts.digest)}</dd>
<dt>Results file</dt><dd>${esc(facts.resultsPath)}</dd>
<dt>Register</dt><dd>${facts.registerPath === null ? 'none' : esc(facts.registerPath)}</dd>
</dl></header>`);
  if (facts.approvals !== undefined) parts.push(approvalsSection(facts.approvals));
  if (facts.policy) parts.push(policySection(facts.policy));
  parts.push(overview(summary, warnings, facts));
  parts.push(sinceSection(facts));
  parts.push(totalsSection(summary, facts));
  parts.push(warningsSection(warnings, facts));
  parts.push(largestSection(summary));
  parts.push(errorsSection(summary));
  parts.push(
    '<footer>Made offline by payouts. The digest covers every valid row and its warnings: approve it with <code>payouts run --approve DIGEST</code>.</footer></body></html>\n',
  );
  return parts.join('\n');
}

/**
 * The register's approval policy for this batch: each rule, whether it applies to the rows to
 * send, who of its group signed, and who is still needed.
 */
function policySection(policy: PolicyView): string {
  const rows = policy.rules
    .map((rule) => {
      const state = !rule.applies
        ? 'does not apply'
        : rule.missing === 0
          ? 'met'
          : `${rule.missing} more needed`;
      const waiting = rule.applies && rule.missing > 0 ? rule.waitingOn.join(', ') : '';
      return `<tr class="${rule.applies ? (rule.missing === 0 ? 'met' : 'unmet') : 'idle'}"><td>${esc(rule.name)}</td><td>${rule.applies ? 'yes' : 'no'}</td><td>${rule.require} of ${esc(rule.from)}</td><td>${esc(rule.signed.join(', ') || 'nobody')}</td><td>${esc(waiting)}</td><td>${state}</td></tr>`;
    })
    .join('');
  const verdict = policy.satisfied
    ? '<p class="ok">Every rule that applies is met.</p>'
    : '<p class="note">Not every rule that applies is met: a run sends nothing until it is.</p>';
  return `<section class="policy"><h2>Approval policy (version ${policy.version})</h2>${verdict}<table><thead><tr><th>Rule</th><th>Applies</th><th>Requires</th><th>Signed by</th><th>Still needed</th><th>State</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** Who approved the batch: principal, key and when the approval was recorded; or that no one has. */
function approvalsSection(approvals: NonNullable<ReportFacts['approvals']>): string {
  if (approvals.length === 0) {
    return '<section class="approvals"><h2>Approved by</h2><p class="note">Not yet approved: the register holds no signed approval of this batch digest (payouts approve SHEET --key KEY).</p></section>';
  }
  const rows = approvals
    .map(
      (a) =>
        `<tr><td>${esc(a.principal)}</td><td class="digest">${esc(a.fingerprint)}</td><td>${esc(a.recordedAt.replace('T', ' ').slice(0, 19))} UTC</td></tr>`,
    )
    .join('');
  return `<section class="approvals"><h2>Approved by</h2><table><thead><tr><th>Approver</th><th>Key</th><th>Recorded</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function overview(summary: BatchSummary, warnings: WarningTally, facts: ReportFacts): string {
  const statuses = ROW_STATUSES.filter((s) => summary.byStatus[s] > 0).map(
    (s) => [s, summary.byStatus[s]] as const,
  );
  const rails = [...summary.byRail].sort(([a], [b]) => a.localeCompare(b));
  const newRows = warnings.counts.newPayee;
  const payingRows = summary.rows - summary.byStatus.invalid;
  const knownRows = Math.max(0, payingRows - newRows);
  return `<section class="overview"><h2>Rows</h2>
<div class="cards">
<div class="card"><h3>Per status</h3>${bars(statuses.map(([s, n]) => ({ label: s, value: n, colour: STATUS_COLOURS[s] })))}</div>
<div class="card"><h3>Per rail</h3>${bars(rails.map(([rail, n]) => ({ label: rail || '(no rail)', value: n, colour: '#455a64' })))}</div>
<div class="card"><h3>Rows paying</h3>${bars([
    { label: 'new payees', value: newRows, colour: '#ef6c00' },
    { label: 'known payees', value: knownRows, colour: '#2e7d32' },
  ])}${facts.registerPath === null ? '<p class="note">No register was read: every payee counts as new.</p>' : ''}</div>
</div>
<p>${num(summary.rows)} row${summary.rows === 1 ? '' : 's'} in all${summary.totalsRows.length > 0 ? `, and a totals row (${esc(summary.totalsRows.join(' / '))})` : ''}.</p></section>`;
}

/**
 * A horizontal bar chart as inline SVG, drawn at its own size (never scaled down to tiny text),
 * with the numbers written out: it reads the same printed in black and white.
 */
function bars(items: readonly { label: string; value: number; colour: string }[]): string {
  if (items.length === 0) return '<p class="note">None.</p>';
  const max = Math.max(1, ...items.map((i) => i.value));
  const rowHeight = 18;
  const labelWidth = 80;
  const barWidth = 70;
  const width = labelWidth + barWidth + 44;
  const height = items.length * rowHeight;
  const rows = items
    .map((item, i) => {
      const y = i * rowHeight;
      const length = Math.max(item.value > 0 ? 2 : 0, Math.round((item.value / max) * barWidth));
      return `<text x="0" y="${y + 13}">${esc(item.label)}</text><rect x="${labelWidth}" y="${y + 3}" width="${length}" height="12" fill="${item.colour}"/><text x="${labelWidth + length + 4}" y="${y + 13}">${num(item.value)}</text>`;
    })
    .join('');
  return `<svg role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${rows}</svg>`;
}

/** Rows shown per list of the comparison (all the worker keeps without --json); the JSON summary has them all. */
const SINCE_ROWS_SHOWN = LISTED_SHOWN;

/** What changed since the previous batch: the variance report an approver reads first. */
function sinceSection(facts: ReportFacts): string {
  const since = facts.sincePrevious;
  if (since === undefined) return '';
  if (since === null)
    return '<section><h2>Since the previous batch</h2><p class="note">The register holds no earlier batch of this service to compare with.</p></section>';
  const { batch } = since;
  const totals = Object.entries(since.totals)
    .map(
      ([currency, t]) =>
        `<tr><td>${esc(currency)}</td><td class="amount">${esc(groupDecimalForPeople(t.previous))}</td><td class="amount">${esc(groupDecimalForPeople(t.current))}</td><td class="amount">${esc(groupDecimalForPeople(t.change))}</td></tr>`,
    )
    .join('');
  const missing = since.missingPayees;
  const missingRows = missing
    .slice(0, SINCE_ROWS_SHOWN)
    .map(
      (m) =>
        `<tr><td>${esc(m.name)}</td><td class="ref">${esc(m.lastReference)}</td><td class="amount">${esc(groupDecimalForPeople(m.amount))} ${esc(m.currency)}</td></tr>`,
    )
    .join('');
  const changed = since.changedAmounts;
  const changedRows = changed
    .slice(0, SINCE_ROWS_SHOWN)
    .map(
      (c) =>
        `<tr><td>${esc(c.name)}</td><td class="amount">${esc(groupDecimalForPeople(c.previous))}</td><td class="amount">${esc(groupDecimalForPeople(c.current))}</td><td class="amount">${esc(groupDecimalForPeople(c.change))} ${esc(c.currency)}</td></tr>`,
    )
    .join('');
  const more = (n: number) =>
    n > SINCE_ROWS_SHOWN
      ? `<p class="note">The first ${SINCE_ROWS_SHOWN} of ${num(n)}: the JSON summary (--json) has them all.</p>`
      : '';
  return `<section class="since"><h2>Since the previous batch</h2>
<p>Compared with <strong>${esc(batch.sheet)}</strong>, paid ${esc(batch.at.slice(0, 10))} (${num(batch.rows)} row${batch.rows === 1 ? '' : 's'}): ${esc(chosenInWords(batch.chosenBy))}.</p>
<table><thead><tr><th>Currency</th><th class="amount">Then (paid)</th><th class="amount">Now (valid rows)</th><th class="amount">Change</th></tr></thead><tbody>${totals}</tbody></table>
<h3>Paid then, missing now: ${num(missing.length)}</h3>
${missing.length === 0 ? '<p class="note">None: every payee paid then is in this sheet.</p>' : `<table><thead><tr><th>Payee</th><th>Last reference</th><th class="amount">Paid then</th></tr></thead><tbody>${missingRows}</tbody></table>${more(missing.length)}`}
<h3>Another amount now: ${num(changed.length)}</h3>
${changed.length === 0 ? '<p class="note">None.</p>' : `<table><thead><tr><th>Payee</th><th class="amount">Then</th><th class="amount">Now</th><th class="amount">Change</th></tr></thead><tbody>${changedRows}</tbody></table>${more(changed.length)}`}
</section>`;
}

function totalsSection(summary: BatchSummary, facts: ReportFacts): string {
  const currencies = [...summary.sheetTotals.keys()].sort();
  const rows = currencies
    .map((c) => {
      const all = summary.sheetTotals.get(c) ?? 0n;
      const valid = summary.validTotals.get(c) ?? 0n;
      const send = summary.sendTotals.get(c) ?? 0n;
      return `<tr><td>${esc(c)}</td><td class="amount">${formatAmountForPeople(all)}</td><td class="amount">${formatAmountForPeople(valid)}</td><td class="amount">${formatAmountForPeople(send)}</td></tr>`;
    })
    .join('');
  const controls: string[] = [];
  const expected = facts.controls;
  if (expected?.expectCount !== undefined) {
    const ok = expected.expectCount === summary.rows;
    controls.push(
      `<tr><td>rows</td><td class="amount">${num(expected.expectCount)}</td><td class="amount">${num(summary.rows)}</td><td class="${ok ? 'ok' : 'bad'}">${ok ? 'matches' : 'does not match'}</td></tr>`,
    );
  }
  for (const [currency, minor] of expected?.expectTotals ?? []) {
    const actual = summary.sheetTotals.get(currency) ?? 0n;
    const ok = actual === minor;
    controls.push(
      `<tr><td>${esc(currency)} total</td><td class="amount">${formatAmountForPeople(minor)}</td><td class="amount">${formatAmountForPeople(actual)}</td><td class="${ok ? 'ok' : 'bad'}">${ok ? 'matches' : 'does not match'}</td></tr>`,
    );
  }
  const guard = facts.guardError
    ? `<p class="bad">Refused: ${esc(facts.guardError.message)}</p>`
    : controls.length > 0
      ? '<p class="ok">The control totals match.</p>'
      : '';
  return `<section><h2>Totals per currency</h2>
${summary.untotalledRows > 0 ? `<p class="bad">${num(summary.untotalledRows)} row${summary.untotalledRows === 1 ? ' has' : 's have'} an amount or currency that could not be read: in no total below.</p>` : ''}
${currencies.length === 0 ? '<p class="note">No amount could be read.</p>' : `<table><thead><tr><th>Currency</th><th class="amount">All rows</th><th class="amount">Valid rows</th><th class="amount">${facts.command === 'validate' ? 'To be sent now' : 'To send when the run began'}</th></tr></thead><tbody>${rows}</tbody></table><p class="note">Valid rows include those paid already and those held, and the last column is what ${facts.command === 'validate' ? 'payouts run would send now' : 'this run set out to send'}: valid rows not paid already and not held.</p>`}
<h3>Control totals</h3>
${controls.length === 0 ? '<p class="note">None were given (--expect-count, --expect-total).</p>' : `<table><thead><tr><th>Control</th><th class="amount">Expected</th><th class="amount">In the sheet</th><th>Result</th></tr></thead><tbody>${controls.join('')}</tbody></table>`}
${guard}</section>`;
}

/**
 * The order the report lists the warnings in: those that need a decision before approving
 * (a possible duplicate, changed bank details, an unusual amount) first, new payees after.
 */
const DECISIONS_FIRST: readonly Signal[] = [
  'possibleDuplicate',
  'changedBankDetails',
  'unusualAmount',
  'newPayee',
];

function warningsSection(warnings: WarningTally, facts: ReportFacts): string {
  const blocks = DECISIONS_FIRST.map((signal) => {
    const count = warnings.counts[signal];
    const shown = warnings.rows[signal];
    const held =
      signal === 'changedBankDetails' && facts.holdChangedPayees && count > 0
        ? ' <span class="tag">held: not sent</span>'
        : '';
    const list =
      count === 0
        ? '<p class="note">None.</p>'
        : `<table><thead><tr><th>Row</th><th>Reference</th><th>Warning</th></tr></thead><tbody>${shown
            .map(
              (r) =>
                `<tr><td>${r.rowNumber}</td><td class="ref">${esc(r.reference)}</td><td>${esc(r.message)}</td></tr>`,
            )
            .join(
              '',
            )}</tbody></table>${count > shown.length ? `<p class="note">The first ${shown.length} of ${num(count)} rows: the results file has them all (result.warnings).</p>` : ''}`;
    return `<div class="signal ${signal}"><h3>${SIGNAL_TITLES[signal]}: ${num(count)}${held}</h3>${list}</div>`;
  });
  return `<section><h2>Warnings for the approver</h2><p class="note">Warnings do not stop a row by themselves: check each before approving.</p>${blocks.join('\n')}</section>`;
}

function largestSection(summary: BatchSummary): string {
  const blocks = [...summary.largestPayments]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([currency, list]) =>
        `<h3>${esc(currency)}</h3><table><thead><tr><th>Row</th><th>Reference</th><th class="amount">Amount</th></tr></thead><tbody>${list
          .map(
            (p) =>
              `<tr><td>${p.rowNumber}</td><td class="ref">${esc(p.reference)}</td><td class="amount">${formatAmountForPeople(p.minor)} ${esc(currency)}</td></tr>`,
          )
          .join('')}</tbody></table>`,
    );
  return `<section><h2>The 20 largest payments</h2><p class="note">Per currency, of the rows sent or to be sent (not those paid already or held).</p>${blocks.length === 0 ? '<p class="note">No row to send.</p>' : blocks.join('')}</section>`;
}

function errorsSection(summary: BatchSummary): string {
  const groups = summary.errorGroups.sorted();
  if (groups.length === 0)
    return '<section><h2>Rows that need attention</h2><p class="ok">No row is invalid, failed, unknown or held.</p></section>';
  const rows = groups
    .map(
      ([message, g]) =>
        `<tr><td class="amount">${num(g.count)}</td><td>${esc(message)}</td><td class="rows">${g.rows.join(', ')}${g.count > g.rows.length ? ', …' : ''}</td></tr>`,
    )
    .join('');
  const other = summary.errorGroups.otherRows;
  return `<section><h2>Rows that need attention</h2><p class="note">Invalid, failed, unknown and held rows, by message.</p><table><thead><tr><th class="amount">Rows</th><th>Message</th><th>Rows (first 50)</th></tr></thead><tbody>${rows}</tbody></table>${other > 0 ? `<p class="note">${num(other)} more messages on rows not listed here: the results file has them all.</p>` : ''}</section>`;
}

function num(n: number): string {
  return n.toLocaleString('en-US');
}

function baseName(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

/** Text for HTML: nothing in a cell can become markup. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const CSS = `
@page { size: A4;margin: 14mm 12mm;}
* { box-sizing: border-box;}
body { font: 10.5pt/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;color: #212121;margin: 0 auto;max-width: 190mm;padding: 8mm 0;}
h1 { font-size: 17pt;margin: 0 0 4pt;}
h2 { font-size: 13pt;border-bottom: 1.5pt solid #37474f;padding-bottom: 2pt;margin: 14pt 0 6pt;break-after: avoid;}
h3 { font-size: 10.5pt;margin: 8pt 0 4pt;break-after: avoid;}
dl.facts { display: grid;grid-template-columns: 28mm 1fr;gap: 1pt 6pt;margin: 0;}
dt { color: #616161;} dd { margin: 0;overflow-wrap: anywhere;}
.digest, .ref, .rows, code { font-family: ui-monospace, Menlo, Consolas, monospace;font-size: 9pt;overflow-wrap: anywhere;}
.cards { display: grid;grid-template-columns: repeat(3, 1fr);gap: 6pt;align-items: start;}
.card { min-width: 0;overflow: hidden;border: 0.75pt solid #cfd8dc;border-radius: 3pt;padding: 4pt 6pt;break-inside: avoid;}
svg text { font: 11px system-ui, sans-serif;fill: #212121;}
table { border-collapse: collapse;width: 100%;margin: 2pt 0 6pt;}
th, td { text-align: left;vertical-align: top;padding: 2pt 4pt;border-bottom: 0.5pt solid #e0e0e0;}
th { background: #eceff1;font-weight: 600;}
thead { display: table-header-group;}
tr { break-inside: avoid;}
.amount { text-align: right;white-space: nowrap;font-variant-numeric: tabular-nums;}
.note { color: #616161;font-size: 9pt;}
.ok { color: #2e7d32;} .bad { color: #c62828;font-weight: 600;}
.banner { background: #fff3e0;border: 0.75pt solid #ef6c00;padding: 3pt 6pt;}
.tag { background: #c62828;color: #fff;border-radius: 2pt;padding: 0 3pt;font-size: 8.5pt;}
.signal { break-inside: auto;}
footer { margin-top: 12pt;color: #616161;font-size: 8.5pt;}
@media print { body { padding: 0;} a { color: inherit;text-decoration: none;} }
`;
