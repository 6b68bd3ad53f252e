// `validate` with a worker thread (src/batch/validate/parallel.ts) against the same on one thread. The
// worker runs the built script, so this test imports the built module (npm run build first).
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PreparedRow } from '../../src/batch/prepare.js';
import { BatchSummary } from '../../src/batch/summary.js';
import { withTempDir } from '../helpers/cli.js';
import {
  generateRows,
  parseCsv,
  SAMPLE_COLUMNS,
  SAMPLES_DIR,
  type SheetRow,
  writeSheet,
} from '../helpers/sheets.js';

type ValidateModule = typeof import('../../src/batch/validate/validate.js');
type ErrorsModule = typeof import('../../src/errors.js');
type PrepareModule = typeof import('../../src/batch/prepare.js');
type SqliteModule = typeof import('../../src/register/sqlite.js');
type DetailsModule = typeof import('../../src/register/details.js');
type DigestModule = typeof import('../../src/batch/digest.js');

const DIST = path.resolve(import.meta.dirname, '../../dist');
const load = async <T>(file: string): Promise<T> =>
  (await import(pathToFileURL(path.join(DIST, file)).href)) as T;

/** Valid rows with the mistakes sample's rows spread among them, a duplicate and a short row. */
async function mixedSheet(file: string, count: number): Promise<void> {
  const mistakes = parseCsv(await readFile(path.join(SAMPLES_DIR, 'payouts-mistakes.csv')));
  const rows: SheetRow[] = generateRows(count);
  for (let i = 0; i < count; i += 97) rows[i] = { ...mistakes[i % mistakes.length]!, reference: `M-${i}` };
  rows[count - 3] = { ...rows[count - 3]!, reference: rows[5]!['reference']! };
  await writeSheet(file, rows);
  await appendFile(file, '\r\n,,,\r\nSHORT-1,1.00,USD\r\n');
}

/** A register with one scope and nothing paid, in `dir`/register: validate's options for it. */
async function emptyRegister(dir: string): Promise<{ location: string; service: string }> {
  const { openSqliteRegister: openRegister } = await load<SqliteModule>('register/sqlite.js');
  await mkdir(path.join(dir, 'register'));
  const file = path.join(dir, 'register', 'register.db');
  const service = 'http://127.0.0.1:9';
  const register = openRegister(file, { create: true });
  await register.openScope({ service, integratorId: 'int-1' });
  await register.close();
  return { location: file, service };
}

/** A register in `dir`/register.db with one scope and a run begun, to record payouts in. */
async function registerWithRun(dir: string) {
  const { openSqliteRegister: openRegister } = await load<SqliteModule>('register/sqlite.js');
  const registerPath = path.join(dir, 'register.db');
  const service = 'http://127.0.0.1:9';
  const register = openRegister(registerPath, { create: true });
  const store = await register.openScope({ service, integratorId: 'int-1' });
  const now = new Date().toISOString();
  await store.beginRun({ id: 'run-1', sheet: 'may.csv', digest: 'd', host: 'h', pid: 1, startedAt: now });
  return { registerPath, service, register, store };
}

function totals(summary: BatchSummary) {
  return {
    statuses: summary.statusCounts(),
    sheet: BatchSummary.formatTotals(summary.sheetTotals),
    valid: BatchSummary.formatTotals(summary.validTotals),
  };
}

