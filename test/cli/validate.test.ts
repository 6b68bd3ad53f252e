import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';
import { testRegisterPath } from '../helpers/register.js';

const samples = path.resolve(import.meta.dirname, '../../samples');

// Without a terminal validate's logs (and its errors) are JSON lines: tests that read a message
// as a person would ask for text.
const TEXT_LOGS = ['--log-format', 'text'];

async function readResults(file: string): Promise<Record<string, string>[]> {
  return parse(await readFile(file), { columns: true, bom: true }) as Record<string, string>[];
}

describe('payouts validate on the clean sample', () => {
  it('finds every row valid, exits 0, and reports counts, totals and the digest as JSON', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'payouts-clean.csv');
      await copyFile(path.join(samples, 'payouts-clean.csv'), sheet);
      const result = await runCli(['validate', sheet, '--json']);
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.rows).toBe(12);
      expect(summary.statuses).toEqual({
        valid: 12,
        invalid: 0,
        submitted: 0,
        completed: 0,
        failed: 0,
        unknown: 0,
        skipped: 0,
      });
      expect(summary.totals).toEqual({ BRL: '2490.90', COP: '3150000.00', MXN: '19200.00', USD: '24905.74' });
      expect(summary.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(summary.results).toBe(path.join(dir, 'payouts-clean.results.csv'));
      expect(summary.register).toBe(testRegisterPath());

      const rows = await readResults(summary.results);
      expect(rows).toHaveLength(12);
      expect(rows.map((r) => r['result.status'])).toEqual(Array(12).fill('valid'));
      expect(rows.map((r) => r['result.row'])).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 2)));
      expect(rows[0]!['routingNumber']).toBe('021000021');
      expect(Object.keys(rows[0]!).slice(-8)).toEqual([
        'result.row',
        'result.status',
        'result.errors',
        'result.warnings',
        'result.beneficiaryId',
        'result.recipientId',
        'result.simulationId',
        'result.transactionId',
      ]);
      expect(result.stderr).toContain(`Batch digest: ${summary.digest}`);
    });
  });

  it('gives the same digest for the same sheet and a different one when an amount changes', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'a.csv');
      const text = await readFile(path.join(samples, 'payouts-clean.csv'), 'utf8');
      await writeFile(sheet, text);
      const first = JSON.parse((await runCli(['validate', sheet, '--json'])).stdout).digest;
      const again = JSON.parse((await runCli(['validate', sheet, '--json'])).stdout).digest;
      await writeFile(sheet, text.replace('2500.00', '2500.01'));
      const changed = JSON.parse((await runCli(['validate', sheet, '--json'])).stdout).digest;
      expect(again).toBe(first);
      expect(changed).not.toBe(first);
    });
  });
});

describe('payouts validate on a row whose cells shifted', () => {
  it('totals no amount under a cell that is not a currency code', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'shifted.csv');
      const [header, first, second] = (await readFile(path.join(samples, 'payouts-clean.csv'), 'utf8')).split(
        '\n',
      );
      // An unquoted "1,000.00": the row has one cell too many, and its currency cell reads "000.00".
      await writeFile(sheet, `${header}\n${first}\n${second!.replace(/^([^,]*),[^,]*,/, '$1,1,000.00,')}\n`);
      const result = await runCli(['validate', sheet, '--json', '--no-report']);
      const summary = JSON.parse(result.stdout);
      expect(summary.statuses).toMatchObject({ valid: 1, invalid: 1 });
      expect(Object.keys(summary.totals)).toEqual(['USD']);
      expect(summary.totals).toEqual({ USD: '2500.00' });
      expect(summary.untotalledRows).toBe(1);
    });
  });
});

