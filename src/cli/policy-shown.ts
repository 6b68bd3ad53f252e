/**
 * The register's approval policy as it judges a batch now, for the commands that show it without
 * sending (validate, `status --approvals`): which rules apply to the rows a run would send, who
 * signed, who is still needed. Judged from validate's own summary of the rows to send.
 */
import { DEFAULT_APPROVAL_MAX_AGE_DAYS } from '../approvals/gate.js';
import { parsePolicy } from '../approvals/policy.js';
import { countUnderPolicy, type PolicyView, policyView, type SendFacts } from '../approvals/policy-gate.js';
import { withoutWithdrawn } from '../approvals/withdrawals.js';
import type { ValidateReport } from '../batch/validate/validate.js';
import type { Register } from '../register/types.js';
import { SIGNALS } from '../rows/signals.js';

/** What a policy's conditions look at, from validate's summary: its `valid` rows are those to send. */
export function sendFactsOf(report: Pick<ValidateReport, 'summary' | 'warnings'>): SendFacts {
  const { summary } = report;
  return {
    sendTotals: summary.sendTotals,
    largest: new Map([...summary.largestValid].map(([currency, row]) => [currency, row.minor])),
    warnings: new Set(SIGNALS.filter((signal) => report.warnings.counts[signal] > 0)),
    rails: summary.sendRails,
  };
}

/**
 * The policy the register holds for `service` judged for this batch; null without one (a
 * register an older payouts wrote, read without migrating it, holds none).
 */
export async function policyViewOf(
  register: Register,
  service: string,
  batch: { digest: string; sheet: string; now: number },
  facts: SendFacts,
): Promise<PolicyView | null> {
  const held = await register.policy(service).catch(() => undefined);
  if (held === undefined) return null;
  const policy = parsePolicy(held.policy, `the policy version ${held.version} of ${service}`);
  const { digest, sheet } = batch;
  const recorded = withoutWithdrawn(
    await register.approvals({ digest, sheet }),
    await register.withdrawals({ digest, sheet }),
    policy.signers,
  );
  const count = countUnderPolicy(
    recorded,
    policy,
    { ...batch, origin: service },
    DEFAULT_APPROVAL_MAX_AGE_DAYS,
  );
  return policyView(
    policy,
    held.version,
    facts,
    count.approvals.map((a) => a.principal),
  );
}
