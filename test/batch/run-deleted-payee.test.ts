/**
 * A payee whose beneficiary was deleted on the service, or a service that forgot a payee the
 * register remembers (a sandbox restarted under an old register), is paid again the next month:
 * the row creates the payee anew once, says so, and the month after uses the new one quietly.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { EXIT } from '../../src/errors.js';
import { paymentsOf, runAgainst, summaryOf, testDir, testSandbox } from '../helpers/payouts.js';
import { readCsv, type SheetRow, sampleRows, writeSheet } from '../helpers/sheets.js';

/** The sample's rows as the sheet of another month (new references, the same payees). */
function monthOf(month: string): SheetRow[] {
  return sampleRows().map((row) => ({ ...row, reference: row['reference']!.replace('2026-11', month) }));
}

const RENEWED =
  /^the beneficiary \S+ that the register remembered for this payee no longer exists on the service \(deleted\), so it was created anew$/;

describe('a payee deleted on the service', () => {
  it('is created anew once, the row says so, and nothing is paid twice', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const november = path.join(dir, 'november.csv');
    await writeSheet(november, monthOf('2026-11'));
    const first = await runAgainst(sb, november, ['--json', '--rate', '200']);
    expect(first.code, first.stderr).toBe(EXIT.ok);

    // Ana Lopez (rows 1 and 2) is deleted on the service between the months.
    const ana = paymentsOf(sb).find((t) => t.reference === 'PAY-2026-11-0001')!;
    expect(ana.beneficiaryId).not.toBeNull();
    const client = createClient({
      baseUrl: sb.url,
      authUrl: sb.url,
      credentials: { ...sb.credentials },
    });
    await client.beneficiaries.delete(ana.beneficiaryId!);
    await client.close();

    const december = path.join(dir, 'december.csv');
    await writeSheet(december, monthOf('2026-12'));
    const second = await runAgainst(sb, december, ['--json', '--rate', '200']);
    expect(second.code, second.stderr).toBe(EXIT.ok);
    expect(summaryOf(second).statuses).toMatchObject({ submitted: 12 });
    const results = await readCsv(summaryOf(second).results);
    const anaRows = results.filter((r) => r['beneficiaryName'] === 'Ana Lopez');
    expect(anaRows).toHaveLength(2);
    // The first row meets the deleted beneficiary; the second too when it was under way at the
    // same moment, else it finds the new one already made.
    expect(anaRows[0]!['result.errors']).toMatch(RENEWED);
    for (const row of anaRows) {
      expect(row['result.status']).toBe('submitted');
      if (row['result.errors'] !== '') {
        expect(row['result.errors']).toMatch(RENEWED);
        expect(row['result.errors']).toContain(ana.beneficiaryId!);
      }
    }
    expect(results.filter((r) => r['result.errors'] !== '' && r['beneficiaryName'] !== 'Ana Lopez')).toEqual(
      [],
    );
    // One new beneficiary for both rows, and their December payments went to it.
    const ledger = sb.ledger();
    const anas = ledger.beneficiaries.filter((b) => b.name === 'Ana Lopez');
    expect(anas.map((b) => b.deletedAt === null)).toEqual([false, true]);
    const renewed = anas[1]!.id;
    const decemberAna = paymentsOf(sb).filter((t) => /^PAY-2026-12-000[12]$/.test(t.reference ?? ''));
    expect(decemberAna.map((t) => t.beneficiaryId)).toEqual([renewed, renewed]);
    // Every reference paid once.
    const references = paymentsOf(sb).map((t) => t.reference);
    expect(new Set(references).size).toBe(references.length);
    expect(references).toHaveLength(24);

    // January: the register remembers the new beneficiary; nothing to say, nothing created.
    const january = path.join(dir, 'january.csv');
    await writeSheet(january, monthOf('2027-01'));
    const third = await runAgainst(sb, january, ['--json', '--rate', '200']);
    expect(third.code, third.stderr).toBe(EXIT.ok);
    const quiet = await readCsv(summaryOf(third).results);
    expect(quiet.map((r) => r['result.errors'])).toEqual(quiet.map(() => ''));
    expect(sb.ledger().beneficiaries.filter((b) => b.name === 'Ana Lopez')).toHaveLength(2);
  });

  it('a service that forgot every payee (a register that outlived it): each is created anew once', async () => {
    const old = await testSandbox();
    const dir = await testDir();
    const november = path.join(dir, 'november.csv');
    await writeSheet(november, monthOf('2026-11'));
    expect((await runAgainst(old, november, ['--json', '--rate', '200'])).code).toBe(EXIT.ok);

    // A new sandbox on another port knows none of them; declared the same service, so the
    // register's remembered payee ids are used, and found missing (404).
    const fresh = await testSandbox();
    const december = path.join(dir, 'december.csv');
    await writeSheet(december, monthOf('2026-12'));
    const second = await runAgainst(fresh, december, [
      '--json',
      '--rate',
      '200',
      '--same-service-as',
      old.url,
    ]);
    expect(second.code, second.stderr).toBe(EXIT.ok);
    const results = await readCsv(summaryOf(second).results);
    expect(results.map((r) => r['result.status'])).toEqual(results.map(() => 'submitted'));
    expect(paymentsOf(fresh)).toHaveLength(12);
    // Rows note what was created anew (a row sharing its payee with one under way at the same
    // moment may find it made already): each payee once on the new service.
    const noted = results.filter((r) => r['result.errors'] !== '');
    expect(noted.length).toBeGreaterThan(0);
    for (const row of noted)
      expect(row['result.errors'], row['reference']).toMatch(/, so it was created anew$/);
    const names = fresh.ledger().beneficiaries.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
