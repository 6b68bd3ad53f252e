/**
 * The run's scratch space (TMPDIR: the sheet's snapshot, the rows' warnings and results) is a
 * disk that fills, turns read-only or is missing (docs/container.md "Scratch space"): before
 * sending that is exit 2 in words naming the folder; once sending has begun, exit 6 with the
 * summary and a results file true to the ledger; never a crash, never "internal error". A rerun
 * stopped early never says "not sent" of a row an earlier run paid.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import {
  type ChildExit,
  expectOnePaymentPerRow,
  paymentsOf,
  SANDBOX_ENV,
  spawnCli,
  testSandbox,
  testSheet,
  whenPaid,
} from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { readCsv, type SheetRow } from '../helpers/sheets.js';
import { CAN_MOUNT, MOUNT_NOTE, mountTmpfs, remountReadOnly } from '../helpers/tmpfs.js';

async function setup(count: number, prefix: string) {
  const sb = await testSandbox({ latencyMs: 5 });
  const { sheet, rows } = await testSheet(count, prefix);
  const dir = path.dirname(sheet);
  const scratch = path.join(dir, 'scratch');
  await mkdir(scratch);
  const register = initTestRegister(path.join(dir, 'state', 'register.db'));
  const results = path.join(dir, `${prefix.toLowerCase()}.results.csv`);
  const run = (args: string[] = [], tmp = scratch) =>
    spawnCli(
      ['run', sheet, '--base-url', sb.url, '--json', '--rate', '3000', '--concurrency', '8', ...args],
      {
        ...SANDBOX_ENV,
        PAYOUTS_REGISTER: register,
        TMPDIR: tmp,
      },
    );
  return { sb, dir, sheet, rows, scratch, results, run };
}

/** One JSON summary on stdout, no stack trace anywhere, never the words of a bug. */
function expectSaidInWords(exit: ChildExit, code: number): void {
  expect(exit.code, exit.stderr).toBe(code);
  const lines = exit.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ exitCode: code });
  expect(exit.stderr).not.toMatch(/internal error|\n\s+at |unhandled/i);
}

/**
 * The results file holds every row in sheet order, and never contradicts the ledger: a row the
 * ledger paid is submitted or completed with that transaction, or unknown; "not sent" only for
 * a row it did not pay.
 */
async function expectTrueToTheLedger(sb: SandboxHandle, results: string, rows: readonly SheetRow[]) {
  const written = await readCsv(results);
  expect(written.map((r) => r['reference'])).toEqual(rows.map((r) => r['reference']));
  const paid = new Map(paymentsOf(sb).map((t) => [t.reference, t.id]));
  for (const row of written) {
    const transaction = paid.get(row['reference']!);
    const status = row['result.status'];
    if (transaction === undefined) {
      expect(['skipped', 'unknown'], row['reference']).toContain(status);
      continue;
    }
    // skipped: found paid by the register, with its transaction.
    expect(
      ['submitted', 'completed', 'unknown', 'skipped'],
      `${row['reference']}: ${row['result.errors']}`,
    ).toContain(status);
    if (status !== 'unknown') expect(row['result.transactionId']).toBe(transaction);
    expect(row['result.errors']).not.toMatch(/^not sent/);
  }
  return written;
}

