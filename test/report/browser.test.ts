/**
 * The approver's report in a real browser: Debian's Chromium driven by playwright-core
 * (Playwright cannot download its own browsers here; .ci/run installs the package). The page a
 * real `payouts validate` wrote loads with no console error and no request but its own, shows
 * the digest, the totals and every flagged reference, and prints to A4.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  paymentsOf,
  runAgainst,
  SANDBOX_ENV,
  spawnCli,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { sampleRows, writeSheet } from '../helpers/sheets.js';

/** Where Debian (and Ubuntu's deb) put Chromium; PAYOUTS_CHROMIUM names another. */
const CANDIDATES = [process.env['PAYOUTS_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'];

function chromiumPath(): string {
  const found = CANDIDATES.find((p): p is string => p !== undefined && existsSync(p));
  if (found === undefined) {
    throw new Error('no Chromium found: apt-get install chromium (or set PAYOUTS_CHROMIUM to its path)');
  }
  return found;
}

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

describe('the approver report in Chromium', () => {
  it('loads offline with no error and no request, shows what the approver checks, and prints to A4', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'november.csv');
    const rows = sampleRows();
    // One invalid row, and João paid 640.00 twice: a duplicate inside the sheet.
    rows[4] = { ...rows[4]!, routingNumber: '12345' };
    rows[7] = { ...rows[7]!, amount: '640.00' };
    await writeSheet(sheet, rows);
    const checked = await runCli(['validate', sheet, '--json', '--expect-count', '12'], { env: {} });
    expect(checked.code, checked.stderr).toBe(1);
    const summary = JSON.parse(checked.stdout);
    expect(summary.report).toBe(path.join(dir, 'november.report.html'));

    const page = await browser.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    const url = pathToFileURL(summary.report).href;
    await page.goto(url, { waitUntil: 'load' });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);

    const text = await page.innerText('body');
    expect(text).toContain(summary.digest);
    // Totals per currency, all rows and valid rows, as people read them.
    expect(text).toMatch(/USD\s+24,905\.74\s+23,925\.49/);
    expect(text).toMatch(/BRL\s+1,280\.00\s+1,280\.00/);
    const flagged = Object.values(summary.warnings as Record<string, string[]>).flat();
    expect(flagged).toContain('PAY-2026-11-0008');
    expect(summary.warnings.possibleDuplicate).toEqual(['PAY-2026-11-0008', 'PAY-2026-11-0012']);
    for (const reference of flagged) expect(text).toContain(reference);
    expect(text).toMatch(/routingNumber/);
    expect(text).toMatch(/rows\s+12\s+12\s+matches/);
    // The warnings that need a decision come before the new payees, which need none.
    const signals = await page.$$eval('.signal h3', (headings) => headings.map((h) => h.textContent ?? ''));
    expect(signals.map((h) => h.replace(/:.*$/, ''))).toEqual([
      'Possible duplicates',
      'Changed bank details',
      'Unusual amounts',
      'New payees',
    ]);
    expect(signals[0]).toMatch(/^Possible duplicates: 2/);

    await page.screenshot({ path: path.join(dir, 'report.png'), fullPage: true });
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? [];
    expect(pages.length).toBeGreaterThanOrEqual(1);
    expect(pages.length).toBeLessThanOrEqual(6);
    if (process.env['PAYOUTS_KEEP_REPORT']) {
      await writeFile(path.join(process.env['PAYOUTS_KEEP_REPORT'], 'report.pdf'), pdf);
      await page.screenshot({
        path: path.join(process.env['PAYOUTS_KEEP_REPORT'], 'report.png'),
        fullPage: true,
      });
    }
    await page.close();
  });

  it('shows what changed since last month: the dropped payee, the totals then and now, a changed amount', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const november = path.join(dir, 'november.csv');
    await writeSheet(november, sampleRows());
    const paid = await runAgainst(sb, november, ['--json']);
    expect(paid.code, paid.stderr).toBe(0);

    // December: Hans Weber is not paid, Ana Lopez is paid 100.00 more, and João's November
    // payout PAY-2026-11-0012 is fed again (paid already: not to be sent).
    const december = path.join(dir, 'december.csv');
    const rows = sampleRows()
      .filter((row) => row['reference'] !== 'PAY-2026-11-0004')
      .map((row) =>
        row['reference'] === 'PAY-2026-11-0012'
          ? row
          : { ...row, reference: row['reference']!.replace('2026-11', '2026-12') },
      );
    rows[0] = { ...rows[0]!, amount: '2600.00' };
    await writeSheet(december, rows);

    // A month later, as the approver's cron job would check it.
    const later = spawnCli(['validate', december, '--json', '--base-url', sb.url], SANDBOX_ENV, [
      'faketime',
      '-f',
      '+30d',
    ]);
    const checked = await later.exited;
    expect(checked.code, checked.stderr).toBe(0);
    const summary = JSON.parse(checked.stdout);
    expect(summary.statuses).toMatchObject({ valid: 10, skipped: 1 });
    // Monthly repeats of the same amounts are no possible duplicates.
    expect(summary.warnings.possibleDuplicate).toEqual([]);
    expect(summary.sincePrevious).toEqual({
      sheet: 'november.csv',
      at: expect.any(String),
      rows: 12,
      // december.csv and november.csv are no sheet of one name: the latest batch paid.
      chosenBy: 'latest',
      batch: { sheet: 'november.csv', at: summary.sincePrevious.at, rows: 12, chosenBy: 'latest' },
      totals: {
        BRL: { previous: '2490.90', current: '2490.90', change: '+0.00' },
        COP: { previous: '3150000.00', current: '3150000.00', change: '+0.00' },
        MXN: { previous: '19200.00', current: '19200.00', change: '+0.00' },
        USD: { previous: '24905.74', current: '21805.74', change: '-3100.00' },
      },
      missingPayees: [
        { name: 'Hans Weber', lastReference: 'PAY-2026-11-0004', amount: '3200.00', currency: 'USD' },
      ],
      changedAmounts: [
        { name: 'Ana Lopez', currency: 'USD', previous: '2625.50', current: '2725.50', change: '+100.00' },
      ],
    });
    // What a run would send now leaves out the row paid in November.
    expect(summary.validTotals.BRL).toBe('2490.90');
    expect(summary.sendTotals.BRL).toBe('1850.90');

    const page = await browser.newPage();
    await page.goto(pathToFileURL(summary.report).href);
    const text = await page.innerText('body');
    expect(text).toContain('Since the previous batch');
    expect(text).toMatch(/Paid then, missing now: 1/);
    expect(text).toContain('Hans Weber');
    expect(text).toContain('PAY-2026-11-0004');
    expect(text).toMatch(/Ana Lopez\s+2,625\.50\s+2,725\.50\s+\+100\.00 USD/);
    if (process.env['PAYOUTS_KEEP_REPORT'])
      await page.screenshot({
        path: path.join(process.env['PAYOUTS_KEEP_REPORT'], 'since.png'),
        fullPage: true,
      });
    await page.close();

    // The run says the same, and sends all but the paid row.
    const ran = await runAgainst(sb, december, ['--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const run = summaryOf(ran) as unknown as {
      sincePrevious: { missingPayees: unknown[] };
      sendTotals: Record<string, string>;
    };
    expect(run.sincePrevious.missingPayees).toEqual(summary.sincePrevious.missingPayees);
    expect(run.sendTotals.BRL).toBe('1850.90');
    expect(paymentsOf(sb)).toHaveLength(12 + 10);
  });
});