describe('validate on a worker thread', () => {
  it('writes the results, digest, totals and samples of one thread', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      const progress: number[] = [];
      const one = await validateSheet({ sheetPath, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({
        sheetPath,
        outPath: path.join(dir, 'two.csv'),
        worker: true,
        onProgress: (n) => progress.push(n),
      });
      // Compared as text: a deep comparison of megabyte buffers takes seconds.
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
      expect(totals(two.summary)).toEqual(totals(one.summary));
      // --max-amount reads the largest valid amount per currency: the worker carries it over.
      expect(two.summary.largestValid.size).toBeGreaterThan(0);
      expect(two.summary.largestValid).toEqual(one.summary.largestValid);
      expect(two.summary.rows).toBe(6001);
      expect(two.summary.byStatus.invalid).toBeGreaterThan(60);
      expect(two.invalidSamples).toEqual(one.invalidSamples);
      expect(two.invalidSamples).toHaveLength(20);
      expect(progress.at(-1)).toBe(6001);
    });
  });

  it('checks the sheet again on one thread when the worker reaches its memory limit', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      const register = await emptyRegister(dir);
      const limits: number[] = [];
      const one = await validateSheet({
        sheetPath,
        register,
        outPath: path.join(dir, 'one.csv'),
        worker: false,
      });
      // 8 MB: less than a worker needs to start.
      const two = await validateSheet({
        sheetPath,
        register,
        outPath: path.join(dir, 'two.csv'),
        worker: true,
        workerOldGenerationMb: 8,
        onWorkerOutOfMemory: (limit) => limits.push(limit),
      });
      expect(limits).toEqual([8]);
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
      expect(totals(two.summary)).toEqual(totals(one.summary));
      // Nothing of the worker's reading is left beside the results file.
      expect((await readdir(dir)).sort()).toEqual(['one.csv', 'register', 'sheet.csv', 'two.csv']);
      // At the default limit, the worker holds the same sheet.
      const three = await validateSheet({
        sheetPath,
        register,
        outPath: path.join(dir, 'three.csv'),
        worker: true,
        onWorkerOutOfMemory: (limit) => limits.push(limit),
      });
      expect(limits).toEqual([8]);
      expect(three.digest).toBe(one.digest);
    });
  });

  it('reads a register as one thread does: paid, used for other details, in doubt, failed', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { prepareSheet } = await load<PrepareModule>('batch/prepare.js');
    const { detailsOf } = await load<DetailsModule>('register/details.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      // A reference cell the mapper trims and strips of a zero-width space: found all the same.
      const text = await readFile(sheetPath, 'utf8');
      await writeFile(sheetPath, text.replace('\r\nGEN-000011,', '\r\n" GEN-000011\u200b",'));
      const { registerPath, service, register, store } = await registerWithRun(dir);
      // Of the first 3,000 valid rows, by reference number: 0 paid as they are, 1 paid for
      // another amount, 2 in doubt, 3 failed, 4 not in the register.
      const states = new Map<string, number>();
      const prepared = await prepareSheet({ sheetPath });
      for await (const batch of prepared.batches) {
        const valid = batch.filter((row) => row.issues.length === 0 && row.raw.rowNumber <= 3001);
        const requests = valid.map((row, i) => {
          const kind = row.raw.rowNumber % 5;
          states.set(row.payout.reference, kind);
          const details = detailsOf(row.payout, (canonical) => store.fingerprint(canonical));
          const amount = kind === 1 ? '999.99' : details.amount;
          return {
            reference: row.payout.reference,
            details: { ...details, payee: details.payee, amount },
            idempotencyKey: `key-${i}`,
          };
        });
        await store.claim('run-1', requests, () => 'claim');
        for (const { reference } of requests) {
          const kind = states.get(reference)!;
          if (kind === 4) continue;
          const state = (['submitted', 'submitted', 'unknown', 'failed'] as const)[kind]!;
          await store.update('run-1', reference, { state, transactionId: `tx-${reference}`, error: null });
        }
      }
      await store.finishRun('run-1', { rows: 3000, statuses: {}, exitCode: 0 });
      await register.close();
      // A reference the sheet repeats is invalid on every row, the first too, whatever the
      // register says of it.
      for (const reference of prepared.repeats().keys()) states.delete(reference);
      expect(states.get('GEN-000011')).toBe(12 % 5);

      const options = { sheetPath, register: { location: registerPath, service } };
      const one = await validateSheet({ ...options, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({ ...options, outPath: path.join(dir, 'two.csv'), worker: true });
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.summary.statusCounts()).toEqual(one.summary.statusCounts());
      expect(two.invalidSamples).toEqual(one.invalidSamples);
      const count = (kind: number) => [...states.values()].filter((k) => k === kind).length;
      expect(two.summary.byStatus.skipped).toBe(count(0));
      expect(two.summary.byStatus.unknown).toBe(count(2));
      expect(two.summary.byStatus.failed).toBe(count(3));
      const results = parseCsv(await readFile(two.resultsPath));
      const row12 = results.find((row) => row['result.row'] === '12')!;
      expect(row12['result.status']).toBe('unknown');
      const row11 = results.find((row) => row['result.row'] === '11')!;
      expect(row11['result.status']).toBe('invalid');
      expect(row11['result.errors']).toMatch(
        /^reference GEN-000010 was already used for other details: paid \(submitted\) on .* from sheet may\.csv as transaction tx-GEN-000010 with USD 999\.99 by /,
      );
    });
  });

  it('hashes the rows the register knows as one thread does: a refused row stays in the digest', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { prepareSheet } = await load<PrepareModule>('batch/prepare.js');
    const { detailsOf } = await load<DetailsModule>('register/details.js');
    await withTempDir(async (dir) => {
      // No reference or payment repeated: the worker's reading is the last, its digest the one given.
      const sheetPath = path.join(dir, 'sheet.csv');
      const rows = generateRows(3000).map((row, i) =>
        i % 7 === 0 && row['currency'] === 'USD'
          ? { ...row, currency: 'usd', amount: `1,${String(i % 1000).padStart(3, '0')}.5` }
          : row,
      );
      rows[20] = { ...rows[20]!, routingNumber: '12' };
      await writeSheet(sheetPath, rows);
      const { registerPath, service, register, store } = await registerWithRun(dir);
      // Every third row paid as it is, every third but one paid for another amount (refused).
      const prepared = await prepareSheet({ sheetPath });
      for await (const batch of prepared.batches) {
        const requests = batch
          .filter((row) => row.issues.length === 0 && row.raw.rowNumber % 3 !== 2)
          .map((row, i) => {
            const details = detailsOf(row.payout, (canonical) => store.fingerprint(canonical));
            const amount = row.raw.rowNumber % 3 === 1 ? '999.99' : details.amount;
            return {
              reference: row.payout.reference,
              details: { ...details, payee: details.payee, amount },
              idempotencyKey: `key-${row.raw.rowNumber}-${i}`,
            };
          });
        await store.claim('run-1', requests, () => 'claim');
        for (const { reference } of requests)
          await store.update('run-1', reference, {
            state: 'submitted',
            transactionId: `tx-${reference}`,
            error: null,
          });
      }
      await store.finishRun('run-1', { rows: 2000, statuses: {}, exitCode: 0 });
      await register.close();
      const options = { sheetPath, register: { location: registerPath, service } };
      const one = await validateSheet({ ...options, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({ ...options, outPath: path.join(dir, 'two.csv'), worker: true });
      expect(two.summary.byStatus.invalid).toBe(1 + 999);
      expect(two.summary.byStatus.skipped).toBe(1000);
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
    });
  });

  it("leaves the sheet's own payouts out of its payees' histories on one reading, on a worker as on one thread", async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { prepareSheet } = await load<PrepareModule>('batch/prepare.js');
    const { openSqliteRegister: openRegister } = await load<SqliteModule>('register/sqlite.js');
    const { detailsOf } = await load<DetailsModule>('register/details.js');
    const { BatchDigest } = await load<DigestModule>('batch/digest.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await writeSheet(sheetPath, generateRows(1500));
      const service = 'http://127.0.0.1:9';
      // This sheet paid in part, as a run of it leaves the register: its first 600 rows paid,
      // each payee's history naming the sheet's tag. The same payouts in a second register
      // without histories: every payee is new to both, since the sheet's own payouts do not count.
      const prepared = await prepareSheet({ sheetPath });
      const rows: PreparedRow[] = [];
      for await (const batch of prepared.batches) rows.push(...batch);
      const digest = new BatchDigest(prepared.header.index);
      for (const row of rows) digest.add(row);
      const { tag } = digest.finish();
      const registers: string[] = [];
      for (const histories of [true, false]) {
        const location = path.join(dir, `register-${histories}.db`);
        registers.push(location);
        const register = openRegister(location, { create: true });
        const store = await register.openScope({ service, integratorId: 'int-1' });
        const now = new Date().toISOString();
        await store.beginRun({
          id: 'run-1',
          sheet: 'sheet.csv',
          digest: 'd',
          host: 'h',
          pid: 1,
          startedAt: now,
        });
        const paid = rows.slice(0, 600);
        const requests = paid.map((row, i) => ({
          reference: row.payout.reference,
          details: detailsOf(row.payout, (canonical) => store.fingerprint(canonical)),
          idempotencyKey: `key-${i}`,
        }));
        await store.claim('run-1', requests, () => 'claim');
        for (const [i, { reference, details }] of requests.entries()) {
          await store.update('run-1', reference, { state: 'submitted', transactionId: `tx-${reference}` });
          const payee = paid[i]!.payee!;
          if (!histories) continue;
          await store.recordPayment(
            store.fingerprint(`payee:${payee.key}`),
            {
              account: details.payee,
              accountHint: details.payeeHint,
              reference,
              rail: details.rail,
              paidAt: now,
              amount: details.amount,
              currency: details.currency,
            },
            tag,
            payee.name,
          );
        }
        await store.finishRun('run-1', { rows: 600, statuses: {}, exitCode: 0 });
        await register.close();
      }
      const readings = (report: { rows: number[] }) =>
        report.rows.filter((done, i) => i === 0 || done < report.rows[i - 1]!).length;
      const validated = async (location: string, worker: boolean) => {
        const progress = { rows: [] as number[] };
        const report = await validateSheet({
          sheetPath,
          register: { location, service },
          outPath: path.join(dir, `out-${registers.indexOf(location)}-${worker}.csv`),
          worker,
          onProgress: (done) => progress.rows.push(done),
        });
        // The two registers were written a moment apart: their times are left out.
        const results = (await readFile(report.resultsPath, 'latin1')).replace(
          /\d{4}-\d\d-\d\dT[\d:]+Z/g,
          'T',
        );
        return { report, results, readings: readings(progress) };
      };
      const plain = await validated(registers[1]!, false);
      expect(plain.report.summary.byStatus.skipped).toBe(600);
      expect(plain.report.warnings.counts.newPayee).toBe(900);
      for (const worker of [false, true]) {
        const own = await validated(registers[0]!, worker);
        expect(own.results).toBe(plain.results);
        expect(own.report.digest).toBe(plain.report.digest);
        expect(own.readings).toBe(1);
      }
    });
  });

  it('compares the sheet with the previous batch as one thread does, the batch read by the main thread', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { prepareSheet } = await load<PrepareModule>('batch/prepare.js');
    const { openSqliteRegister: openRegister } = await load<SqliteModule>('register/sqlite.js');
    const { detailsOf } = await load<DetailsModule>('register/details.js');
    await withTempDir(async (dir) => {
      // October paid 3,000 rows (every fourth for 1.00 instead); November's sheet is its first 2,500.
      const october = path.join(dir, 'october.csv');
      const rows = generateRows(3000);
      await writeSheet(october, rows);
      const sheetPath = path.join(dir, 'november.csv');
      await writeSheet(sheetPath, rows.slice(0, 2500));
      const location = path.join(dir, 'register.db');
      const service = 'http://127.0.0.1:9';
      const register = openRegister(location, { create: true });
      const store = await register.openScope({ service, integratorId: 'int-1' });
      const at = '2026-10-25T09:00:00.000Z';
      await store.beginRun({
        id: 'run-oct',
        sheet: 'october.csv',
        digest: 'oct',
        host: 'h',
        pid: 1,
        startedAt: at,
      });
      let i = 0;
      for await (const batch of (await prepareSheet({ sheetPath: october })).batches) {
        const requests = batch.map((row) => {
          const details = detailsOf(row.payout, (canonical) => store.fingerprint(canonical));
          const amount = i % 4 === 0 ? '1.00' : details.amount;
          return {
            row,
            reference: `OCT-${i}`,
            details: { ...details, payee: details.payee, amount },
            idempotencyKey: `key-${i++}`,
          };
        });
        await store.claim('run-oct', requests, () => 'claim');
        for (const { row, reference } of requests) {
          await store.update('run-oct', reference, {
            state: 'submitted',
            transactionId: `tx-${reference}`,
            payeeKey: store.fingerprint(`payee:${row.payee!.key}`),
            payeeName: row.payee!.name,
          });
        }
      }
      await store.finishRun('run-oct', { rows: 3000, statuses: {}, exitCode: 0 });
      await register.close();

      const options = { sheetPath, register: { location, service } };
      const one = await validateSheet({ ...options, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({ ...options, outPath: path.join(dir, 'two.csv'), worker: true });
      const since = JSON.parse(JSON.stringify(two.sincePrevious));
      expect(since).toEqual(JSON.parse(JSON.stringify(one.sincePrevious)));
      expect(since.batch).toEqual({ sheet: 'october.csv', at, rows: 3000, chosenBy: 'latest' });
      expect(since.missingPayees.length).toBeGreaterThan(0);
      expect(since.changedAmounts.length).toBeGreaterThan(0);
      expect(since.totals).toEqual(JSON.parse(JSON.stringify(one.sincePrevious!.totals)));
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
    });
  });

  it('reads grouped amounts, usd and a totals row as one thread does', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      const rows: SheetRow[] = generateRows(3000).map((row, i) =>
        i % 10 === 0 ? { ...row, amount: '1,250.00', currency: 'usd' } : row,
      );
      await writeSheet(sheetPath, rows);
      await appendFile(sheetPath, 'TOTAL,1.00,USD\r\n');
      const one = await validateSheet({ sheetPath, outPath: path.join(dir, 'one.csv'), worker: false });
      const two = await validateSheet({ sheetPath, outPath: path.join(dir, 'two.csv'), worker: true });
      expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
      expect(two.digest).toBe(one.digest);
      expect(totals(two.summary)).toEqual(totals(one.summary));
      expect(Object.keys(BatchSummary.formatTotals(two.summary.sheetTotals))).not.toContain('usd');
      expect(two.summary.rows).toBe(3000);
      expect(two.summary.groupedAmounts).toBe(300);
      expect(two.summary.totalsRows).toEqual(one.summary.totalsRows);
      expect(two.summary.totalsRows[0]).toMatch(
        /^row 3002 is the totals row, not a payout: its amount USD 1\.00 does not match/,
      );
      expect(two.guardError?.message).toBe(one.guardError?.message);
      expect(two.guardError?.message).toMatch(
        /^control totals do not match, so nothing was sent: the totals row \(row 3002\)/,
      );
    });
  });

  it('reads the decimal commas of a semicolon sheet as one thread does, with and without a register', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    await withTempDir(async (dir) => {
      // Excel's CSV where the comma marks the decimals: ';' between cells, '1.250,00' amounts.
      const sheetPath = path.join(dir, 'sheet.csv');
      const rows: SheetRow[] = generateRows(3000).map((row, i) => ({
        ...row,
        amount: i % 2 ? '1.250,00' : '7,5',
      }));
      const cell = (text: string) => (/[";\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
      const lines = [SAMPLE_COLUMNS, ...rows.map((row) => SAMPLE_COLUMNS.map((c) => row[c] ?? ''))];
      await writeFile(sheetPath, `${lines.map((cells) => cells.map(cell).join(';')).join('\r\n')}\r\n`);
      const register = await emptyRegister(dir);
      for (const withRegister of [false, true]) {
        const options = { sheetPath, ...(withRegister ? { register } : {}) };
        const one = await validateSheet({ ...options, outPath: path.join(dir, 'one.csv'), worker: false });
        const two = await validateSheet({ ...options, outPath: path.join(dir, 'two.csv'), worker: true });
        expect(await readFile(two.resultsPath, 'latin1')).toBe(await readFile(one.resultsPath, 'latin1'));
        expect(two.digest).toBe(one.digest);
        expect(two.summary.statusCounts()).toEqual({ valid: 3000 });
        // 1,500 rows of 1250.00 and 1,500 of 7.50 in all: 1,886,250.00.
        expect(BatchSummary.formatTotals(two.summary.validTotals)).toEqual({
          BRL: '416245.00',
          COP: '313117.50',
          MXN: '313117.50',
          USD: '843770.00',
        });
      }
    });
  });

  it('stops with the SheetError of the reader and leaves no results file, with and without a register', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { SheetError } = await load<ErrorsModule>('errors.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'sheet.csv');
      await mixedSheet(sheetPath, 6000);
      await appendFile(sheetPath, 'LATE-1,"1.00,USD,ACH\r\nLATE-2,1.00,USD,ACH\r\n');
      const register = await emptyRegister(dir);
      const runs = [
        { worker: false },
        { worker: true },
        // With a register the main thread sends its rows to the worker (parallel.ts).
        { worker: true, register },
      ];
      const failures = await Promise.all(
        runs.map((options, i) =>
          validateSheet({ sheetPath, outPath: path.join(dir, `out-${i}.csv`), ...options }).catch(
            (error: unknown) => error,
          ),
        ),
      );
      for (const error of failures) {
        expect(error).toBeInstanceOf(SheetError);
        expect((error as Error).message).toBe((failures[0] as Error).message);
      }
      expect((failures[0] as Error).message).toMatch(/a quoted cell that starts in row 6005 is never closed/);
      expect(await readdir(dir)).toEqual(['register', 'sheet.csv']);
    });
  });

  it('refuses a sheet of headers and blank lines as one thread does, with and without a register', async () => {
    const { validateSheet } = await load<ValidateModule>('batch/validate/validate.js');
    const { SheetError } = await load<ErrorsModule>('errors.js');
    await withTempDir(async (dir) => {
      const sheetPath = path.join(dir, 'blank.csv');
      await writeFile(sheetPath, `reference,amount,currency,type\r\n${',,,\r\n'.repeat(5000)}`);
      const register = await emptyRegister(dir);
      for (const options of [{}, { register }]) {
        const error = await validateSheet({ sheetPath, worker: true, ...options }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SheetError);
        expect((error as Error).message).toBe(
          `${sheetPath}: has column headers but no payout rows: is this the right file?`,
        );
      }
      expect(await readdir(dir)).toEqual(['blank.csv', 'register']);
    });
  });
});
