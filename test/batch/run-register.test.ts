/**
 * The register against the sandbox, and why it exists: a payout is its reference within one
 * service and integrator, whatever sheet it arrives in. Each case checks the ledger: every
 * reference paid exactly once.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { ANSWER_LINE } from '../helpers/crash.js';
import {
  duplicates,
  expectOnePaymentPerRow,
  paymentsOf,
  type RunSummary,
  runAgainst,
  SANDBOX_ENV,
  spawnCli,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { testRegisterPath } from '../helpers/register.js';
import {
  CLEAN_SAMPLE,
  generateRows,
  readCsv,
  type SheetRow,
  sampleRows,
  writeSheet,
} from '../helpers/sheets.js';

const FAST = ['--json', '--rate', '500', '--concurrency', '8'];

/** The results rows by reference. */
async function resultsOf(file: string): Promise<Map<string, SheetRow>> {
  return new Map((await readCsv(file)).map((row) => [row['reference']!, row]));
}

function transactionPosts(sb: { ledger(): { requests: { byRoute: Record<string, number> } } }): number {
  return sb.ledger().requests.byRoute['POST /v1/transactions'] ?? 0;
}

describe('payouts run and the register', () => {
  it('pays only the fixed row when the results file is fixed and run again', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'november.csv');
    const rows = sampleRows();
    const broken = rows.map((r, i) => (i === 4 ? { ...r, amount: '12.5O' } : r));
    await writeSheet(sheet, broken);

    const first = await runAgainst(sb, sheet, FAST);
    expect(first.code, first.stderr).toBe(1);
    expect(summaryOf(first).statuses).toMatchObject({ submitted: 11, invalid: 1 });

    // The person fixes the one cell in the results file and runs that file (the README invites
    // it: "Fix it and feed it back").
    const resultsFile = summaryOf(first).results;
    const fixed = (await readFile(resultsFile, 'utf8')).replace(',12.5O,', `,${rows[4]!['amount']},`);
    await writeFile(resultsFile, fixed);
    const second = await runAgainst(sb, resultsFile, FAST);
    expect(second.code, second.stderr).toBe(0);
    expect(summaryOf(second).statuses).toMatchObject({ skipped: 11, submitted: 1 });

    await expectOnePaymentPerRow(sb, rows);
    const results = await resultsOf(summaryOf(second).results);
    const paid = new Map(paymentsOf(sb).map((t) => [t.reference, t]));
    const skipped = results.get(rows[0]!['reference']!)!;
    expect(skipped['result.status']).toBe('skipped');
    expect(skipped['result.transactionId']).toBe(paid.get(rows[0]!['reference']!)!.id);
    expect(skipped['result.errors']).toMatch(
      new RegExp(
        `^already paid: submitted on \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ from sheet november\\.csv as transaction ${paid.get(rows[0]!['reference']!)!.id} by the run on \\S+ started \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ, so it was not sent again$`,
      ),
    );
    expect(results.get(rows[4]!['reference']!)!['result.status']).toBe('submitted');
  });

  it('refuses a reference paid with other details (both shown), and skips an unchanged copy at another path', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const paid = await runAgainst(sb, sheet, FAST);
    expect(paid.code, paid.stderr).toBe(0);
    const posts = transactionPosts(sb);

    // Edited in place: one amount changed.
    await writeFile(
      sheet,
      (await readFile(sheet, 'utf8')).replace('PAY-2026-11-0001,2500.00', 'PAY-2026-11-0001,2600.00'),
    );
    const edited = await runAgainst(sb, sheet, FAST);
    expect(edited.code, edited.stderr).toBe(1);
    expect(summaryOf(edited).statuses).toMatchObject({ skipped: 11, invalid: 1 });
    const row = (await resultsOf(summaryOf(edited).results)).get('PAY-2026-11-0001')!;
    expect(row['result.status']).toBe('invalid');
    expect(row['result.errors']).toContain(
      'reference PAY-2026-11-0001 was already used for other details: paid (submitted)',
    );
    expect(row['result.errors']).toContain(
      'with USD 2500.00 by ACH to account ****6789, and this row has USD 2600.00 by ACH to account ****6789',
    );
    expect(row['result.errors']).toContain('a new payout needs a new reference');
    expect(row['result.errors']).not.toContain('; ');

    // A copy of the original under another name: nothing to do, and nothing reported failed.
    const copy = path.join(dir, 'copy-of-payouts.csv');
    await copyFile(CLEAN_SAMPLE, copy);
    const again = await runAgainst(sb, copy, FAST);
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again).statuses).toMatchObject({ skipped: 12 });
    expect(transactionPosts(sb)).toBe(posts);
    await expectOnePaymentPerRow(sb, sampleRows());
  });

  it('keeps a rehearsal on one service from marking the payouts of another as paid', async () => {
    const rehearsal = await testSandbox();
    const production = await testSandbox({ seed: 7 });
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);

    const rehearsed = await runAgainst(rehearsal, sheet, FAST);
    expect(rehearsed.code, rehearsed.stderr).toBe(0);
    // The two sandboxes give the same integrator id: payouts cannot tell them from one service
    // under two URLs, so it sends nothing until told (docs/register.md "One integrator, one
    // history"), and then keeps them apart.
    const refused = await runAgainst(production, sheet, FAST);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`already has payouts in the register under ${rehearsal.url}`);
    const real = await runAgainst(production, sheet, [...FAST, '--separate-service']);
    expect(real.code, real.stderr).toBe(0);
    expect(summaryOf(real).statuses).toMatchObject({ submitted: 12 });
    await expectOnePaymentPerRow(production, sampleRows());
    await expectOnePaymentPerRow(rehearsal, sampleRows());
  });

  it('rehearses with --sandbox in a throwaway register that leaves the real one untouched', async () => {
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const register = testRegisterPath();
    const before = await readFile(register);
    const result = await runCli(['run', sheet, '--sandbox', '--json', '--rate', '500'], {
      env: { PAYOUTS_REGISTER: register },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(summaryOf(result).register).toBeNull();
    expect((await readFile(register)).equals(before)).toBe(true);
    await expect(readFile(`${register}-wal`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes a rehearsal beside the real results, says sandbox, and takes no --base-url', async () => {
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const real = path.join(dir, 'payouts.results.csv');
    await writeFile(real, 'the real results\n');
    const result = await runCli(['run', sheet, '--sandbox', '--json', '--rate', '500'], { env: {} });
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result) as RunSummary & { sandbox?: boolean };
    expect(summary.sandbox).toBe(true);
    expect(summary.results).toBe(path.join(dir, 'payouts.sandbox.results.csv'));
    expect(result.stderr).toContain('against the embedded sandbox (nothing real was paid)');
    expect(await readFile(real, 'utf8')).toBe('the real results\n');

    for (const flag of ['--base-url', '--auth-url']) {
      const refused = await runCli(['run', sheet, '--sandbox', flag, 'http://127.0.0.1:9'], { env: {} });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `--sandbox runs against an embedded sandbox of its own, so it takes no ${flag}`,
      );
    }
    const over = await runCli(['run', sheet, '--sandbox', '--out', real], { env: {} });
    expect(over.code).toBe(2);
    expect(over.stderr).toContain('a rehearsal (--sandbox) never writes over them');
    expect(await readFile(real, 'utf8')).toBe('the real results\n');
  });

  it('never pays a reference twice when two runs of overlapping sheets start together', async () => {
    const sb = await testSandbox({ latencyMs: 2 });
    const dir = await testDir();
    const rows = generateRows(60, { prefix: 'OVER' });
    const first = path.join(dir, 'first.csv');
    const second = path.join(dir, 'second.csv');
    await writeSheet(first, rows.slice(0, 40));
    await writeSheet(second, rows.slice(20));

    const [a, b] = await Promise.all([
      runAgainst(sb, first, ['--json', '--rate', '300', '--concurrency', '4']),
      runAgainst(sb, second, ['--json', '--rate', '300', '--concurrency', '4']),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const payments = paymentsOf(sb);
    expect(duplicates(payments, (t) => t.reference)).toEqual([]);
    // Every reference paid once in all; the overlap by one run, skipped by the other.
    const again = await runAgainst(sb, first, FAST);
    const third = await runAgainst(sb, second, FAST);
    expect(summaryOf(again).statuses).toMatchObject({ skipped: 40 });
    expect(summaryOf(third).statuses).toMatchObject({ skipped: 40 });
    await expectOnePaymentPerRow(sb, rows);
  });

  it('shows in validate exactly what run would do, offline', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const before = await runCli(['validate', sheet, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    expect(before.code, before.stderr).toBe(0);
    expect(summaryOf(before).statuses).toMatchObject({ valid: 12 });
    expect(await runAgainst(sb, sheet, FAST).then((r) => r.code)).toBe(0);

    await writeFile(
      sheet,
      (await readFile(sheet, 'utf8')).replace('PAY-2026-11-0001,2500.00', 'PAY-2026-11-0001,2600.00'),
    );
    const requests = sb.ledger().requests.total;
    const after = await runCli(['validate', sheet, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    expect(after.code, after.stderr).toBe(1);
    expect(summaryOf(after).statuses).toMatchObject({ valid: 0, skipped: 11, invalid: 1 });
    expect(sb.ledger().requests.total).toBe(requests);
    const validated = await resultsOf(summaryOf(after).results);
    const ran = await runAgainst(sb, sheet, FAST);
    const run = await resultsOf(summaryOf(ran).results);
    for (const [reference, row] of validated) {
      expect({ reference, status: row['result.status'], errors: row['result.errors'] }).toEqual({
        reference,
        status: run.get(reference)!['result.status'],
        errors: run.get(reference)!['result.errors'],
      });
    }
  });

  it('reuses the payees of last month: a simulation and a transaction per recurring row', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const october = generateRows(24, { prefix: 'OCT', rowsPerPayee: 3 });
    const november = october.map((row) => ({ ...row, reference: row['reference']!.replace('OCT', 'NOV') }));
    await writeSheet(path.join(dir, 'october.csv'), october);
    await writeSheet(path.join(dir, 'november.csv'), november);
    expect((await runAgainst(sb, path.join(dir, 'october.csv'), FAST)).code).toBe(0);
    const creations = () => {
      const routes = sb.ledger().requests.byRoute;
      return (routes['POST /v1/beneficiaries'] ?? 0) + (routes['POST /v1/recipients'] ?? 0);
    };
    const created = creations();
    const requestsBefore = sb.ledger().requests.total;
    const second = await runAgainst(sb, path.join(dir, 'november.csv'), FAST);
    expect(second.code, second.stderr).toBe(0);
    expect(summaryOf(second).statuses).toMatchObject({ submitted: 24 });
    expect(creations()).toBe(created);
    const routes = sb.ledger().requests.byRoute;
    // Per row: one simulation and one transaction; per run: a token and "who am I".
    expect(sb.ledger().requests.total - requestsBefore).toBe(24 * 2 + 2);
    expect(routes['POST /v1/simulations']).toBe(48);
    await expectOnePaymentPerRow(sb, [...october, ...november]);
  });

  it('tells with payouts status what it knows of references and runs, without the network', async () => {
    const sb = await testSandbox();
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const ran = await runAgainst(sb, sheet, FAST);
    expect(ran.code, ran.stderr).toBe(0);
    const paid = new Map(paymentsOf(sb).map((t) => [t.reference, t]));
    const requests = sb.ledger().requests.total;

    const one = await runCli(['status', 'PAY-2026-11-0001', 'NEVER-SENT', '--json'], { env: {} });
    expect(one.code, one.stderr).toBe(1);
    const { references } = JSON.parse(one.stdout) as { references: Record<string, unknown>[] };
    expect(references).toEqual([
      expect.objectContaining({
        reference: 'PAY-2026-11-0001',
        state: 'submitted',
        amount: '2500.00',
        currency: 'USD',
        rail: 'ACH',
        payee: 'account ****6789',
        transactionId: paid.get('PAY-2026-11-0001')!.id,
        sheet: 'payouts.csv',
        service: sb.url,
      }),
      { reference: 'NEVER-SENT', state: 'not-found' },
    ]);

    const runs = await runCli(['status', '--csv'], { env: {} });
    expect(runs.code, runs.stderr).toBe(0);
    const lines = runs.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'startedAt,state,sheet,rows,statuses,exitCode,finishedAt,digest,runId,host,pid,service,integratorId,approvals',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',finished,payouts.csv,12,submitted 12,0,');
    expect(lines[1]).toContain(summaryOf(ran).digest);
    expect(sb.ledger().requests.total).toBe(requests);
  });

  it('sends what it read and approved even when the sheet is replaced on disk during the run', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'approved.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const validated = await runCli(['validate', sheet, '--json'], { env: {} });
    const { digest } = summaryOf(validated);
    const run = spawnCli([
      'run',
      sheet,
      '--base-url',
      sb.url,
      '--approve',
      digest,
      '--json',
      '--rate',
      '20',
      '--concurrency',
      '1',
      '--log-format',
      'json',
      '--log-level',
      'debug',
    ]);
    expect(await run.whenLines(ANSWER_LINE, 4)).toBe(true);
    // Replaced: every amount 9999.00, and a row nobody approved.
    const rows = sampleRows();
    await writeSheet(sheet, [
      ...rows.map((r) => ({ ...r, amount: '9999.00' })),
      { ...rows[0]!, reference: 'NOT-APPROVED', amount: '9999.00' },
    ]);
    const exit = await run.exited;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(0);
    await expectOnePaymentPerRow(sb, rows);
    const results = await readCsv(summaryOf({ code: 0, stdout: exit.stdout, stderr: '' }).results);
    expect(results.map((r) => [r['reference'], r['amount'], r['result.status']])).toEqual(
      rows.map((r) => [r['reference'], r['amount'], 'submitted']),
    );
  });

  it('refuses --out that is the sheet itself (exit 2), before anything is sent', async () => {
    const sb = await testSandbox();
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const before = await readFile(sheet, 'utf8');
    const result = await runAgainst(sb, sheet, ['--out', sheet]);
    expect(result.code, result.stderr).toBe(2);
    expect(sb.ledger().requests.total).toBe(0);
    expect(await readFile(sheet, 'utf8')).toBe(before);
  });
});

describe('stderr with JSON logs', () => {
  it('holds JSON records only: the human summary is one, and run finished is the last', async () => {
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const result = await runCli(['run', sheet, '--sandbox', '--log-format', 'json'], { env: {} });
    expect(result.code, result.stderr).toBe(0);
    const records = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; lines?: string[] });
    const summary = records.find((r) => r.msg === 'summary');
    expect(summary?.lines?.[0]).toMatch(/^Rehearsed .*payouts\.csv: 12 rows against the embedded sandbox/);
    expect(summary?.lines).toContain('  submitted         12');
    expect(records.at(-1)?.msg).toBe('run finished');
  });
});
