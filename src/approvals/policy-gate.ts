/**
 * The register's approval policy applied to a batch (docs/approval.md "The policy"): which rules
 * apply to the rows to send, and whether distinct principals of each rule's group approved it.
 * Pure: the run and validate give the batch's facts and the approvals recorded; the view says,
 * rule by rule, who signed, how many more are needed and who has not signed, and a refusal says
 * each unmet rule in words (exit 4, nothing sent).
 */
import { GuardError } from '../errors.js';
import type { ApprovalRecord, RunApproval } from '../register/types.js';
import { formatMinor } from '../rows/money.js';
import { type GatedBatch, runApprovalsOf } from './gate.js';
import type { ApprovalPolicy, PolicyConditions, PolicyRule } from './policy.js';
import { type ApprovalCount, countApprovals } from './verify.js';

/** What the rules' conditions look at: the rows to send (valid, not paid already, not held). */
export interface SendFacts {
  /** Per currency, in minor units: the total to send. */
  readonly sendTotals: ReadonlyMap<string, bigint>;
  /** Per currency, in minor units: the largest row to send. */
  readonly largest: ReadonlyMap<string, bigint>;
  /** The warnings carried by at least one row to send. */
  readonly warnings: ReadonlySet<string>;
  /** The rails of the rows to send. */
  readonly rails: ReadonlySet<string>;
}

/** One rule as judged for a batch (the JSON summary's `policy.rules`). */
export interface RuleView {
  name: string;
  applies: boolean;
  require: number;
  from: string;
  /** The principals of its group whose approval covers the batch. */
  signed: string[];
  /** How many more signatures it needs (0 when met, or when it does not apply). */
  missing: number;
  /** Who of its group has not signed. */
  waitingOn: string[];
}

/** The policy as judged for a batch (the JSON summary's `policy`). */
export interface PolicyView {
  version: number;
  satisfied: boolean;
  rules: RuleView[];
}

/** Collects the facts of the rows to send, one row at a time. */
export class SendFactsTally implements SendFacts {
  readonly sendTotals = new Map<string, bigint>();
  readonly largest = new Map<string, bigint>();
  readonly warnings = new Set<string>();
  readonly rails = new Set<string>();

  /** A row to send: its amount, currency, rail and the signals of its warnings. */
  add(minor: bigint, currency: string, rail: string | undefined, signals: readonly string[]): void {
    this.sendTotals.set(currency, (this.sendTotals.get(currency) ?? 0n) + minor);
    if (minor > (this.largest.get(currency) ?? -1n)) this.largest.set(currency, minor);
    if (rail !== undefined) this.rails.add(rail);
    for (const signal of signals) this.warnings.add(signal);
  }
}

/** Whether every condition of the rule holds for the rows to send (none: always). */
export function ruleApplies(when: PolicyConditions, facts: SendFacts): boolean {
  const over = (limits: ReadonlyMap<string, bigint>, amounts: ReadonlyMap<string, bigint>) =>
    [...limits].some(([currency, limit]) => (amounts.get(currency) ?? 0n) > limit);
  if (when.sendTotalOver && !over(when.sendTotalOver, facts.sendTotals)) return false;
  if (when.rowOver && !over(when.rowOver, facts.largest)) return false;
  if (when.warnings && !when.warnings.some((w) => facts.warnings.has(w))) return false;
  if (when.rails && !when.rails.some((r) => facts.rails.has(r))) return false;
  return true;
}

/** Each rule judged against the principals whose approvals cover the batch. */
export function policyView(
  policy: ApprovalPolicy,
  version: number,
  facts: SendFacts,
  approvers: readonly string[],
): PolicyView {
  const rules = policy.rules.map((rule) => ruleView(rule, policy, facts, approvers));
  return { version, satisfied: rules.every((rule) => rule.missing === 0), rules };
}

function ruleView(
  rule: PolicyRule,
  policy: ApprovalPolicy,
  facts: SendFacts,
  approvers: readonly string[],
): RuleView {
  const group = policy.groups.get(rule.from) ?? [];
  const signed = group.filter((principal) => approvers.includes(principal));
  const applies = ruleApplies(rule.when, facts);
  return {
    name: rule.name,
    applies,
    require: rule.require,
    from: rule.from,
    signed,
    missing: applies ? Math.max(0, rule.require - signed.length) : 0,
    waitingOn: group.filter((principal) => !signed.includes(principal)),
  };
}

