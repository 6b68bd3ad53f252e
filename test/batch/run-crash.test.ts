/**
 * The crash test: a child `payouts run` on a 520-row sheet is killed with SIGKILL at
 * seeded random moments, at least ten times, and re-run (with --retry-unknown) until it
 * finishes. The sandbox ledger then holds exactly one transaction per row. Needs `npm run build`.
 */
import { readdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { crashSetup, expectNothingPaidTwice, finishAndCheck, runAndStop } from '../helpers/crash.js';

const KILLS = 10;

describe('slow: payouts run killed with SIGKILL', { timeout: 90_000 }, () => {
  it('pays every row exactly once after ten kills at random moments', async () => {
    const setup = await crashSetup(90_417, 520);
    let kills = 0;
    const killed: number[] = [];
    for (let run = 0; kills < KILLS; run += 1) {
      expect(run, 'the sheet ran out before enough kills').toBeLessThan(KILLS * 2);
      const { exit, sent, pid } = await runAndStop(setup, run > 0, ['SIGKILL'], 120);
      if (sent.length > 0) {
        expect(exit.signal).toBe('SIGKILL');
        kills += 1;
        killed.push(pid);
      } else {
        expect([0, 1], exit.stderr.slice(-2000)).toContain(exit.code);
      }
      expectNothingPaidTwice(setup.sb);
    }
    // Killed half-way, the sheet is neither unpaid nor fully paid: the resume has work to do.
    const paidBefore = setup.sb.ledger().transactions.length;
    expect(paidBefore).toBeGreaterThan(0);
    expect(paidBefore).toBeLessThan(setup.rows.length);
    await finishAndCheck(setup);
    // Some kills caught transaction requests in flight: the resumes sent them again, and the
    // service answered those from their Idempotency-Key instead of paying again.
    const { requests } = setup.sb.ledger();
    expect(requests.byRoute['POST /v1/transactions']).toBeGreaterThan(setup.rows.length);
    // The killed runs' snapshots of the sheet (account numbers) went with the runs after them.
    const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
    const left = (await readdir(tmpdir())).filter((name) =>
      killed.some((pid) => name.startsWith(`payouts-run-${host}-${pid}-`)),
    );
    expect(left).toEqual([]);
  });
});
