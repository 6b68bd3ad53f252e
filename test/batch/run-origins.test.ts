/**
 * One integrator, one history, whatever the URL's spelling (docs/register.md "One integrator, one
 * history"): a run that reaches an integrator with payouts under another origin sends nothing
 * (exit 2, both origins named) until the operator declares the new origin the same service (its
 * scope and keys are used: every row is already paid) or a separate one.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectOnePaymentPerRow,
  paymentsOf,
  registerRecords,
  runAgainst,
  summaryOf,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { testRegisterPath } from '../helpers/register.js';
import { sampleRows } from '../helpers/sheets.js';

const CLEAN_SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

describe('one integrator under two spellings of the service URL', () => {
  it('pays each reference once: 127.0.0.1, then localhost refused until declared the same service', async () => {
    const sb = await testSandbox();
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const first = await runAgainst(sb, sheet, ['--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first).statuses).toMatchObject({ submitted: 12 });

    const localhost = { url: sb.url.replace('127.0.0.1', 'localhost') };
    const refused = await runAgainst(localhost, sheet, ['--json']);
    expect(refused.code).toBe(2);
    const message = JSON.parse(refused.stdout).error.message as string;
    expect(message).toContain(`already has payouts in the register under ${sb.url}`);
    expect(message).toContain(`this run reaches it as ${localhost.url}`);
    expect(message).toContain(`--same-service-as ${sb.url}`);
    expect(message).toContain('--separate-service');
    expect(paymentsOf(sb)).toHaveLength(12);

    const declared = await runAgainst(localhost, sheet, ['--json', '--same-service-as', sb.url]);
    expect(declared.code, declared.stderr).toBe(0);
    expect(summaryOf(declared).statuses).toMatchObject({ skipped: 12, submitted: 0 });
    // Remembered: the next run under that spelling needs no flag, and pays nothing again.
    const again = await runAgainst(localhost, sheet, ['--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again).statuses).toMatchObject({ skipped: 12 });
    await expectOnePaymentPerRow(sb, sampleRows());
    // One history: the payouts stay under the first origin's scope.
    expect((await registerRecords(testRegisterPath(), sb)).size).toBe(12);
  });

  it('keeps a declared separate service apart: its payouts are its own', async () => {
    const sb = await testSandbox();
    const sheet = path.join(await testDir(), 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    expect((await runAgainst(sb, sheet, ['--json'])).code).toBe(0);
    const localhost = { url: sb.url.replace('127.0.0.1', 'localhost') };
    const separate = await runAgainst(localhost, sheet, ['--json', '--separate-service']);
    expect(separate.code, separate.stderr).toBe(0);
    // The sandbox is in truth one service: it refuses the second payment of each reference or
    // pays it under the other scope's keys; either way the register keeps two histories.
    expect((await registerRecords(testRegisterPath(), sb, localhost)).size).toBe(12);
  });
});
