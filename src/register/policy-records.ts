/**
 * Policies and withdrawals as the stores' rows hold them, and the values they are written with
 * (the statements' `:name`s): one reading for the store's own look-ups and for `register copy`.
 */
import type { Values } from './sql.js';
import type { PolicyProposal, PolicySignature, PolicyVersion, WithdrawalRecord } from './types.js';

export interface WithdrawalRow {
  statement_digest: string;
  fingerprint: string;
  approval_digest: string;
  origin: string;
  digest: string;
  sheet: string;
  statement: string;
  signature: string;
  recorded_at: string;
}

export interface PolicyProposalRow {
  service: string;
  digest: string;
  replaces: number | string;
  policy: string;
  proposed_at: string;
}

export interface PolicySignatureRow {
  statement_digest: string;
  fingerprint: string;
  service: string;
  digest: string;
  replaces: number | string;
  statement: string;
  signature: string;
  recorded_at: string;
}

export interface PolicyVersionRow {
  service: string;
  version: number | string;
  digest: string;
  policy: string;
  /** JSON array. */
  signed_by: string;
  since: string;
}

export function withdrawalOf(row: WithdrawalRow): WithdrawalRecord {
  return {
    statementDigest: row.statement_digest,
    approvalDigest: row.approval_digest,
    fingerprint: row.fingerprint,
    origin: row.origin,
    digest: row.digest,
    sheet: row.sheet,
    statement: row.statement,
    signature: row.signature,
    recordedAt: row.recorded_at,
  };
}

export function withdrawalValues(w: WithdrawalRecord): Values {
  return {
    statementDigest: w.statementDigest,
    approvalDigest: w.approvalDigest,
    fingerprint: w.fingerprint,
    origin: w.origin,
    digest: w.digest,
    sheet: w.sheet,
    statement: w.statement,
    signature: w.signature,
    recordedAt: w.recordedAt,
  };
}

export function proposalOf(row: PolicyProposalRow): PolicyProposal {
  return {
    service: row.service,
    digest: row.digest,
    replaces: Number(row.replaces),
    policy: row.policy,
    proposedAt: row.proposed_at,
  };
}

export function proposalValues(p: PolicyProposal): Values {
  return {
    service: p.service,
    digest: p.digest,
    replaces: p.replaces,
    policy: p.policy,
    proposedAt: p.proposedAt,
  };
}

export function policySignatureOf(row: PolicySignatureRow): PolicySignature {
  return {
    statementDigest: row.statement_digest,
    fingerprint: row.fingerprint,
    service: row.service,
    digest: row.digest,
    replaces: Number(row.replaces),
    statement: row.statement,
    signature: row.signature,
    recordedAt: row.recorded_at,
  };
}

export function policySignatureValues(s: PolicySignature): Values {
  return {
    statementDigest: s.statementDigest,
    fingerprint: s.fingerprint,
    service: s.service,
    digest: s.digest,
    replaces: s.replaces,
    statement: s.statement,
    signature: s.signature,
    recordedAt: s.recordedAt,
  };
}

export function policyVersionOf(row: PolicyVersionRow): PolicyVersion {
  return {
    service: row.service,
    version: Number(row.version),
    digest: row.digest,
    policy: row.policy,
    signedBy: JSON.parse(row.signed_by) as string[],
    since: row.since,
  };
}

export function policyVersionValues(v: PolicyVersion): Values {
  return {
    service: v.service,
    version: v.version,
    digest: v.digest,
    policy: v.policy,
    signedBy: JSON.stringify(v.signedBy),
    since: v.since,
  };
}
