// The run's snapshot of the sheet (src/batch/run/snapshot.ts): what a killed run leaves behind is
// removed by the next run on the host, and nothing of a live run is touched.
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeRow, encodeRow, RowSnapshot, removeStaleSnapshots } from '../../src/batch/run/snapshot.js';
import type { RawRow } from '../../src/sheet/types.js';
import { withTempDir } from '../helpers/cli.js';

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('the run snapshot', () => {
  it('stores every kind of cell as the sheet gave it, a text cell as its text alone', () => {
    const row: RawRow = {
      rowNumber: 7,
      cells: [
        { text: 'R-1', kind: 'string' },
        { text: '', kind: 'empty' },
        { text: '', kind: 'string' },
        { text: '1250.5', kind: 'number' },
        { text: '980.25', kind: 'number', format: 3 },
        { text: 'true', kind: 'boolean' },
        { text: '2026-11-26', kind: 'date' },
        { text: '', kind: 'empty', formula: true },
        { text: '3000.00', kind: 'number', formula: true, sum: true },
        { text: '0', kind: 'string', formula: true },
      ],
      problems: ['the row has 10 fields, the header 11'],
      strayQuote: true,
    };
    expect(decodeRow(encodeRow(row))).toEqual(row);
    const plain: RawRow = { rowNumber: 2, cells: [{ text: 'A', kind: 'string' }], problems: [] };
    expect(JSON.stringify(encodeRow(plain))).toBe('[2,["A"],[]]');
    expect(decodeRow(encodeRow(plain))).toEqual(plain);
    expect('strayQuote' in decodeRow(encodeRow(plain))).toBe(false);
  });

  it('replays the rows it stored, and is gone once disposed', async () => {
    const snapshot = await RowSnapshot.create();
    const rows = [
      { rowNumber: 2, cells: [{ text: 'R-1', kind: 'string' as const }], problems: [] },
      { rowNumber: 3, cells: [{ text: '1,5\n"x"', kind: 'string' as const }], problems: ['short'] },
    ];
    for (const row of rows) await snapshot.add(row);
    await snapshot.seal();
    const replayed = [];
    for await (const row of snapshot.rows()) replayed.push(row);
    expect(replayed).toEqual(rows);
    await snapshot.dispose();
  });

  it('removes the snapshots of dead runs on this host, and only those', async () => {
    await withTempDir(async (dir) => {
      const prefix = `payouts-run-${hostname().replace(/[^A-Za-z0-9.-]/g, '_')}-`;
      const dead = await deadPid();
      const names = {
        dead: `${prefix}${dead}-a1b2c3`,
        mine: `${prefix}${process.pid}-d4e5f6`,
        parent: `${prefix}${process.ppid}-g7h8i9`,
        otherHost: `payouts-run-elsewhere.example-${dead}-j1k2l3`,
        notOurs: 'something-else',
      };
      for (const name of Object.values(names)) {
        await mkdir(path.join(dir, name));
        await writeFile(path.join(dir, name, 'rows.jsonl'), '{"rowNumber":2}\n');
      }
      // A file, not a snapshot directory, under the prefix.
      await writeFile(path.join(dir, `${prefix}${dead}-file`), 'x');
      const removed = await removeStaleSnapshots(dir);
      expect(removed).toEqual([path.join(dir, names.dead)]);
      expect((await readdir(dir)).sort()).toEqual(
        [names.mine, names.parent, names.otherHost, names.notOurs, `${prefix}${dead}-file`].sort(),
      );
    });
  });
});
