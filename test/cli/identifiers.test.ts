/**
 * End to end: `payouts validate` on a sheet with a Treasury routing number (in the
 * Federal Reserve directory, outside the routing-symbol table) and IBANs of countries the
 * SWIFT IBAN Registry does not list. Uses dist/ (npm run build).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCli, withTempDir } from '../helpers/cli.js';

const samples = path.resolve(import.meta.dirname, '../../samples');

describe('payouts validate: routing numbers and IBANs', () => {
  it('accepts the Treasury routing numbers and refuses IBANs outside the registry', async () => {
    await withTempDir(async (dir) => {
      const [header, ach, , , swift] = (
        await readFile(path.join(samples, 'payouts-clean.csv'), 'utf8')
      ).split(/\r?\n/);
      const lines = [
        header!,
        ach!.replace('PAY-2026-11-0001', 'T-1').replace(',021000021,', ',154000008,'),
        ach!
          .replace('PAY-2026-11-0001', 'T-2')
          .replace(',ACH,', ',WIRE,')
          .replace(',021000021,', ',155000007,'),
        swift!
          .replace('PAY-2026-11-0004', 'T-3')
          .replace('DE89370400440532013000', 'DZ580002100001113000000570'),
        swift!
          .replace('PAY-2026-11-0004', 'T-4')
          .replace('DE89370400440532013000', 'GF4120041010050500013M02606'),
        swift!.replace('PAY-2026-11-0004', 'T-5'),
      ];
      // The WIRE row needs a bank address: copy the recipient's.
      lines[2] = lines[2]!.replace(/,,,,,$/, ',350 Fifth Ave,New York,NY,10118,US');
      const sheet = path.join(dir, 'identifiers.csv');
      await writeFile(sheet, `${lines.join('\n')}\n`);
      const out = path.join(dir, 'out.csv');
      const result = await runCli(['validate', sheet, '--out', out]);
      expect(result.code).toBe(1);
      const rows = parse(await readFile(out), { columns: true, bom: true }) as Record<string, string>[];
      expect(rows.map((r) => [r['reference'], r['result.status'], r['result.errors']])).toEqual([
        ['T-1', 'valid', ''],
        ['T-2', 'valid', ''],
        ['T-3', 'invalid', 'iban is invalid'],
        ['T-4', 'invalid', 'iban is invalid'],
        ['T-5', 'valid', ''],
      ]);
    });
  });
});
