// The run's snapshot of the sheet (src/batch/snapshot.ts): what a killed run leaves behind is
// removed by the next run on the host, and nothing of a live run is touched.
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RowSnapshot, removeStaleSnapshots } from '../../src/batch/snapshot.js';
import { withTempDir } from '../helpers/cli.js';

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('the run snapshot', () => {
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
