/**
 * Withdrawn approvals (docs/approval.md "Withdrawing an approval"): an approver's signed
 * withdrawal of a statement takes that principal's approval of it out of every count. A
 * withdrawal counts when its signature holds over its text and that text names the approval
 * withdrawn; it withdraws the approvals of that statement by the same key, or by another key of
 * a principal the signers give both.
 */
import { createHash } from 'node:crypto';
import type { ApprovalRecord, WithdrawalRecord } from '../register/types.js';
import type { AllowedSigners } from './allowed-signers.js';
import { SignatureError } from './errors.js';
import { APPROVAL_NAMESPACE, verifyArmoredSignature } from './sshsig.js';
import { withdrawnStatement } from './statement.js';

/** The approvals recorded, without those a valid withdrawal took back. */
export function withoutWithdrawn(
  recorded: readonly ApprovalRecord[],
  withdrawals: readonly WithdrawalRecord[],
  signers?: AllowedSigners,
): ApprovalRecord[] {
  const valid = withdrawals.filter(holds);
  if (valid.length === 0) return [...recorded];
  const principalsOf = (fingerprint: string) =>
    (signers?.signers ?? []).filter((s) => s.key.fingerprint === fingerprint).flatMap((s) => s.principals);
  return recorded.filter(
    (approval) =>
      !valid.some((w) => {
        if (w.approvalDigest !== approval.statementDigest) return false;
        if (w.fingerprint === approval.fingerprint) return true;
        const withdrawing = principalsOf(w.fingerprint);
        return principalsOf(approval.fingerprint).some((p) => withdrawing.includes(p));
      }),
  );
}

/** Whether a withdrawal's signature holds over its text, and the text names the approval it withdraws. */
function holds(withdrawal: WithdrawalRecord): boolean {
  const approval = withdrawnStatement(withdrawal.statement);
  if (approval === undefined) return false;
  if (createHash('sha256').update(approval).digest('hex') !== withdrawal.approvalDigest) return false;
  try {
    const key = verifyArmoredSignature(
      withdrawal.signature,
      withdrawal.statement,
      APPROVAL_NAMESPACE,
    ).publicKey;
    return key.fingerprint === withdrawal.fingerprint;
  } catch (error) {
    if (error instanceof SignatureError) return false;
    throw error;
  }
}
