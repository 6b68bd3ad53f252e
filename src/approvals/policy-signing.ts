/**
 * Who signed a change of the approval policy, and whether enough did (docs/approval.md "The
 * policy"): the statement an admin signs (`payouts policy v1`: the service's origin, the policy's
 * digest, the version it replaces: the same proposal gives the same text on any day), whose key
 * signed it by the signers of the policy in force (for the first policy, its own), and how many
 * distinct admins that makes against what `admins` requires.
 */
import { linesForKey, signerRefusal } from './allowed-signers.js';
import { SignatureError } from './errors.js';
import type { ApprovalPolicy } from './policy.js';
import { verifyArmoredSignature } from './sshsig.js';

/** The namespace of a policy signature: an approval's signature can never pass for one. */
export const POLICY_NAMESPACE = 'payouts-policy';

/** The first line of a policy statement: the format and its version. */
export const POLICY_STATEMENT_HEADER = 'payouts policy v1';

/** What an admin signs: a policy proposed for a service, replacing the version in force. */
export interface PolicyProposalStatement {
  readonly origin: string;
  /** SHA-256 (hex) of the policy's canonical JSON. */
  readonly digest: string;
  /** The version in force it replaces (0: none). */
  readonly replaces: number;
}

/** The statement's text: one `field: value` a line, ending with a newline. */
export function policyStatement(proposal: PolicyProposalStatement): string {
  return [
    POLICY_STATEMENT_HEADER,
    `origin: ${proposal.origin}`,
    `policy: ${proposal.digest}`,
    `replaces: ${proposal.replaces}`,
    '',
  ].join('\n');
}

/** A signature over a proposal, as the register keeps it. */
export interface HeldPolicySignature {
  readonly statement: string;
  readonly signature: string;
}

/** Whose key signed a proposal: an admin principal, or why it does not count. */
export type PolicySigner =
  | { ok: true; principal: string; fingerprint: string }
  | { ok: false; fingerprint?: string; message: string };

/**
 * Whose signature this is among the admins of `judge` (the policy in force, or the proposal
 * itself for the first): the text must be `statement`, the signature verify in the policy
 * namespace, and its key be listed, valid now, for a principal of the admins' group.
 */
export function policySigner(
  judge: ApprovalPolicy,
  held: HeldPolicySignature,
  statement: string,
  nowMs: number,
): PolicySigner {
  if (held.statement !== statement)
    return { ok: false, message: 'it signs another proposal (another policy, service or version replaced)' };
  let fingerprint: string;
  let key: ReturnType<typeof verifyArmoredSignature>['publicKey'];
  try {
    key = verifyArmoredSignature(held.signature, held.statement, POLICY_NAMESPACE).publicKey;
    fingerprint = key.fingerprint;
  } catch (error) {
    if (!(error instanceof SignatureError)) throw error;
    return { ok: false, message: `the signature does not verify: ${error.message}` };
  }
  const admins = judge.groups.get(judge.admins.from) ?? [];
  const refusals: string[] = [];
  for (const line of linesForKey(judge.signers, key)) {
    const refusal = signerRefusal(line, POLICY_NAMESPACE, nowMs, 'signers');
    if (refusal !== undefined) {
      refusals.push(refusal.message);
      continue;
    }
    const principal = line.principals.find((p) => admins.includes(p));
    if (principal !== undefined) return { ok: true, principal, fingerprint };
    refusals.push(
      `its key belongs to ${line.principals.join(', ')}, not to the group "${judge.admins.from}"`,
    );
  }
  return {
    ok: false,
    fingerprint,
    message:
      refusals.length > 0
        ? refusals.join('; ')
        : `the key ${fingerprint} is not among the signers of the policy that decides (its admins: ${admins.join(', ')})`,
  };
}

/** How far a proposal is from taking effect. */
export interface AdminCount {
  /** The admins whose signatures count, in the order they signed. */
  readonly signedBy: readonly string[];
  /** How many more admins must sign. */
  readonly missing: number;
  /** The admins who have not signed. */
  readonly waitingOn: readonly string[];
  readonly require: number;
  readonly from: string;
}

/** Counts the distinct admins of `judge` whose signatures over `statement` hold now. */
export function countAdmins(
  judge: ApprovalPolicy,
  held: readonly HeldPolicySignature[],
  statement: string,
  nowMs: number,
): AdminCount {
  const signedBy: string[] = [];
  for (const signature of held) {
    const signer = policySigner(judge, signature, statement, nowMs);
    if (signer.ok && !signedBy.includes(signer.principal)) signedBy.push(signer.principal);
  }
  const { require, from } = judge.admins;
  const admins = judge.groups.get(from) ?? [];
  return {
    signedBy,
    missing: Math.max(0, require - signedBy.length),
    waitingOn: admins.filter((principal) => !signedBy.includes(principal)),
    require,
    from,
  };
}
