/**
 * Which earlier batch "since the previous batch" compares with (README `--compare-with`): by
 * default the latest of a sheet whose name is this one's but for its digits, so a one-off sheet
 * paid between two payrolls is no payroll's previous batch; else the latest; or the one asked
 * for, by sheet or digest. The JSON summary says which and why (`chosenBy`).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runAgainst, SANDBOX_ENV, testDir, testSandbox } from '../helpers/payouts.js';
import { generateRows, writeSheet } from '../helpers/sheets.js';

interface Since {
  sincePrevious: { sheet: string; chosenBy: string; rows: number } | null;
  digest: string;
}

describe('--compare-with and the default choice of the previous batch', () => {
  it('compares December’s payroll with November’s, not with the bonus sheet paid between; --compare-with chooses', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const payroll = generateRows(12, { prefix: 'PAY11' });
    const sheets = {
      november: path.join(dir, 'payroll-2026-11.csv'),
      bonus: path.join(dir, 'bonus-2026-11.csv'),
      december: path.join(dir, 'payroll-2026-12.csv'),
    };
    await writeSheet(sheets.november, payroll);
    await writeSheet(sheets.bonus, generateRows(3, { prefix: 'BONUS11' }));
    await writeSheet(
      sheets.december,
      payroll.map((row, i) => ({ ...row, reference: `PAY12-${String(i + 1).padStart(6, '0')}` })),
    );
    for (const sheet of [sheets.november, sheets.bonus]) {
      const paid = await runAgainst(sb, sheet, ['--json', '--rate', '200']);
      expect(paid.code, paid.stderr).toBe(0);
    }
    const validate = async (args: string[] = []) => {
      const result = await runCli(['validate', sheets.december, '--json', '--base-url', sb.url, ...args], {
        env: SANDBOX_ENV,
      });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Since;
    };

    const byName = await validate();
    expect(byName.sincePrevious).toMatchObject({ sheet: 'payroll-2026-11.csv', chosenBy: 'name', rows: 12 });

    const asked = await validate(['--compare-with', sheets.bonus]);
    expect(asked.sincePrevious).toMatchObject({ sheet: 'bonus-2026-11.csv', chosenBy: 'asked', rows: 3 });
    const bySheetName = await validate(['--compare-with', 'bonus-2026-11.csv']);
    expect(bySheetName.sincePrevious).toMatchObject({ sheet: 'bonus-2026-11.csv', chosenBy: 'asked' });

    // A sheet of another name: the latest batch, whatever its name.
    const other = path.join(dir, 'contractors.csv');
    await writeSheet(other, generateRows(2, { prefix: 'CON' }));
    const latest = await runCli(['validate', other, '--json', '--base-url', sb.url], { env: SANDBOX_ENV });
    expect((JSON.parse(latest.stdout) as Since).sincePrevious).toMatchObject({
      sheet: 'bonus-2026-11.csv',
      chosenBy: 'latest',
    });

    // The batch digest a run recorded chooses too; one the register never paid is exit 2.
    const novemberDigest = (
      JSON.parse(
        (await runCli(['validate', sheets.november, '--json', '--base-url', sb.url], { env: SANDBOX_ENV }))
          .stdout,
      ) as Since
    ).digest;
    const byDigest = await validate(['--compare-with', novemberDigest]);
    expect(byDigest.sincePrevious).toMatchObject({ sheet: 'payroll-2026-11.csv', chosenBy: 'asked' });
    const nowhere = await runCli(
      [
        'validate',
        sheets.december,
        '--base-url',
        sb.url,
        '--compare-with',
        'payroll-1999.csv',
        '--log-format',
        'text',
      ],
      { env: SANDBOX_ENV },
    );
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--compare-with payroll-1999.csv names no batch the register paid');
  });
});