describe('payouts validate on the sample with typical mistakes', () => {
  it('says how many rows are in no total because their amount could not be read', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'mistakes.csv');
      await copyFile(path.join(samples, 'payouts-mistakes.csv'), sheet);
      const result = await runCli(['validate', sheet, '--json']);
      const summary = JSON.parse(result.stdout);
      // Row 3's amount "1,250" reads two ways: it is in neither total.
      expect(summary.untotalledRows).toBeGreaterThanOrEqual(1);
      const n = summary.untotalledRows as number;
      expect(result.stderr).toContain(
        `${n} row${n === 1 ? ' has' : 's have'} an amount or currency that could not be read`,
      );
    });
  });

  it('marks each bad row invalid with every message, word for word, and exits 1', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'mistakes.csv');
      await copyFile(path.join(samples, 'payouts-mistakes.csv'), sheet);
      const out = path.join(dir, 'out.csv');
      const result = await runCli(['validate', sheet, '--out', out]);
      expect(result.code).toBe(1);
      const rows = await readResults(out);
      const byRow = new Map(rows.map((r) => [r['result.row'], r]));
      expect(rows.every((r) => r['result.status'] === 'invalid')).toBe(true);
      const errorsOf = (row: number) => byRow.get(String(row))!['result.errors']!;
      expect(errorsOf(2)).toContain('routingNumber must be 9 characters long');
      expect(errorsOf(3)).toContain(
        'amount "1,250" is ambiguous: it is 1250.00 if the separator groups thousands, or 1.25 if it marks the decimals',
      );
      expect(errorsOf(4)).toContain(
        'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
      );
      expect(errorsOf(5)).toContain('routingNumber is invalid');
      expect(errorsOf(5)).toContain(
        'The field recipient.countryOfIncorporation is required when recipient.businessName is provided',
      );
      expect(errorsOf(5)).toContain('bankAddress must be provided');
      expect(errorsOf(5)).toContain(
        'recipientAddress.state must be provided and must be 1-3 letter ISO state code',
      );
      expect(errorsOf(5)).toContain(
        'recipientAddress.country must be provided and must be 2-letter ISO country code',
      );
      expect(errorsOf(6)).toContain(
        'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
      );
      expect(errorsOf(6)).toContain('iban is invalid');
      expect(errorsOf(7)).toContain('bankAddress.country should be WIRE not SWIFT when country is US');
      expect(errorsOf(8)).toContain('clabe has an invalid checksum');
      expect(errorsOf(8)).toContain('receiverName must be provided');
      expect(errorsOf(8)).toMatch(/currency/);
      expect(errorsOf(9)).toContain('pixKey must be provided');
      expect(errorsOf(9)).toContain('documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)');
      expect(errorsOf(10)).toContain('accountType must be CHECKING or SAVINGS');
      expect(errorsOf(10)).toContain('bankCode must be provided');
      expect(errorsOf(10)).toContain('documentId must be provided for third party withdrawals');
      expect(errorsOf(10)).toContain('documentType must be provided for third party withdrawals');
      expect(errorsOf(10)).toContain('email must be provided for third party withdrawals');
      expect(errorsOf(11)).toContain(
        'The field recipient.individualName or recipient.businessName is required',
      );
      expect(errorsOf(11)).toContain('The field recipient.countryOfIncorporation should follow ISO 3166-2');
      expect(errorsOf(11)).toContain('routingNumber must be provided');
      expect(errorsOf(12)).toContain('The field recipient.beneficiaryId is required');
      expect(errorsOf(12)).toContain('recipient.nickname-invalid-characters');
      expect(errorsOf(12)).toMatch(/reference/);
      expect(errorsOf(13)).toMatch(/already used on row 2/);
      expect(errorsOf(14)).toMatch(/accountNumber/);
      expect(result.stderr).toContain('row 2 (BAD-0001): routingNumber must be 9 characters long');
    });
  });
});

