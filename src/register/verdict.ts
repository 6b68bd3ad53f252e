/**
 * What the register says about a row before anything is sent (docs/register.md "The
 * rules"), one pure function for `run` and `validate` alike, so the dry run shows
 * exactly what the run would do.
 */
import { type PayoutDetails, sameDetails } from './details.js';
import { holderAlive, localProbe, type ProcessProbe, type Self } from './lease.js';
import type { ClaimDecision, ClaimRequest, PayoutRecord } from './types.js';

export type RegisterVerdict =
  /** Nothing stands in the way: claim it and send it. */
  | { kind: 'send' }
  /** Its outcome was unknown and --retry-unknown asks to settle it: same key, same quote. */
  | { kind: 'resend'; record: PayoutRecord }
  /** Paid already with the same details: `skipped`. */
  | { kind: 'paid'; record: PayoutRecord }
  /** The reference was used for other details: `invalid`, nothing sent. */
  | { kind: 'conflict'; record: PayoutRecord }
  /** Its transaction exists and failed: `failed`, not sent again under this reference. */
  | { kind: 'failed'; record: PayoutRecord }
  /** In flight when a run died, or unknown since: `unknown` until --retry-unknown. */
  | { kind: 'unknown'; record: PayoutRecord }
  /** Another live run holds it right now: `skipped`. */
  | { kind: 'busy'; record: PayoutRecord };

export interface VerdictContext {
  /** Whether the run that holds the record still lives (lease.ts holderAlive). */
  holderAlive: boolean;
  retryUnknown: boolean;
}

/** The verdict on a row with these details, given what the register holds for its reference. */
export function registerVerdict(
  record: PayoutRecord | undefined,
  details: PayoutDetails,
  context: VerdictContext,
): RegisterVerdict {
  if (record === undefined) return { kind: 'send' };
  const same = sameDetails(record.details, details);
  switch (record.state) {
    case 'refused':
      // Nothing was paid: the row may come back with any details, fixed or not.
      return { kind: 'send' };
    case 'claimed':
      // Nothing left for its transaction: a dead holder's claim is free to take.
      return context.holderAlive ? { kind: 'busy', record } : { kind: 'send' };
    case 'sending':
      if (context.holderAlive) return { kind: 'busy', record };
      return inDoubt(record, same, context);
    case 'unknown':
      return inDoubt(record, same, context);
    case 'submitted':
    case 'completed':
      return same ? { kind: 'paid', record } : { kind: 'conflict', record };
    case 'failed':
      return { kind: 'failed', record };
  }
}

function inDoubt(record: PayoutRecord, same: boolean, context: VerdictContext): RegisterVerdict {
  // Re-sending other details under the same key would be refused (or, worse, answered with
  // the first payment): the doubt must be settled first.
  if (!same) return { kind: 'conflict', record };
  return context.retryUnknown ? { kind: 'resend', record } : { kind: 'unknown', record };
}

/**
 * What a claim does with a reference given its verdict: `run` claims what it will send, and
 * marks unknown a send whose holder died (its request may have left); the rest it leaves.
 */
export function claimDecision(verdict: RegisterVerdict, record: PayoutRecord | undefined): ClaimDecision {
  if (verdict.kind === 'send' || verdict.kind === 'resend') return 'claim';
  return verdict.kind === 'unknown' && record?.state === 'sending' ? 'mark-unknown' : 'leave';
}

/** What `run` makes of one record its claim meets: the register's verdict and the decision. */
export type ClaimJudge = (
  request: ClaimRequest,
  record: PayoutRecord | undefined,
) => { verdict: RegisterVerdict; decision: ClaimDecision };

/**
 * How the run `self` judges the records of one claim: the verdict on each, with its holder's
 * liveness asked once per holding run (a batch met while other runs pay the same sheet holds
 * dozens of one run's references, and asking means reading the process table).
 */
export function claimJudge(self: Self, retryUnknown: boolean, probe: ProcessProbe = localProbe): ClaimJudge {
  const alive = new Map<string, boolean>();
  return (request, record) => {
    // This run's own claim, met again: a claim whose commit got no answer runs again once the
    // register answers (outage.ts), and finds what it wrote. Nothing was sent for it yet.
    if (record?.state === 'claimed' && record.run?.id === self.runId)
      return { verdict: { kind: 'send' }, decision: 'claim' };
    const run = record?.run;
    let live = false;
    if (run !== undefined) {
      live = alive.get(run.id) ?? holderAlive(run, self, probe);
      alive.set(run.id, live);
    }
    const verdict = registerVerdict(record, request.details, { holderAlive: live, retryUnknown });
    return { verdict, decision: claimDecision(verdict, record) };
  };
}
