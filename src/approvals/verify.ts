/**
 * Whether signed approvals let a sheet be paid (docs/approval.md, "Signing an approval"):
 * verifyApproval says who signed one statement, or why the signature does not count;
 * countApprovals applies the gate's rule to every signature of a sheet: distinct principals of
 * the allowed-signers file with a valid signature over a statement naming this digest and this
 * service, made within the allowed age. One key counts once whatever principals its line lists,
 * one principal once whatever keys it has.
 */
import { type AllowedSigners, linesForKey, principalsOf, signerRefusal } from './allowed-signers.js';
import { SignatureError, StatementError } from './errors.js';
import {
  APPROVAL_NAMESPACE,
  parseArmoredSignature,
  type SshSignature,
  verifySshSignature,
} from './sshsig.js';
import { type ApprovalStatement, parseStatement, utcDay } from './statement.js';

/** Why a signature does not count. */
export type ApprovalRefusalReason =
  /** The signature cannot be read, or uses an algorithm payouts does not accept. */
  | 'malformed'
  /** Signed for another namespace than payouts-approval. */
  | 'namespace'
  /** The signature does not match the text (tampered, or another key). */
  | 'invalid'
  /** A security key signature made without a touch. */
  | 'presence'
  /** The signed text is not an approval statement. */
  | 'statement'
  /** The key is not in the allowed-signers file. */
  | 'unknown-key'
  /** The file lists the key but not for this namespace. */
  | 'namespace-not-allowed'
  /** The file says the key is not valid yet (valid-after). */
  | 'not-yet-valid'
  /** The file says the key has expired (valid-before). */
  | 'expired';

/** Why a valid approval does not cover this sheet (countApprovals only). */
export type CoverageRefusalReason = 'other-service' | 'other-sheet' | 'too-old' | 'future';

/** Who signed a statement, or why the signature does not count. */
export type ApprovalVerdict =
  | {
      readonly ok: true;
      /** The principals the allowed-signers file gives the key (on lines usable now). */
      readonly principals: readonly string[];
      readonly fingerprint: string;
      readonly keyType: string;
      readonly statement: ApprovalStatement;
    }
  | {
      readonly ok: false;
      readonly reason: ApprovalRefusalReason;
      readonly message: string;
      /** The signing key's fingerprint, when the signature could be read. */
      readonly fingerprint?: string;
    };

export interface VerifyApprovalInput {
  /** The exact text that was signed. */
  readonly statementText: string;
  /** The armored SSHSIG signature (a .sig file's text). */
  readonly armoredSignature: string;
  readonly allowedSigners: AllowedSigners;
  /** `payouts-approval` unless told otherwise. */
  readonly namespace?: string;
  /** Milliseconds since the epoch: the moment valid-after and valid-before are checked at. */
  readonly now: number;
}

const SIGNATURE_REASONS: Record<SignatureError['problem'], ApprovalRefusalReason> = {
  armor: 'malformed',
  truncated: 'malformed',
  trailing: 'malformed',
  magic: 'malformed',
  version: 'malformed',
  algorithm: 'malformed',
  key: 'malformed',
  mismatch: 'malformed',
  namespace: 'namespace',
  presence: 'presence',
  invalid: 'invalid',
};

/** Checks one signed statement against the allowed-signers file; never throws for bad input. */
export function verifyApproval(input: VerifyApprovalInput): ApprovalVerdict {
  const namespace = input.namespace ?? APPROVAL_NAMESPACE;
  let signature: SshSignature;
  try {
    signature = parseArmoredSignature(input.armoredSignature);
  } catch (error) {
    if (error instanceof SignatureError)
      return { ok: false, reason: SIGNATURE_REASONS[error.problem], message: error.message };
    throw error;
  }
  const { fingerprint } = signature.publicKey;
  try {
    verifySshSignature(signature, input.statementText, namespace);
  } catch (error) {
    if (error instanceof SignatureError) {
      return { ok: false, reason: SIGNATURE_REASONS[error.problem], message: error.message, fingerprint };
    }
    throw error;
  }
  const { file } = input.allowedSigners;
  const lines = linesForKey(input.allowedSigners, signature.publicKey);
  if (lines.length === 0) {
    return {
      ok: false,
      reason: 'unknown-key',
      message: `the key ${fingerprint} that signed is not in ${file}: add the approver's public key to it`,
      fingerprint,
    };
  }
  const refusals = lines.map((line) => signerRefusal(line, namespace, input.now, file));
  const usable = lines.filter((_, index) => refusals[index] === undefined);
  if (usable.length === 0) {
    const refusal = refusals[0]!;
    const reason = refusal.reason === 'namespace' ? 'namespace-not-allowed' : refusal.reason;
    return { ok: false, reason, message: `the key ${fingerprint}: ${refusal.message}`, fingerprint };
  }
  let statement: ApprovalStatement;
  try {
    statement = parseStatement(input.statementText);
  } catch (error) {
    if (error instanceof StatementError) {
      return { ok: false, reason: 'statement', message: `the signed text: ${error.message}`, fingerprint };
    }
    throw error;
  }
  return {
    ok: true,
    principals: [...new Set(usable.flatMap((line) => line.principals))],
    fingerprint,
    keyType: signature.publicKey.type,
    statement,
  };
}