describe('control totals', () => {
  const clean = path.join(samples, 'payouts-clean.csv');

  it('exit 0 when --expect-count and --expect-total match', async () => {
    await withTempDir(async (dir) => {
      const result = await runCli([
        'validate',
        clean,
        '--out',
        path.join(dir, 'r.csv'),
        '--expect-count',
        '12',
        '--expect-total',
        'USD=24905.74',
        '--expect-total',
        'MXN=19200',
      ]);
      expect(result.stderr).toBe(result.stderr.replace(/payouts: /, 'X')); // no error line
      expect(result.code).toBe(0);
    });
  });

  it('exit 4 naming the mismatch when a control total is off', async () => {
    await withTempDir(async (dir) => {
      const count = await runCli([
        'validate',
        clean,
        '--out',
        path.join(dir, 'r.csv'),
        '--expect-count',
        '11',
      ]);
      expect(count.code).toBe(4);
      expect(count.stderr).toContain('--expect-count 11 but the sheet has 12 rows');
      const total = await runCli([
        'validate',
        clean,
        '--out',
        path.join(dir, 'r.csv'),
        '--expect-total',
        'USD=24905.75',
      ]);
      expect(total.code).toBe(4);
      expect(total.stderr).toContain(
        "--expect-total USD=24,905.75 but the sheet's USD amounts add up to 24,905.74",
      );
    });
  });

  it('exit 2 for a malformed --expect-total', async () => {
    const result = await runCli(['validate', clean, '--expect-total', 'USD:12', ...TEXT_LOGS]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--expect-total "USD:12" is not CUR=AMOUNT');
  });
});

describe('sheets that cannot be read', () => {
  it('exit 2 naming the file, and no results file, for a missing required header', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'no-amount.csv');
      await writeFile(sheet, 'reference,currency,type\nA-1,USD,ACH\n');
      const result = await runCli(['validate', sheet]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(sheet);
      expect(result.stderr).toContain('amount');
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(await readdir(dir)).toEqual(['no-amount.csv']);
    });
  });

  it('exit 2 for a file that does not exist', async () => {
    const result = await runCli(['validate', '/nonexistent/payouts.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('/nonexistent/payouts.csv');
  });

  it('exit 2 with usage help for an unknown command or missing argument', async () => {
    expect((await runCli(['pay'])).code).toBe(2);
    expect((await runCli(['validate'])).code).toBe(2);
  });
});

describe('payouts validate on the XLSX sample', () => {
  it('gives the same statuses, totals and digest as the CSV sample, and an XLSX results file', async () => {
    await withTempDir(async (dir) => {
      const csv = await runCli([
        'validate',
        path.join(samples, 'payouts-clean.csv'),
        '--json',
        '--out',
        path.join(dir, 'r.csv'),
      ]);
      const xlsx = await runCli([
        'validate',
        path.join(samples, 'payouts-clean.xlsx'),
        '--json',
        '--out',
        path.join(dir, 'r.xlsx'),
      ]);
      expect(xlsx.code, xlsx.stderr).toBe(0);
      const a = JSON.parse(csv.stdout);
      const b = JSON.parse(xlsx.stdout);
      expect(b.format).toBe('xlsx');
      expect(b.statuses).toEqual(a.statuses);
      expect(b.totals).toEqual(a.totals);
      expect(b.digest).toBe(a.digest);
      const bytes = await readFile(path.join(dir, 'r.xlsx'));
      expect(bytes.subarray(0, 2).toString()).toBe('PK');
    });
  });
});

describe('the byte order mark of a CSV results file', () => {
  it.each([
    ['without one', '', []],
    ['with one', '\uFEFF', [0xef, 0xbb, 0xbf]],
  ])("is the sheet's: a sheet %s gives results %s", async (_name, mark, bytes) => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'sheet.csv');
      await writeFile(
        sheet,
        `${mark}reference,amount,currency,type,recipientId\r\nR-1,10.00,USD,ACH,rcp_1\r\n`,
      );
      const result = await runCli(['validate', sheet, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const written = await readFile(JSON.parse(result.stdout).results);
      expect([...written.subarray(0, bytes.length)]).toEqual(bytes);
      expect(written.subarray(bytes.length, bytes.length + 9).toString()).toBe('reference');
    });
  });
});

describe('--expect-total with digit grouping', () => {
  it('reads USD=36,957.34 as the sheet would, and refuses an ambiguous 1,250 with both readings', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'sheet.csv');
      await writeFile(sheet, 'reference,amount,currency,type,recipientId\r\nR-1,36957.34,USD,ACH,rcp_1\r\n');
      const ok = await runCli(['validate', sheet, '--expect-total', 'USD=36,957.34']);
      expect(ok.code, ok.stderr).toBe(0);
      const ambiguous = await runCli(['validate', sheet, '--expect-total', 'USD=1,250', ...TEXT_LOGS]);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain('--expect-total "USD=1,250" is not CUR=AMOUNT');
      expect(ambiguous.stderr).toContain(
        'amount "1,250" is ambiguous: it is 1250.00 if the separator groups thousands, or 1.25 if it marks the decimals',
      );
      const zero = await runCli(['validate', sheet, '--expect-total', 'USD=0', ...TEXT_LOGS]);
      expect(zero.code).toBe(2);
      expect(zero.stderr).toContain('amount "0" is not greater than 0');
    });
  });
});