/** The approvals recorded for a batch, counted against the policy's signers. */
export function countUnderPolicy(
  recorded: readonly ApprovalRecord[],
  policy: ApprovalPolicy,
  batch: GatedBatch,
  maxAgeDays: number,
): ApprovalCount {
  const signed = recorded.map((approval) => ({
    statementText: approval.statement,
    armoredSignature: approval.signature,
    recordedAt: Date.parse(approval.recordedAt),
    id: approval.statementDigest,
  }));
  return countApprovals(signed, { ...batch, maxAgeDays, allowedSigners: policy.signers });
}

/** A policy in force for the run, with what `--require-approvals N` adds (N of all its signers). */
export interface PolicyGate {
  readonly policy: ApprovalPolicy;
  readonly version: number;
  readonly maxAgeDays: number;
  /** `--require-approvals N` (or the environment): N distinct principals of any of its signers. */
  readonly alsoRequired?: number;
}

/**
 * Judges the batch under the policy: the approvals it relies on when every applying rule (and
 * what `--require-approvals` adds) is met; a GuardError naming each unmet rule otherwise.
 */
export function judgePolicy(
  recorded: readonly ApprovalRecord[],
  gate: PolicyGate,
  facts: SendFacts,
  batch: GatedBatch,
): { view: PolicyView; approvals: RunApproval[] } {
  const count = countUnderPolicy(recorded, gate.policy, batch, gate.maxAgeDays);
  const view = policyView(
    gate.policy,
    gate.version,
    facts,
    count.approvals.map((a) => a.principal),
  );
  const short = gate.alsoRequired !== undefined && count.count < gate.alsoRequired;
  if (!view.satisfied || short) throw new GuardError(policyRefusal(view, gate, count, batch));
  const approvals = runApprovalsOf(count, recorded, batch.now);
  return { view, approvals };
}

/** A rule's condition in words: `sendTotalOver USD 1000.00`. */
export function conditionText(when: PolicyConditions): string {
  const amounts = (limits: ReadonlyMap<string, bigint>) =>
    [...limits].map(([currency, minor]) => `${currency} ${formatMinor(minor)}`).join(' or ');
  const parts: string[] = [];
  if (when.sendTotalOver) parts.push(`to send over ${amounts(when.sendTotalOver)}`);
  if (when.rowOver) parts.push(`a row over ${amounts(when.rowOver)}`);
  if (when.warnings) parts.push(`a row with ${when.warnings.join(' or ')}`);
  if (when.rails) parts.push(`a row on ${when.rails.join(' or ')}`);
  return parts.length === 0 ? 'every batch' : parts.join(' and ');
}

/** The refusal in words: each unmet rule, who signed, how many more from which group, who is waited on. */
export function policyRefusal(
  view: PolicyView,
  gate: PolicyGate,
  count: ApprovalCount,
  batch: GatedBatch,
): string {
  const parts = [
    `the approval policy (version ${view.version}) of ${batch.origin} is not met for ${batch.sheet} (digest ${batch.digest.slice(0, 12)}...)`,
  ];
  for (const rule of view.rules.filter((r) => r.missing > 0)) {
    const when = conditionText(gate.policy.rules.find((r) => r.name === rule.name)!.when);
    const signed = rule.signed.length > 0 ? `signed by ${rule.signed.join(', ')}` : 'signed by none of them';
    parts.push(
      `rule "${rule.name}" (${when}) needs ${rule.require} of ${rule.from}: ${signed}, ${rule.missing} more needed from ${rule.from} (waiting on ${rule.waitingOn.join(', ')})`,
    );
  }
  if (gate.alsoRequired !== undefined && count.count < gate.alsoRequired)
    parts.push(
      `--require-approvals ${gate.alsoRequired}: ${count.count} of the policy's signers approved, ${gate.alsoRequired - count.count} more needed`,
    );
  for (const stale of count.stale)
    parts.push(
      `the sheet changed since it was signed by ${stale.principals.join(', ')} on ${stale.day}: validate again and have it signed again`,
    );
  for (const refused of count.refused) parts.push(`not counted: ${refused.message}`);
  // No "; " in a message of payouts' own: the results file splits result.errors on it.
  return `${parts.join(' - ')}. Nothing was sent.`;
}
