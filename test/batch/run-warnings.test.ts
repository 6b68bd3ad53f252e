/**
 * The approver's warnings against the sandbox (docs/approval.md): a
 * second month after a first one was paid, with a changed account, a payment already made,
 * an unusual amount, a duplicate inside the sheet and a new payee. The warnings in the results
 * file and the JSON summary, `--hold-changed-payees` paying everything but the held row, and
 * the batch digest that covers the warnings staying the same when the run is resumed weeks later.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
import { readCsv, type SheetRow, sampleRows, writeSheet } from '../helpers/sheets.js';

/** November's sample as December's sheet: new references and amounts, and the cases to warn about. */
function december(): SheetRow[] {
  const amounts = [
    '2600.00', // Ana, to a new account: changed bank details
    '125.50', // Ana, what November paid her under PAY-2026-11-0002: a possible duplicate
    '17000.00',
    '10000.00', // Hans: more than 3 times his 3,200.00
    '990.00',
    '15100.00',
    '4300.00',
    '1900.00', // João twice, the same amount: both rows are possible duplicates
    '2500000.00',
    '760000.00',
    '100.00',
    '1900.00',
  ];
  const rows: SheetRow[] = sampleRows().map((row, i) => ({
    ...row,
    reference: row['reference']!.replace('2026-11', '2026-12'),
    amount: amounts[i]!,
  }));
  rows[0] = { ...rows[0]!, accountNumber: '000111222333' };
  rows.push({
    ...sampleRows()[0]!,
    reference: 'PAY-2026-12-0013',
    amount: '300.00',
    beneficiaryName: 'Zoe Park',
    individualName: 'Zoe Park',
    beneficiaryEmail: 'zoe@example.com',
    nickname: 'Zoe',
    accountNumber: '000555666777',
  });
  return rows;
}

const EXPECTED = {
  newPayee: ['PAY-2026-12-0013'],
  changedBankDetails: ['PAY-2026-12-0001'],
  possibleDuplicate: ['PAY-2026-12-0002', 'PAY-2026-12-0008', 'PAY-2026-12-0012'],
  unusualAmount: ['PAY-2026-12-0004'],
};

