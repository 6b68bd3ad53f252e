/**
 * The gate of `run --require-approvals N --allowed-signers FILE` (docs/approval.md, "What
 * counts"): the approvals the register holds for this service, this digest and this sheet name,
 * checked again here, in-process, and counted by countApprovals. Fewer than N is a GuardError
 * (exit 4, nothing sent) that says who signed, who is missing, which signatures do not count and
 * why, and whether the sheet changed since someone signed it.
 */
import { ConfigError, GuardError } from '../errors.js';
import type { ApprovalRecord, RunApproval } from '../register/types.js';
import { type AllowedSigners, signerRefusal } from './allowed-signers.js';
import { APPROVAL_NAMESPACE } from './sshsig.js';
import { type ApprovalCount, countApprovals } from './verify.js';

/** What the gate requires (README "Options": `--require-approvals`, `--allowed-signers`). */
export interface ApprovalGate {
  /** Distinct principals needed. */
  readonly required: number;
  readonly allowedSigners: AllowedSigners;
  /** `--approval-max-age DAYS`. */
  readonly maxAgeDays: number;
}

/** The batch the gate judges: as the run computed it before sending. */
export interface GatedBatch {
  readonly digest: string;
  readonly origin: string;
  /** The sheet's file name, without its folder. */
  readonly sheet: string;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

/** The days an approval stays good for unless `--approval-max-age` says otherwise. */
export const DEFAULT_APPROVAL_MAX_AGE_DAYS = 31;

/**
 * Throws ConfigError (exit 2) when the allowed-signers file cannot yield `gate.required`
 * approvals at `nowMs` (empty, comments only, every key expired or limited to other
 * namespaces): a gate that can never pass is a mistake to say, not a run to refuse at exit 4
 * month after month. One key counts once, and so does one principal.
 */
export function checkGateCanPass(gate: ApprovalGate, nowMs: number): void {
  const { file, signers } = gate.allowedSigners;
  const usable = signers.filter(
    (signer) => signerRefusal(signer, APPROVAL_NAMESPACE, nowMs, file) === undefined,
  );
  const keys = new Set(usable.map((signer) => signer.key.blob.toString('base64'))).size;
  const principals = [...new Set(usable.flatMap((signer) => signer.principals))];
  const possible = Math.min(keys, principals.length);
  if (possible >= gate.required) return;
  const unusable = signers.length - usable.length;
  const named =
    possible === 0
      ? 'names no key that may sign an approval now'
      : `names ${possible === 1 ? 'one approver' : `${possible} approvers`} whose key may sign an approval now (${principals.join(', ')})`;
  // A file without any key line is refused as it is read (allowed-signers.ts).
  const why =
    unusable > 0
      ? ` (${unusable === 1 ? 'one line is' : `${unusable} lines are`} expired, not yet valid or limited to other namespaces)`
      : '';
  throw new ConfigError(
    `${file} ${named}${why}, and ${gate.required} approvals are required: the gate could never pass. Add the approvers' keys (or renew their valid-before), or require fewer`,
  );
}

/**
 * Counts the approvals of `batch` among those recorded; returns those the run relies on, or
 * throws a GuardError when fewer than `gate.required` principals signed.
 */
export function judgeApprovals(
  recorded: readonly ApprovalRecord[],
  gate: ApprovalGate,
  batch: GatedBatch,
): RunApproval[] {
  // A sheet paid every month under one name (a CronJob's payouts.csv) has every earlier month's
  // approvals under that name: only those recent enough to count say the sheet changed since.
  const oldest = batch.now - (gate.maxAgeDays + 1) * 86_400_000;
  const relevant = recorded.filter(
    (approval) => approval.digest === batch.digest || Date.parse(approval.recordedAt) >= oldest,
  );
  const signed = relevant.map((approval) => ({
    statementText: approval.statement,
    armoredSignature: approval.signature,
    recordedAt: Date.parse(approval.recordedAt),
    id: approval.statementDigest,
  }));
  const count = countApprovals(signed, {
    digest: batch.digest,
    origin: batch.origin,
    sheet: batch.sheet,
    maxAgeDays: gate.maxAgeDays,
    now: batch.now,
    allowedSigners: gate.allowedSigners,
  });
  if (count.count < gate.required) throw new GuardError(refusal(count, gate, batch));
  return runApprovalsOf(count, recorded, batch.now);
}

/** The refusal in words: what was required, who signed, who is missing, and why others do not count. */
export function refusal(count: ApprovalCount, gate: ApprovalGate, batch: GatedBatch): string {
  const parts = [
    `--require-approvals ${gate.required}: ${count.count === 0 ? 'no' : count.count} signed approval${count.count === 1 ? '' : 's'} by the approvers of ${gate.allowedSigners.file} cover${count.count === 1 ? 's' : ''} this sheet (${batch.sheet}, digest ${batch.digest.slice(0, 12)}..., ${batch.origin})`,
  ];
  if (count.approvals.length > 0) {
    parts.push(
      `signed by ${count.approvals.map((a) => `${a.principal} (${a.fingerprint}, ${a.day})`).join(', ')}`,
    );
  }
  if (count.missing.length > 0) parts.push(`missing: ${count.missing.join(', ')}`);
  for (const stale of count.stale) {
    parts.push(
      `the sheet changed since it was signed by ${stale.principals.join(', ')} (${stale.fingerprint}) on ${stale.day} (digest then ${stale.digest.slice(0, 12)}..., now ${batch.digest.slice(0, 12)}...): validate again and have it signed again`,
    );
  }
  for (const refused of count.refused) parts.push(`not counted: ${refused.message}`);
  if (count.approvals.length === 0 && count.stale.length === 0 && count.refused.length === 0) {
    parts.push(
      `the register holds no approval of this sheet: have it approved with payouts approve ${batch.sheet} --key KEY (or --signature FILE.sig)`,
    );
  }
  // No "; " in a message of payouts' own: the results file splits result.errors on it.
  return `${parts.join(' - ')}. Nothing was sent.`;
}

/**
 * The approvals a run relies on, as its record keeps them. The statement a counted principal's
 * key signed is the very record that counted (the same key may also have signed a statement of
 * this digest that does not count, one too old).
 */
export function runApprovalsOf(
  count: ApprovalCount,
  recorded: readonly ApprovalRecord[],
  now: number,
): RunApproval[] {
  return count.approvals.map((approval) => {
    const record = recorded.find(
      (r) => r.fingerprint === approval.fingerprint && r.statementDigest === approval.id,
    );
    return {
      principal: approval.principal,
      fingerprint: approval.fingerprint,
      statementDigest: record?.statementDigest ?? '',
      recordedAt: record?.recordedAt ?? new Date(approval.recordedAt ?? now).toISOString(),
    };
  });
}
