/**
 * The outage budget (README `--max-outage`), written once for the service and the register
 * alike: how long an unbroken outage is waited through, and the deadline of each attempt within
 * it (half of the budget, at most 20 s, at least 1 s), so that an outage made of stalled
 * attempts still ends within the budget plus one deadline (README "Exit codes", 6).
 */

/** Defaults in one object. */
export const OUTAGE_BUDGET = {
  /** `--max-outage`'s default. */
  maxOutageMs: 30_000,
  /** The longest deadline of one attempt, whatever the budget. */
  deadlineCapMs: 20_000,
  /** The shortest: a run that waits through no outage still needs answers. */
  deadlineFloorMs: 1_000,
} as const;

/** The deadline of one attempt (a request, a register operation) within an outage budget. */
export function deadlineWithin(maxOutageMs: number): number {
  return Math.max(
    OUTAGE_BUDGET.deadlineFloorMs,
    Math.min(OUTAGE_BUDGET.deadlineCapMs, Math.floor(maxOutageMs / 2)),
  );
}
