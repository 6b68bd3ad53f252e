/**
 * `payouts reconcile [reference...]` (PRODUCT.md): the final state of every payout sent, from
 * the service, into the register. Exit 0 when nothing failed, 1 when something failed or stays
 * unknown, 5 when stopped by a signal, 6 when the service stayed unavailable.
 */
import { type Outcome, type ReconcileOptions, reconcile } from '../batch/reconcile.js';
import { BatchSummary, formatAmountForPeople } from '../batch/summary.js';
import { EXIT } from '../errors.js';
import { boundCell } from '../sheet/quote.js';
import { type CliIo, println } from './io.js';
import { closeLogger, createLogger } from './logging.js';

export interface ReconcileCommandOptions extends Omit<ReconcileOptions, 'logger'> {
  json: boolean;
}

const OUTCOMES: readonly { outcome: Outcome; label: string }[] = [
  { outcome: 'completed', label: 'completed' },
  { outcome: 'failed', label: 'failed' },
  { outcome: 'pending', label: 'still pending (submitted, not settled yet)' },
  { outcome: 'absent', label: 'never created (the next run sends them again)' },
  { outcome: 'unknown', label: 'still unknown (the service could not say)' },
  { outcome: 'skipped', label: 'not asked (see below)' },
];

/** Runs reconcile and reports it; returns the exit code. */
export async function reconcileCommand(options: ReconcileCommandOptions, io: CliIo): Promise<number> {
  const logger = createLogger({ stderr: io.stderr, level: 'warn' });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(name, onSignal);
  try {
    const report = await reconcile({ ...options, logger, signal: options.signal ?? stop.signal });
    const exitCode = report.unavailable
      ? EXIT.unavailable
      : report.interrupted
        ? EXIT.interrupted
        : report.attention.length > 0
          ? EXIT.rowsNotOk
          : EXIT.ok;
    const checked = Object.values(report.counts).reduce((a, b) => a + b, 0);
    println(
      io.stderr,
      `Reconciled ${checked.toLocaleString('en-US')} payout${checked === 1 ? '' : 's'} of ${report.service} (integrator ${report.integratorId || 'not reached'}) in ${report.register}:`,
    );
    for (const { outcome, label } of OUTCOMES) {
      const n = report.counts[outcome];
      if (n === 0) continue;
      const totals = [...report.totals[outcome]]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, minor]) => `${currency} ${formatAmountForPeople(minor)}`)
        .join(', ');
      println(io.stderr, `  ${String(n).padStart(7)} ${label}${totals ? ` - ${totals}` : ''}`);
    }
    if (report.attention.length > 0) {
      println(io.stderr, 'To look at:');
      for (const p of report.attention) {
        const tx = p.transactionId ? ` transaction ${p.transactionId}` : '';
        println(io.stderr, `  ${boundCell(p.reference)} (${p.outcome}${tx}): ${p.message ?? ''}`);
      }
    }
    if (report.unavailable)
      println(
        io.stderr,
        'payouts: the service stayed unavailable past --max-outage: run reconcile again later',
      );
    if (report.interrupted) println(io.stderr, 'payouts: interrupted: run reconcile again to finish');
    if (options.json) {
      const totals = Object.fromEntries(
        Object.entries(report.totals).map(([outcome, map]) => [outcome, BatchSummary.formatTotals(map)]),
      );
      io.stdout.write(
        `${JSON.stringify({
          command: 'reconcile',
          register: report.register,
          service: report.service,
          integratorId: report.integratorId,
          counts: report.counts,
          totals,
          attention: report.attention,
          interrupted: report.interrupted,
          unavailable: report.unavailable,
          exitCode,
        })}\n`,
      );
    }
    return exitCode;
  } finally {
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(name, onSignal);
    await closeLogger(logger);
  }
}