describe('the warnings for the approver, a month after the first', () => {
  it('flags a changed account, a payment made, an unusual amount, a duplicate and a new payee, and holds the changed one', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const november = path.join(dir, 'november.csv');
    await writeSheet(november, sampleRows());
    // One row at a time: Ana's last payout to her account is then PAY-2026-11-0002.
    const paid = await runAgainst(sb, november, ['--json', '--concurrency', '1']);
    expect(paid.code, paid.stderr).toBe(0);
    const first = summaryOf(paid) as unknown as { warnings: Record<string, string[]> };
    // The first month: every payee is new, nothing else.
    expect(first.warnings.newPayee).toHaveLength(12);
    expect(first.warnings.changedBankDetails).toEqual([]);
    expect(first.warnings.possibleDuplicate).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);

    const sheet = path.join(dir, 'december.csv');
    await writeSheet(sheet, december());
    const checked = await runCli(['validate', sheet, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    expect(checked.code, checked.stderr).toBe(0);
    const validation = JSON.parse(checked.stdout);
    expect(validation.warnings).toEqual(EXPECTED);
    expect(validation.statuses).toMatchObject({ valid: 13 });
    expect(checked.stderr).toMatch(/changedBankDetails\s+1 - first: row 2 \(PAY-2026-12-0001\)/);
    expect(checked.stderr).toMatch(/possibleDuplicate\s+3/);

    const rows = new Map((await readCsv(validation.results)).map((r) => [r['reference'], r]));
    expect(rows.get('PAY-2026-12-0001')!['result.warnings']).toBe(
      `bank details changed: Ana Lopez was last paid to account ****6789 on ${today} (reference PAY-2026-11-0002), this row pays account ****2333`,
    );
    expect(rows.get('PAY-2026-12-0002')!['result.warnings']).toBe(
      `possible duplicate: Ana Lopez was paid 125.50 USD on ${today} under reference PAY-2026-11-0002`,
    );
    expect(rows.get('PAY-2026-12-0004')!['result.warnings']).toBe(
      'unusual amount: 10000.00 USD is more than 3 times the largest earlier payout to Hans Weber (3200.00 USD)',
    );
    expect(rows.get('PAY-2026-12-0008')!['result.warnings']).toBe(
      'possible duplicate: row 13 of this sheet also pays João Silva 1900.00 BRL',
    );
    expect(rows.get('PAY-2026-12-0012')!['result.warnings']).toBe(
      'possible duplicate: row 9 of this sheet also pays João Silva 1900.00 BRL',
    );
    expect(rows.get('PAY-2026-12-0013')!['result.warnings']).toBe(
      'new payee: the register has no earlier payout to Zoe Park',
    );
    // Acme is paid to two accounts (WIRE and RTP), Camila to two: both their own, no warning.
    for (const reference of ['PAY-2026-12-0003', 'PAY-2026-12-0005', 'PAY-2026-12-0009', 'PAY-2026-12-0010'])
      expect(rows.get(reference)!['result.warnings'], reference).toBe('');
    // The default report beside the results names every flagged reference and the digest.
    const report = await readFile(path.join(dir, 'december.report.html'), 'utf8');
    expect(report).toContain(validation.digest);
    for (const reference of Object.values(EXPECTED).flat()) expect(report).toContain(reference);

    // validate --hold-changed-payees shows the row run would hold.
    const held = await runCli(['validate', sheet, '--json', '--base-url', sb.url, '--hold-changed-payees'], {
      env: SANDBOX_ENV,
    });
    expect(JSON.parse(held.stdout).statuses).toMatchObject({ valid: 12, skipped: 1 });
    expect(JSON.parse(held.stdout).digest).toBe(validation.digest);

    // run --hold-changed-payees, approved: everything is paid but the held row.
    const run = await runAgainst(sb, sheet, [
      '--json',
      '--hold-changed-payees',
      '--approve',
      validation.digest,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const ran = summaryOf(run) as unknown as {
      warnings: unknown;
      statuses: Record<string, number>;
      results: string;
    };
    expect(ran.statuses).toMatchObject({ submitted: 12, skipped: 1 });
    expect(ran.warnings).toEqual(EXPECTED);
    expect(paymentsOf(sb)).toHaveLength(12 + 12);
    const results = new Map((await readCsv(ran.results)).map((r) => [r['reference'], r]));
    const heldRow = results.get('PAY-2026-12-0001')!;
    expect(heldRow['result.status']).toBe('skipped');
    expect(heldRow['result.transactionId']).toBe('');
    expect(heldRow['result.errors']).toMatch(
      /^held by --hold-changed-payees, not sent: bank details changed: Ana Lopez .* run again without --hold-changed-payees to pay it$/,
    );

    // Once the new account is confirmed, three weeks later, the same approval pays the held row:
    // the run compares its rows with what stood before this sheet paid anything, each row it
    // paid as of when it paid it (PAY-2026-12-0002 was a duplicate then, whatever the date now),
    // so its digest has not moved.
    const later = ['faketime', '-f', '+20d'];
    const resumed = await spawnCli(
      ['run', sheet, '--base-url', sb.url, '--json', '--approve', validation.digest],
      SANDBOX_ENV,
      later,
    ).exited;
    const rest = { ...resumed, code: resumed.code ?? -1 };
    expect(rest.code, rest.stderr).toBe(0);
    expect(summaryOf(rest).statuses).toMatchObject({ submitted: 1, skipped: 12 });
    // Warnings are for the rows a run sends: the 12 paid already show none now, the held one
    // still shows why it was held; the digest, which covers them all, has not moved.
    expect((summaryOf(rest) as unknown as { warnings: unknown }).warnings).toEqual({
      newPayee: [],
      changedBankDetails: ['PAY-2026-12-0001'],
      possibleDuplicate: [],
      unusualAmount: [],
    });
    const restRows = new Map((await readCsv(ran.results)).map((r) => [r['reference'], r]));
    expect(restRows.get('PAY-2026-12-0002')!['result.warnings']).toBe('');
    expect(paymentsOf(sb)).toHaveLength(12 + 13);
    // And validate, now that the sheet is paid, still shows what the approver saw.
    const after = await spawnCli(['validate', sheet, '--json', '--base-url', sb.url], SANDBOX_ENV, later)
      .exited;
    expect(JSON.parse(after.stdout).digest).toBe(validation.digest);
    expect(JSON.parse(after.stdout).statuses).toMatchObject({ skipped: 13 });
    expect(Object.values(JSON.parse(after.stdout).warnings).flat()).toEqual([]);
  });

  it("keeps the warnings a paid batch was approved with, whatever its payees' histories learn later", async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const november = path.join(dir, 'november.csv');
    const rows = sampleRows();
    // Hans Weber's November transaction fails after it was submitted (the sandbox fails a
    // recipient named FAIL...), which nobody knows until reconcile asks.
    rows[3] = { ...rows[3]!, individualName: 'FAIL Hans Weber' };
    await writeSheet(november, rows);
    expect((await runAgainst(sb, november, ['--json', '--rate', '200'])).code).toBe(0);
    await sb.whenIdle();

    const sheet = path.join(dir, 'december.csv');
    await writeSheet(
      sheet,
      sampleRows().map((row, i) => ({
        ...row,
        reference: row['reference']!.replace('2026-11', '2026-12'),
        // More than 3 times the 3,200.00 November paid him, as far as the register knows now.
        ...(i === 3 ? { amount: '10000.00' } : {}),
      })),
    );
    const checked = await runCli(['validate', sheet, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    const approved = JSON.parse(checked.stdout) as { digest: string; warnings: Record<string, string[]> };
    expect(approved.warnings.unusualAmount).toEqual(['PAY-2026-12-0004']);
    const paid = await runAgainst(sb, sheet, ['--json', '--rate', '200', '--approve', approved.digest]);
    expect(paid.code, paid.stderr).toBe(0);
    await sb.whenIdle();

    // Now the register learns November's payment to Hans failed: it leaves his history.
    const settled = await runCli(['reconcile', '--base-url', sb.url, '--json'], { env: SANDBOX_ENV });
    expect(settled.code, settled.stderr).toBe(1);

    // December, paid, still hashes as it was approved: each row counts the warnings it was sent
    // with, not what its payee's history would make of it today.
    const again = await runCli(['validate', sheet, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    expect(again.code, again.stderr).toBe(0);
    const now = JSON.parse(again.stdout) as { digest: string; statuses: Record<string, number> };
    expect(now.statuses).toMatchObject({ skipped: 12 });
    expect(now.digest).toBe(approved.digest);
  });
});
