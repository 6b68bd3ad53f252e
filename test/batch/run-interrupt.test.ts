/**
 * SIGTERM (and SIGINT) stop a child `payouts run` cleanly: no new rows, the
 * rows under way finish, the results file is written, exit code 5; the next run resumes. Ten
 * stops at seeded random moments, some with a second signal (stop at once), then the ledger
 * holds exactly one transaction per row. Needs `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { crashSetup, expectNothingPaidTwice, finishAndCheck, runAndStop } from '../helpers/crash.js';
import { paymentsOf, type RunSummary } from '../helpers/payouts.js';
import { readCsv } from '../helpers/sheets.js';

const STOPS = 10;

describe('slow: payouts run stopped with SIGTERM', { timeout: 90_000 }, () => {
  it('writes the results and exits 5 at each stop, then pays every row exactly once', async () => {
    const setup = await crashSetup(70_113, 520);
    let stops = 0;
    let graceful = 0;
    for (let run = 0; stops < STOPS; run += 1) {
      expect(run, 'the sheet ran out before enough stops').toBeLessThan(STOPS * 2);
      // Every fourth stop is impatient: a second signal ends the run at once.
      const signals: NodeJS.Signals[] =
        run % 4 === 3 ? ['SIGTERM', 'SIGTERM'] : [run % 3 === 2 ? 'SIGINT' : 'SIGTERM'];
      const { exit, sent } = await runAndStop(setup, run > 0, signals, 100);
      expectNothingPaidTwice(setup.sb);
      if (sent.length === 0) {
        expect([0, 1], exit.stderr.slice(-2000)).toContain(exit.code);
        continue;
      }
      stops += 1;
      // Stopped before its signal handlers were in place (node still starting), it died of it.
      if (exit.signal !== null) continue;
      expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.interrupted);
      if (sent.length > 1) continue;
      // A single signal: the run wrote its results, where no row is left in doubt.
      graceful += 1;
      expect(exit.stderr).toContain('payouts: interrupted');
      const summary = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
      expect(summary.interrupted).toBe(true);
      const results = await readCsv(summary.results);
      expect(results).toHaveLength(setup.rows.length);
      const statuses = new Set(results.map((r) => r['result.status']));
      expect([...statuses].filter((s) => s !== 'submitted' && s !== 'skipped')).toEqual([]);
      // The rows it did not get to say so, and they are exactly the rows not paid yet.
      const notSent = results.filter((r) =>
        r['result.errors']!.startsWith('not sent: the run was interrupted'),
      );
      expect(notSent.every((r) => r['result.transactionId'] === '')).toBe(true);
      const paid = new Set(paymentsOf(setup.sb).map((t) => t.reference));
      const unpaid = setup.rows.map((r) => r['reference']!).filter((reference) => !paid.has(reference));
      expect(notSent.map((r) => r['reference']).sort()).toEqual(unpaid.sort());
    }
    expect(graceful).toBeGreaterThanOrEqual(5);
    await finishAndCheck(setup);
  });
});