/** A signature the register holds for a sheet. */
export interface SignedApproval {
  readonly statementText: string;
  readonly armoredSignature: string;
  /** When the register recorded it (milliseconds since the epoch), reported back as is. */
  readonly recordedAt?: number;
  /**
   * What the caller knows this signature by (the register's statement digest), reported back as
   * is: a key may have signed several statements of one digest, of which only some count.
   */
  readonly id?: string;
}

export interface CountOptions {
  /** This sheet's current batch digest. */
  readonly digest: string;
  /** The service's origin the run pays through. */
  readonly origin: string;
  /** This sheet's file name: a valid signature of another digest under it says the sheet changed. */
  readonly sheet: string;
  /** A statement made more whole days ago than this does not count (`--approval-max-age`). */
  readonly maxAgeDays: number;
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly allowedSigners: AllowedSigners;
  readonly namespace?: string;
}

/** A principal that counts, and the signature it counts by. */
export interface CountedApproval {
  readonly principal: string;
  readonly fingerprint: string;
  /** The day of the statement it signed. */
  readonly day: string;
  readonly recordedAt?: number;
  /** The `id` of the signature it counts by, when the caller gave one. */
  readonly id?: string;
}

/** A valid signature over an earlier statement of this sheet: the sheet changed since. */
export interface StaleApproval {
  readonly principals: readonly string[];
  readonly fingerprint: string;
  readonly digest: string;
  readonly day: string;
  readonly message: string;
}

/** A signature that does not count, and why. */
export interface RefusedApproval {
  readonly reason: ApprovalRefusalReason | CoverageRefusalReason;
  readonly message: string;
  readonly fingerprint?: string;
}

/** What the gate needs to decide and to say so. */
export interface ApprovalCount {
  /** Distinct principals with a counting signature. */
  readonly count: number;
  /** One per counting principal, in the allowed-signers file's order. */
  readonly approvals: readonly CountedApproval[];
  /** Principals of the file without a counting signature, in the file's order. */
  readonly missing: readonly string[];
  /** Valid signatures over an earlier statement of this sheet name, by keys that did not sign again. */
  readonly stale: readonly StaleApproval[];
  readonly refused: readonly RefusedApproval[];
}

const DAY_MS = 86_400_000;

/** A key's first signature that covers this sheet now, and the principals it may count for. */
interface Cover {
  principals: readonly string[];
  day: string;
  recordedAt?: number;
  id?: string;
}

/** What one signature comes to for this sheet now. */
type SignatureVerdict =
  | { kind: 'refused'; refused: RefusedApproval }
  | { kind: 'stale'; stale: StaleApproval }
  | { kind: 'covers'; fingerprint: string; cover: Cover };

