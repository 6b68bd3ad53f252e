/**
 * Signed approvals (docs/approval.md, "Signing an approval"): what the approve command, the
 * register and `run --require-approvals` use. The statement an approver signs, signatures read
 * and checked in-process, the allowed-signers file, the count the gate applies, and signing
 * through the system's ssh-keygen.
 */
export {
  type AllowedSigner,
  type AllowedSigners,
  parseAllowedSigners,
  principalsOf,
  readAllowedSigners,
} from './allowed-signers.js';
export {
  AllowedSignersError,
  SignatureError,
  type SignatureProblem,
  SigningError,
  StatementError,
} from './errors.js';
export {
  type ApprovalGate,
  DEFAULT_APPROVAL_MAX_AGE_DAYS,
  type GatedBatch,
  judgeApprovals,
} from './gate.js';
export {
  fingerprintOf,
  parsePublicKeyBlob,
  parsePublicKeyText,
  type SshKeyType,
  type SshPublicKey,
} from './keys.js';
export { type SignOptions, signStatement } from './sign.js';
export {
  APPROVAL_NAMESPACE,
  parseArmoredSignature,
  type SshSignature,
  verifyArmoredSignature,
  verifySshSignature,
} from './sshsig.js';
export { type ApprovalStatement, approvalStatement, parseStatement, utcDay } from './statement.js';
export {
  type ApprovalCount,
  type ApprovalRefusalReason,
  type ApprovalVerdict,
  type CountedApproval,
  type CountOptions,
  type CoverageRefusalReason,
  countApprovals,
  type RefusedApproval,
  type SignedApproval,
  type StaleApproval,
  type VerifyApprovalInput,
  verifyApproval,
} from './verify.js';