describe('a quote inside an unquoted CSV cell', () => {
  it('is read as a character, with one notice naming the first row; an unclosed quoted cell still refuses the file', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'quotes.csv');
      await writeFile(
        sheet,
        [
          'reference,amount,currency,type,recipientId,nickname',
          'Q-1,10.00,USD,ACH,rcp_1,plain',
          'Q-2,10.00,USD,ACH,rcp_2,"quoted ""fine"""',
          'Q-3,10.00,USD,ACH,rcp_3,12" pipe',
          'Q-4,10.00,USD,ACH,rcp_4,at 37°36\'37.8"N',
          '',
        ].join('\r\n'),
      );
      const result = await runCli(['validate', sheet, '--json', ...TEXT_LOGS]);
      const summary = JSON.parse(result.stdout);
      expect(summary.rows).toBe(4);
      expect(summary.strayQuoteRow).toBe(4);
      expect(result.stderr).toContain(
        'A quote (") inside a cell that does not start with one was read as a character, as spreadsheet programs do (first in row 4)',
      );
      const rows = await readResults(summary.results);
      expect(rows.map((r) => [r['reference'], r['nickname']])).toEqual([
        ['Q-1', 'plain'],
        ['Q-2', 'quoted "fine"'],
        ['Q-3', '12" pipe'],
        ['Q-4', 'at 37°36\'37.8"N'],
      ]);

      const unclosed = path.join(dir, 'unclosed.csv');
      await writeFile(
        unclosed,
        'reference,amount,currency,type,recipientId,nickname\r\nQ-1,10.00,USD,ACH,rcp_1,"never closed\r\n',
      );
      const refused = await runCli(['validate', unclosed, ...TEXT_LOGS]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('is never closed');
    });
  });
});

describe('rows sharing a reference', () => {
  it('are all invalid, none is in the digest, and run sends none of them', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'repeats.csv');
      const lines = [
        'reference,amount,currency,type,recipientId',
        'R-1,10.00,USD,ACH,rcp_1',
        'R-2,11.00,USD,ACH,rcp_2',
        'R-1,12.00,USD,ACH,rcp_3',
        'R-3,13.00,USD,ACH,rcp_4',
        'R-1,14.00,USD,ACH,rcp_5',
      ];
      await writeFile(sheet, `${lines.join('\r\n')}\r\n`);
      const result = await runCli(['validate', sheet, '--json']);
      expect(result.code).toBe(1);
      const summary = JSON.parse(result.stdout);
      expect(summary.statuses).toMatchObject({ valid: 2, invalid: 3 });
      expect(summary.validTotals).toEqual({ USD: '24.00' });
      const rows = await readResults(summary.results);
      expect(rows.map((r) => [r['result.row'], r['result.status'], r['result.errors']])).toEqual([
        [
          '2',
          'invalid',
          'reference "R-1" is used again on rows 4, 6: every payout needs its own reference, so no row with it would be paid',
        ],
        ['3', 'valid', ''],
        [
          '4',
          'invalid',
          'reference "R-1" is already used on row 2: every payout needs its own reference, so this row would not be paid',
        ],
        ['5', 'valid', ''],
        [
          '6',
          'invalid',
          'reference "R-1" is already used on row 2: every payout needs its own reference, so this row would not be paid',
        ],
      ]);

      // The digest is that of the sheet without any R-1 row.
      const without = path.join(dir, 'without.csv');
      await writeFile(without, `${[lines[0], lines[2], lines[4]].join('\r\n')}\r\n`);
      const other = JSON.parse((await runCli(['validate', without, '--json'])).stdout);
      expect(summary.digest).toBe(other.digest);

      // run rehearses the same: the R-1 rows are invalid, the others paid, the digest the same.
      const run = await runCli(['run', sheet, '--sandbox', '--json'], { env: {} });
      const ran = JSON.parse(run.stdout);
      expect(ran.statuses.invalid).toBe(3);
      expect(ran.rows).toBe(5);
      expect(ran.digest).toBe(summary.digest);
    });
  });
});