/** Counts distinct principals whose valid signature covers this sheet now. */
export function countApprovals(signatures: readonly SignedApproval[], options: CountOptions): ApprovalCount {
  const today = Date.parse(`${utcDay(options.now)}T00:00:00Z`);
  const refused: RefusedApproval[] = [];
  const staleByKey = new Map<string, StaleApproval>();
  // Per key (fingerprint): the first signature that covers.
  const covering = new Map<string, Cover>();
  for (const signed of signatures) {
    const verdict = judgeSignature(signed, options, today);
    if (verdict.kind === 'refused') refused.push(verdict.refused);
    else if (verdict.kind === 'stale') staleByKey.set(verdict.stale.fingerprint, verdict.stale);
    else if (!covering.has(verdict.fingerprint)) covering.set(verdict.fingerprint, verdict.cover);
  }
  const assignment = matchKeysToPrincipals(covering);
  const order = principalsOf(options.allowedSigners);
  const approvals: CountedApproval[] = [];
  for (const principal of order) {
    const fingerprint = assignment.get(principal);
    if (fingerprint === undefined) continue;
    const cover = covering.get(fingerprint)!;
    approvals.push({
      principal,
      fingerprint,
      day: cover.day,
      ...(cover.recordedAt === undefined ? {} : { recordedAt: cover.recordedAt }),
      ...(cover.id === undefined ? {} : { id: cover.id }),
    });
  }
  return {
    count: approvals.length,
    approvals,
    missing: order.filter((principal) => !assignment.has(principal)),
    stale: [...staleByKey.values()].filter((stale) => !covering.has(stale.fingerprint)),
    refused,
  };
}

/**
 * One signature judged for this sheet now: refused (invalid, another service or sheet, too old,
 * dated after today), stale (this sheet name before it changed), or covering it.
 */
function judgeSignature(signed: SignedApproval, options: CountOptions, today: number): SignatureVerdict {
  const verdict = verifyApproval({
    statementText: signed.statementText,
    armoredSignature: signed.armoredSignature,
    allowedSigners: options.allowedSigners,
    now: options.now,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  if (!verdict.ok) {
    const { reason, message } = verdict;
    return {
      kind: 'refused',
      refused: {
        reason,
        message,
        ...(verdict.fingerprint === undefined ? {} : { fingerprint: verdict.fingerprint }),
      },
    };
  }
  const { statement, fingerprint } = verdict;
  const who = `${verdict.principals.join(', ')} (${fingerprint})`;
  const refuse = (reason: RefusedApproval['reason'], message: string): SignatureVerdict => ({
    kind: 'refused',
    refused: { reason, message, fingerprint },
  });
  if (statement.origin !== options.origin)
    return refuse('other-service', `${who} approved this for ${statement.origin}, not ${options.origin}`);
  if (statement.digest !== options.digest) {
    if (statement.sheet.normalize('NFC') !== options.sheet.normalize('NFC')) {
      return refuse(
        'other-sheet',
        `${who} signed another sheet (${statement.sheet}, digest ${statement.digest.slice(0, 12)}...)`,
      );
    }
    return {
      kind: 'stale',
      stale: {
        principals: verdict.principals,
        fingerprint,
        digest: statement.digest,
        day: statement.day,
        message: `the sheet changed since ${who} signed it on ${statement.day} (digest ${statement.digest.slice(0, 12)}..., now ${options.digest.slice(0, 12)}...): validate again and have it signed again`,
      },
    };
  }
  const age = (today - Date.parse(`${statement.day}T00:00:00Z`)) / DAY_MS;
  if (age > options.maxAgeDays) {
    return refuse(
      'too-old',
      `${who} signed on ${statement.day}, ${age} days ago, more than the ${options.maxAgeDays} allowed: have it signed again`,
    );
  }
  if (age < 0) {
    return refuse(
      'future',
      `${who} signed a statement dated ${statement.day}, after today (${utcDay(options.now)}): check the clocks`,
    );
  }
  const cover: Cover = {
    principals: verdict.principals,
    day: statement.day,
    ...(signed.recordedAt === undefined ? {} : { recordedAt: signed.recordedAt }),
    ...(signed.id === undefined ? {} : { id: signed.id }),
  };
  return { kind: 'covers', fingerprint, cover };
}

/**
 * The most principals the keys can count for, each key for one principal and each principal
 * by one key: a maximum bipartite matching (augmenting paths). A first-come assignment could
 * spend a key listing two principals on the one another key also covers, and count one too few.
 * Returns principal -> fingerprint.
 */
function matchKeysToPrincipals(
  keys: ReadonlyMap<string, { principals: readonly string[] }>,
): Map<string, string> {
  const owner = new Map<string, string>();
  const tryKey = (fingerprint: string, visited: Set<string>): boolean => {
    for (const principal of keys.get(fingerprint)!.principals) {
      if (visited.has(principal)) continue;
      visited.add(principal);
      const holder = owner.get(principal);
      if (holder === undefined || tryKey(holder, visited)) {
        owner.set(principal, fingerprint);
        return true;
      }
    }
    return false;
  };
  for (const fingerprint of keys.keys()) tryKey(fingerprint, new Set());
  return owner;
}
