/**
 * Two processes, two overlapping sheets, one register: both are killed
 * with SIGKILL at seeded moments, several times, then resumed side by side until they finish.
 * Every reference is paid exactly once, at every moment. Needs `npm run build`.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { ANSWER_LINE, expectNothingPaidTwice } from '../helpers/crash.js';
import {
  type ChildExit,
  expectOnePaymentPerRow,
  type RunSummary,
  sleep,
  spawnCli,
  testDir,
  testSandbox,
} from '../helpers/payouts.js';
import { generateRows, writeSheet } from '../helpers/sheets.js';

const ROUNDS = 4;

describe('slow: two runs of overlapping sheets killed with SIGKILL', { timeout: 120_000 }, () => {
  it('pays every reference exactly once after both are killed and resumed', async () => {
    const seed = 70_707;
    const sb = await testSandbox({ seed, latencyMs: 1 });
    const dir = await testDir();
    const rows = generateRows(300, { prefix: `PAIR${seed}` });
    const first = path.join(dir, 'first.csv');
    const second = path.join(dir, 'second.csv');
    // References 101 to 200 are in both sheets.
    await writeSheet(first, rows.slice(0, 200));
    await writeSheet(second, rows.slice(100));
    const args = (sheet: string, resume: boolean) => [
      'run',
      sheet,
      '--base-url',
      sb.url,
      '--concurrency',
      '8',
      '--rate',
      '3000',
      '--json',
      '--log-format',
      'json',
      '--log-level',
      'debug',
      ...(resume ? ['--retry-unknown'] : []),
    ];
    const random = mulberry32(seed);
    let kills = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const runs = [spawnCli(args(first, round > 0)), spawnCli(args(second, round > 0))];
      await Promise.all(
        runs.map(async (run) => {
          const reached = await run.whenLines(ANSWER_LINE, 1 + Math.floor(random() * 60));
          await sleep(Math.floor(random() * 10));
          if (reached && run.child.exitCode === null && run.child.signalCode === null) {
            run.child.kill('SIGKILL');
            kills += 1;
          }
        }),
      );
      await Promise.all(runs.map((run) => run.exited));
      expectNothingPaidTwice(sb);
    }
    expect(kills).toBeGreaterThanOrEqual(ROUNDS);

    // Side by side until both finish with nothing unknown (a few rounds at most).
    let last: ChildExit[] = [];
    for (let round = 0; round < 3; round += 1) {
      last = await Promise.all([spawnCli(args(first, true)).exited, spawnCli(args(second, true)).exited]);
      expectNothingPaidTwice(sb);
      const unknown = last.map(
        (exit) =>
          (JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary).statuses?.['unknown'] ??
          -1,
      );
      if (last.every((exit) => exit.code === 0) && unknown.every((n) => n === 0)) break;
    }
    expect(
      last.map((exit) => exit.code),
      last.map((exit) => exit.stderr.slice(-3000)).join('\n----\n'),
    ).toEqual([0, 0]);
    await expectOnePaymentPerRow(sb, rows);
  });
});
