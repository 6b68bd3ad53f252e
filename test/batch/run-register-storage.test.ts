/**
 * The register's own storage failures: a register that cannot be created or
 * written before anything is sent is exit 2 with nothing sent; one that fails after sending
 * began is exit 6, with the results file written. Never exit 70.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'libsql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { openSqliteRegister as openRegister } from '../../src/register/sqlite.js';
import { runCli } from '../helpers/cli.js';
import {
  expectOnePaymentPerRow,
  paymentsOf,
  runAgainst,
  SANDBOX_ENV,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE, generateRows, readCsv, writeSheet } from '../helpers/sheets.js';
import { CAN_MOUNT, mountTmpfs } from '../helpers/tmpfs.js';

const canMount = CAN_MOUNT;

describe('payouts run when the register cannot be used', () => {
  it('is exit 2 with nothing sent where no register is, and register init says why it cannot make one there', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    await writeFile(path.join(dir, 'not-a-folder'), 'x');
    const register = path.join(dir, 'not-a-folder', 'register.db');
    const result = await runAgainst(sb, sheet, ['--log-format', 'text'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
    });
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain(
      `payouts: there is no payouts register at ${register} (named by PAYOUTS_REGISTER)`,
    );
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(sb.ledger().requests.total).toBe(0);
    const init = await runCli(['register', 'init', register, '--log-format', 'text']);
    expect(init.code, init.stderr).toBe(EXIT.usage);
    expect(init.stderr).toContain(
      `payouts: the register ${register} cannot be created: a part of the path is not a directory (ENOTDIR)`,
    );
  });

  it('slow: is exit 2 with nothing sent when another process holds the register past the busy timeout', {
    timeout: 60_000,
  }, async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const register = path.join(dir, 'register.db');
    // Another process's long write: the register exists and stays locked for the whole run.
    const created = openRegister(register, { create: true });
    await created.openScope({ service: 'http://127.0.0.1:9', integratorId: 'x' });
    await created.close();
    const holder = new Database(register);
    holder.exec('BEGIN EXCLUSIVE');
    onTestFinished(() => {
      holder.exec('ROLLBACK');
      holder.close();
    });
    const result = await runAgainst(sb, sheet, ['--log-format', 'text'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
    });
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(
      /^payouts: the register \S+ cannot be (opened|written): it is locked by another payouts process \(waited past the busy timeout\) \(SQLITE_BUSY\)$/m,
    );
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(paymentsOf(sb)).toEqual([]);
  });

  it.skipIf(!canMount)('is exit 2 with nothing sent when the disk of the register is full', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(CLEAN_SAMPLE, sheet);
    const state = path.join(dir, 'state');
    await mkdir(state);
    mountTmpfs(state, '512k');
    // Made while there was room; the disk filled up afterwards.
    const register = initTestRegister(path.join(state, 'register.db'));
    await writeFile(path.join(state, 'filler'), Buffer.alloc(1024 * 1024)).catch(() => {});
    const result = await runAgainst(sb, sheet, ['--log-format', 'text'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
    });
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(
      /^payouts: the register \S+ cannot be (created|opened|written): no space left on the device \(the disk is full\) \((ENOSPC|SQLITE_FULL)\)$/m,
    );
    expect(sb.ledger().requests.total).toBe(0);
  });

  it.skipIf(!canMount)(
    'is exit 6 with the results written when the register fills its disk after sending began',
    async () => {
      const sb = await testSandbox({ latencyMs: 1 });
      const dir = await testDir();
      const sheet = path.join(dir, 'filling.csv');
      const rows = generateRows(400, { prefix: 'FULL' });
      await writeSheet(sheet, rows);
      const state = path.join(dir, 'state');
      await mkdir(state);
      // Room to create the register and pay some rows, not all.
      mountTmpfs(state, '320k');
      const register = initTestRegister(path.join(state, 'register.db'));
      const result = await runAgainst(
        sb,
        sheet,
        ['--json', '--log-format', 'text', '--rate', '2000', '--concurrency', '8'],
        {
          ...SANDBOX_ENV,
          PAYOUTS_REGISTER: register,
        },
      );
      expect(result.code, result.stderr).toBe(EXIT.unavailable);
      expect(result.stderr).toContain(
        `the register ${register} cannot be written: no space left on the device (the disk is full)`,
      );
      expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
      const payments = paymentsOf(sb);
      expect(payments.length).toBeGreaterThan(0);
      expect(payments.length).toBeLessThan(rows.length);
      // The results file was written, every row, and never contradicts the ledger: a paid
      // row is submitted with its transaction id (or unknown), "not sent" only if unpaid.
      const results = await readCsv(path.join(dir, 'filling.results.csv'));
      expect(results).toHaveLength(rows.length);
      const paid = new Map(payments.map((t) => [t.reference, t.id]));
      for (const row of results) {
        const reference = row['reference']!;
        if (paid.has(reference)) {
          expect(['submitted', 'unknown'], `${reference}: ${row['result.errors']}`).toContain(
            row['result.status'],
          );
          if (row['result.status'] === 'submitted')
            expect(row['result.transactionId']).toBe(paid.get(reference));
        } else {
          expect(row['result.status'], reference).toBe('skipped');
          expect(row['result.errors']).toMatch(/^not sent: /);
        }
      }
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as { exitCode?: number };
      expect(summary.exitCode).toBe(EXIT.unavailable);
      expect(await readFile(sheet, 'utf8')).toContain('FULL-000001');

      // Space freed: the next run settles what was in doubt under the same keys and pays the
      // rest, each row once.
      execFileSync('mount', ['-o', 'remount,size=16m', state], { stdio: 'ignore' });
      const again = await runAgainst(
        sb,
        sheet,
        ['--json', '--retry-unknown', '--rate', '2000', '--concurrency', '8'],
        {
          ...SANDBOX_ENV,
          PAYOUTS_REGISTER: register,
        },
      );
      expect(again.code, again.stderr).toBe(EXIT.ok);
      await expectOnePaymentPerRow(sb, rows);
    },
  );
});