describe.skipIf(!CAN_MOUNT)(`the run's scratch space${MOUNT_NOTE}`, { timeout: 120_000 }, () => {
  it('filled mid-run by another writer: exit 6 with the summary and every row true to the ledger; a rerun with room pays the rest once', async () => {
    const s = await setup(6000, 'FILL');
    mountTmpfs(s.scratch, '64m');
    const run = s.run();
    await whenPaid(s.sb, run, 200);
    // Another job on the same emptyDir writes until the disk is full.
    const filler = path.join(s.scratch, 'filler');
    await writeFile(filler, Buffer.alloc(64 * 1024 * 1024)).catch(() => {});
    const exit = await run.exited;
    expectSaidInWords(exit, 6);
    expect(exit.stderr).toContain(`the run's scratch space in ${s.scratch} (TMPDIR`);
    expect(exit.stderr).toContain('no space left on the device');
    const paid = paymentsOf(s.sb).length;
    expect(paid).toBeGreaterThanOrEqual(200);
    expect(paid).toBeLessThan(s.rows.length);
    await expectTrueToTheLedger(s.sb, s.results, s.rows);
    // Its private folder and its run lock are gone: only the filler and the locks' folder are left.
    const left = await readdir(s.scratch);
    expect(left.filter((name) => name.startsWith('payouts-run-'))).toEqual([]);
    for (const folder of left.filter((name) => name.startsWith('payouts-live-')))
      expect(await readdir(path.join(s.scratch, folder))).toEqual([]);

    await rm(filler);
    const again = await s.run(['--retry-unknown']).exited;
    expect(again.code, again.stderr).toBe(0);
    await expectOnePaymentPerRow(s.sb, s.rows);
  });

  it.each(['missing', 'read-only', 'full'] as const)(
    'a scratch folder %s before sending: exit 2 naming it, nothing sent',
    async (how) => {
      const s = await setup(50, `SCRATCH-${how.toUpperCase().replace('-', '')}`);
      let tmp = s.scratch;
      if (how === 'missing') tmp = path.join(s.dir, 'not-mounted');
      else {
        mountTmpfs(s.scratch, how === 'full' ? '64k' : '8m');
        if (how === 'read-only') remountReadOnly(s.scratch);
        else await writeFile(path.join(s.scratch, 'filler'), Buffer.alloc(128 * 1024)).catch(() => {});
      }
      const exit = await s.run([], tmp).exited;
      expectSaidInWords(exit, 2);
      expect(exit.stderr).toContain(
        `the run's scratch space in ${tmp} (TMPDIR: free space there, or set TMPDIR`,
      );
      expect(exit.stderr).toMatch(
        how === 'missing'
          ? /cannot be used: no such file or directory/
          : how === 'read-only'
            ? /cannot be used: the file system is read-only/
            : /has 0\.0 MB free, and this sheet needs about [\d.]+ MB more there/,
      );
      expect(s.sb.ledger().requests.total).toBe(0);
    },
  );

  it('too small for the sheet from the start: exit 2 before sending, with the space needed and free', async () => {
    const s = await setup(8000, 'SMALL');
    mountTmpfs(s.scratch, '3m');
    const exit = await s.run().exited;
    expectSaidInWords(exit, 2);
    expect(exit.stderr).toMatch(
      /has 3\.0 MB free, and this sheet needs about [\d.]+ MB more there for the (snapshot of its rows|warnings and results of its 8,000 rows)\. Nothing was sent/,
    );
    expect(s.sb.ledger().requests.total).toBe(0);
  });
});

/** Resolves once a run has begun reading its sheet: its private folder is in the scratch space. */
async function whenReading(scratch: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await readdir(scratch)).some((name) => name.startsWith('payouts-run-'))) {
    if (Date.now() > deadline) throw new Error('the run never began reading its sheet');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a rerun stopped while it reads and judges', { timeout: 180_000 }, () => {
  it('SIGTERM at several moments of its reading and judging: exit 5, and no row the first run paid reads "not sent" or loses its transaction', async () => {
    const s = await setup(6000, 'STOP');
    const first = await s.run().exited;
    expect(first.code, first.stderr).toBe(0);
    for (const delayMs of [0, 100, 250, 450]) {
      const rerun = s.run();
      await whenReading(s.scratch);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      rerun.child.kill('SIGTERM');
      const exit = await rerun.exited;
      expect(exit.code, `${delayMs} ms: ${exit.stderr}`).toBe(5);
      const written = await expectTrueToTheLedger(s.sb, s.results, s.rows);
      expect(written.every((row) => row['result.transactionId'] !== '')).toBe(true);
    }
    expect(paymentsOf(s.sb)).toHaveLength(s.rows.length);
  });
});
