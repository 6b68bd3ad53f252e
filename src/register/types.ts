/**
 * The register (docs/register.md) in payouts' own terms: scopes,
 * runs, payouts, payees and webhook events. The rest of the code speaks to this contract, never
 * to SQL or a driver; it is written once (store.ts) above two stores, one SQLite file (sqlite.ts)
 * and one PostgreSQL database shared by many machines (postgres.ts), and one test suite holds
 * both to it.
 */
import type { Clock, OutageClock } from '../clock.js';
import type { PayoutDetails } from './details.js';
import type { ScopeIdentity } from './identity.js';
import type { RegisterSource } from './location.js';

/** This process as a claim owner (lease.ts). */
export interface Self {
  runId: string;
  /** For people: the host name and pid say where a run was; they decide nothing on their own. */
  host: string;
  pid: number;
  /** The process table this process lives in: kernel boot and PID namespace (Linux). */
  machine?: string;
  /** When this process started, in the kernel's clock ticks since boot (tells a reused pid). */
  processStart?: string;
}

/**
 * Where a payout stands in the register.
 * - `claimed`: a run holds it; no transaction request has left for it.
 * - `sending`: the transaction's intent is durable; the request may have left.
 * - `submitted`, `completed`, `failed`: the transaction exists (failed: the bank refused it).
 * - `unknown`: the request may have taken effect, but no answer says so.
 * - `refused`: refused before any transaction existed; the next run sends it again.
 */
export const PAYOUT_STATES = [
  'claimed',
  'sending',
  'submitted',
  'completed',
  'failed',
  'unknown',
  'refused',
] as const;
export type PayoutState = (typeof PAYOUT_STATES)[number];

/** One run of `payouts run` as the register knows it: who holds claims, and the batch history. */
export interface RunRecord {
  id: string;
  /** The sheet's file name as given on the command line. */
  sheet: string;
  /** The batch digest of its valid rows. */
  digest: string;
  /** Where it ran, for people. */
  host: string;
  pid: number;
  /** The process table it ran in (lease.ts): kernel boot and PID namespace. */
  machine?: string;
  /** Its process's start in ticks since boot: tells a reused pid. */
  processStart?: string;
  startedAt: string;
  /** Refreshed while the run lives (the writer's wall clock, for people). */
  heartbeatAt: string;
  /** When its lease runs out, in the store's time (for people). */
  leaseExpiresAt: string;
  /** Whether its lease had run out when this record was read, by the store's own clock. */
  leaseExpired: boolean;
  finishedAt?: string;
  /** Row count and counts per status when it finished. */
  rows?: number;
  statuses?: Record<string, number>;
  exitCode?: number;
}

/** What the register knows of one payout. */
export interface PayoutRecord {
  reference: string;
  details: PayoutDetails;
  state: PayoutState;
  idempotencyKey: string;
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
  /** Why it failed, was refused or is unknown (scrubbed of secrets and long digit runs). */
  error?: string;
  /** The run that holds it or last held it. */
  runId: string;
  /** That run's sheet. */
  sheet: string;
  /** When the transaction was created (ISO 8601), once it was. */
  paidAt?: string;
  updatedAt: string;
  /** The keyed identity of its payee (its payee history's key), once its transaction was about to be sent. */
  payeeKey?: string;
  /** The payee's name as the sheet gave it. */
  payeeName?: string;
  /**
   * The approver's warnings of its row as the run that sent it judged them (encodeWarnings in
   * batch/warnings.ts), set with the intent to send: a later reading of the same batch counts them
   * as they were, whatever the payee's history has learnt since.
   */
  warnings?: string;
  /** The holding run, when it is still recorded. */
  run?: RunRecord;
}

/**
 * A signed approval as the register keeps it (docs/approval.md, "Signing an approval"): the
 * exact text signed and the armored signature, so that any later run checks it again itself,
 * and what it names, so that a sheet's approvals are found without reading every one.
 */
export interface ApprovalRecord {
  /** SHA-256 (hex) of the signed text: with the key, what names one approval. */
  statementDigest: string;
  /** The signing key's fingerprint, `SHA256:...` as ssh-keygen prints it. */
  fingerprint: string;
  /** The service's origin the statement names. */
  origin: string;
  /** The batch digest the statement names. */
  digest: string;
  /** The sheet's file name the statement names. */
  sheet: string;
  /** The signed text, byte for byte. */
  statement: string;
  /** The armored SSHSIG signature. */
  signature: string;
  /** Whom the allowed-signers file given when it was recorded named (none: not given). */
  principals: string[];
  /** When it was recorded (ISO 8601). */
  recordedAt: string;
}

/**
 * A signed withdrawal of an approval (docs/approval.md "Withdrawing an approval"): the approval's
 * statement under the format line `payouts approval revoked v1`, signed by the approver's key.
 * From then on that principal's approval of that statement counts nowhere.
 */
export interface WithdrawalRecord {
  /** SHA-256 (hex) of the signed withdrawal text: with the key, what names one withdrawal. */
  statementDigest: string;
  /** SHA-256 (hex) of the approval statement it withdraws (ApprovalRecord.statementDigest). */
  approvalDigest: string;
  fingerprint: string;
  origin: string;
  digest: string;
  sheet: string;
  /** The signed withdrawal text, byte for byte. */
  statement: string;
  signature: string;
  recordedAt: string;
}

/**
 * A policy proposed for a service (docs/approval.md "The policy"): its canonical JSON, and the
 * version in force it would replace (0: none). It takes effect once enough admins signed it.
 */
export interface PolicyProposal {
  /** The service's origin. */
  service: string;
  /** SHA-256 (hex) of the policy's canonical JSON. */
  digest: string;
  replaces: number;
  /** The policy's canonical JSON. */
  policy: string;
  proposedAt: string;
}

/** A signature over a policy proposal's statement (`payouts policy v1`). */
export interface PolicySignature {
  /** SHA-256 (hex) of the signed text: with the key, what names one signature. */
  statementDigest: string;
  fingerprint: string;
  service: string;
  /** The proposal it signs: the policy's digest and the version it replaces. */
  digest: string;
  replaces: number;
  statement: string;
  signature: string;
  recordedAt: string;
}

/** A version of a service's policy, in force from `since` until the next version. */
export interface PolicyVersion {
  service: string;
  /** 1 for the first policy, one more for each change. */
  version: number;
  digest: string;
  /** The policy's canonical JSON. */
  policy: string;
  /** The admins whose signatures put it in force. */
  signedBy: string[];
  since: string;
}

/** An approval a run relied on: who counted, by which key and signature. */
export interface RunApproval {
  principal: string;
  fingerprint: string;
  /** The signed statement's SHA-256 (ApprovalRecord.statementDigest). */
  statementDigest: string;
  /** When the approval was recorded (ISO 8601). */
  recordedAt: string;
}

/** A recorded scope: one service and one integrator. */
export interface ScopeInfo extends ScopeIdentity {
  id: number;
  /** The dashboard user that last opened it (not a secret): lets `validate` pick it offline. */
  login?: string;
  createdAt: string;
  lastUsedAt: string;
}

/** What a run asks to hold: a reference with its details and transaction key. */
export interface ClaimRequest {
  reference: string;
  details: PayoutDetails;
  idempotencyKey: string;
}

/** A batch the register paid, as its latest run tells (its payouts: `batchPayouts`). */
export interface PaidBatch {
  digest: string;
  sheet: string;
  /** Its latest run's start (ISO 8601). */
  at: string;
  /** The rows its latest run read; null when that run never said (its payouts then count). */
  rows: number | null;
}

/** A submitted or completed payout of a paid batch, with its payee. */
export interface BatchPayout {
  /** The payee history's key (a keyed hash of the payee's identity). */
  payee: string;
  /** The name the sheet gave the payee on this payout. */
  name: string;
  reference: string;
  amount: string;
  currency: string;
}

/** What changes on a payout as its run goes through the steps. */
export interface PayoutChange {
  state?: PayoutState;
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
  error?: string | null;
  /** Who it pays: the payee history's key and the name the sheet gave (set with the intent to send). */
  payeeKey?: string;
  payeeName?: string;
  /** The row's warnings as judged before sending (PayoutRecord.warnings). */
  warnings?: string;
}

/** A webhook event (docs/service.md "Webhook payload") as the register keeps it. */
export interface EventRecord {
  integratorId: string;
  resourceId: string;
  operation: string;
  success: boolean;
  message: string | null;
  occurredAt: string;
  receivedAt: string;
  /** The payload as received (JSON text). */
  payload: string;
}

/** What a settling event says of its transaction. */
export interface Settlement {
  transactionId: string;
  state: 'completed' | 'failed';
  error: string | null;
}

/** One payout to a payee as the payee's history keeps it: no account number in clear. */
export interface PayeePayment {
  /** Keyed hash of the bank details paid (PayoutDetails.payee). */
  account: string;
  /** Those bank details for people, masked: "account ****6789". */
  accountHint: string;
  reference: string;
  rail: string;
  /** When the transaction was created (ISO 8601). */
  paidAt: string;
  /** Normalised decimal text, "1234.50". */
  amount: string;
  currency: string;
}

/** A payout as a payee's rhythm needs it: when, how much, under which reference, to which account. */
export type PayeePayday = Pick<PayeePayment, 'reference' | 'paidAt' | 'amount' | 'currency'> & {
  /**
   * The first characters of the keyed hash of the account paid (rules.ts accountTag): when the
   * last payout to an account fails, an earlier payday to it keeps the account known. A few
   * characters tell a payee's few accounts apart at a fraction of the full hash in every payday.
   * Added after histories were first stored, so optional: a history written before has paydays
   * without it, read as ever, whose account is simply not known (rules.ts layerWithout).
   */
  accountTag?: string;
  /**
   * The keyed hash of the account paid, in a payday that is the last payout to its account too:
   * read from the register, such a payday is that account's payout itself (history-text.ts), and
   * its tag is the start of this hash (rules.ts paydayTag).
   */
  account?: string;
};

/** A payee's payouts as they stood at one moment. */
export interface PayeeLayer {
  /**
   * The last payout to each account the payee was paid to, newest first by when it was paid
   * (at most PAYEE_ACCOUNTS_KEPT): a payee paid to two accounts every month has two, both its own.
   */
  accounts: PayeePayment[];
  /**
   * The payee's latest paydays to any account, newest first by when they were paid (at most
   * PAYEE_PAYMENTS_KEPT): the payee's usual interval, the payouts a possible duplicate is compared
   * with, and the accounts a failed payout leaves known. Only what that needs is kept, so a history
   * stays small. Absent in a history written before it was kept: the
   * last payout to each account stands in.
   */
  payments?: PayeePayday[];
  /** The largest amount paid, per currency (decimal text). */
  largest: Record<string, string>;
}

/**
 * What the register remembers of one payee (docs/approval.md "What the register remembers of a
 * payee"), keyed by a keyed hash of its identity (rows/payee.ts), and the same as it stood before
 * the batch that changed it last (`batch`, a sheet's tag): a resumed run compares its rows with
 * what the first run saw, never with its own payouts (rules.ts historyFor).
 */
export interface PayeeHistory extends PayeeLayer {
  batch: string;
  before?: PayeeLayer;
  /** The name the sheet last gave the payee (a history from before names were kept has none). */
  name?: string;
}

/** The register of one service and integrator. */
export interface ScopeStore {
  readonly scope: ScopeInfo;
  /** Keyed hash (the scope's secret) of payee details: compares equal details, reveals nothing. */
  fingerprint(canonical: string): string;
  /** The records of these references (absent when unknown). */
  lookup(references: readonly string[]): Promise<Map<string, PayoutRecord>>;
  /** Recent payouts, newest first. */
  recentPayouts(limit: number): Promise<PayoutRecord[]>;
  /** The ids of the beneficiaries or recipients created earlier for these details, by fingerprint. */
  payees(kind: 'beneficiary' | 'recipient', fingerprints: readonly string[]): Promise<Map<string, string>>;
  rememberPayee(kind: 'beneficiary' | 'recipient', fingerprint: string, id: string): Promise<void>;
  /** The history of these payees (keyed hashes of their identity), where the register has one. */
  payeeHistory(payees: readonly string[]): Promise<Map<string, PayeeHistory>>;
  /** Whether any payee of this scope has a history (none: every payee is new, nothing to look up). */
  hasPayeeHistory(): Promise<boolean>;
  /**
   * The latest batches (by batch digest: a resumed run is the same batch) that paid something,
   * latest first: what `sincePrevious` compares with.
   */
  paidBatches(limit: number): Promise<PaidBatch[]>;
  /**
   * The submitted or completed payouts of the batch `digest` with their payees, by reference,
   * `page` at a time (a few thousand unless told): a batch can pay a million payees. Each
   * iteration reads them anew.
   */
  batchPayouts(digest: string, page?: number): AsyncIterable<BatchPayout[]>;
  /** Adds a payout of `batch` (a sheet's tag) whose transaction was created to its payee's history. */
  recordPayment(payee: string, payment: PayeePayment, batch: string, name?: string): Promise<void>;
  /** Records a run and gives it its first lease (in the store's time). */
  beginRun(run: NewRun): Promise<void>;
  /** Renews the run's lease; tells how many runs of this scope hold a live lease now. */
  heartbeat(runId: string): Promise<{ liveRuns: number }>;
  finishRun(runId: string, outcome: Pick<RunRecord, 'rows' | 'statuses' | 'exitCode'>): Promise<void>;
  runs(limit: number): Promise<RunRecord[]>;
  /**
   * Decides every request against what the register holds, and claims for `runId` those that
   * are to be sent, in one transaction: two runs never both hold one reference.
   */
  claim(
    runId: string,
    requests: readonly ClaimRequest[],
    decide: (request: ClaimRequest, record: PayoutRecord | undefined) => ClaimDecision,
  ): Promise<Map<string, PayoutRecord | undefined>>;
  /**
   * Records a step of a payout this run holds; resolves once it is durable. Fenced: throws
   * ClaimLostError when the run no longer holds it (or, for the intent to send, when its lease
   * ran out), so a run that lost its claim never sends it (rules.ts needsLease).
   */
  update(runId: string, reference: string, change: PayoutChange): Promise<void>;
  /**
   * Records what a webhook or a status check said of a paid payout's transaction, whichever
   * run paid it.
   */
  settle(
    reference: string,
    transactionId: string,
    state: 'completed' | 'failed',
    error?: string,
  ): Promise<void>;
  /**
   * The payouts `reconcile` asks the service about: in one of `states`, sent or changed since
   * `since` (ISO 8601) when given, by reference after `after`, at most `limit`.
   */
  payoutsIn(query: {
    states: readonly PayoutState[];
    since?: string;
    after?: string;
    limit: number;
  }): Promise<PayoutRecord[]>;
  /**
   * What `reconcile` learnt of a payout in doubt (`unknown`), whichever run left it: the
   * transaction its reference created, in the state the service gives; or that none exists
   * (then `refused`, sent again by the next run under its key). False when it was no longer
   * `unknown` (a run took it meanwhile).
   */
  resolveUnknown(reference: string, found: UnknownResolved): Promise<boolean>;
  /**
   * Marks `unknown` a payout whose run stopped while its transaction request was being sent
   * (`sending`, its holder no longer alive), as the next run's claim would: reconcile may then
   * ask the service about it. False when it is not such a payout (any more).
   */
  abandonSend(reference: string, self: Self): Promise<boolean>;
  /** Gives back the claims of `runId` that sent nothing (a run stopped early). */
  release(runId: string): Promise<void>;
  /** The settling webhook event of each transaction, where one was recorded. */
  settledEvents(transactionIds: readonly string[]): Promise<Map<string, EventRecord>>;
  /** Records the approvals a run relied on (its gate's count); once per run and principal. */
  recordRunApprovals(runId: string, approvals: readonly RunApproval[]): Promise<void>;
  /** The approvals each of these runs relied on, per run id (a run without any is absent). */
  runApprovals(runIds: readonly string[]): Promise<Map<string, RunApproval[]>>;
}

/** What became of a payout in doubt: its transaction, or none at all. */
export type UnknownResolved =
  | {
      transactionId: string;
      state: 'submitted' | 'completed' | 'failed';
      error?: string;
      /** When the service created the transaction (its `createdAt`), where its answer says. */
      createdAt?: string;
    }
  | { absent: true; reason: string };

/** A run as `beginRun` records it: the lease and heartbeat are the store's to set. */
export type NewRun = Omit<RunRecord, 'heartbeatAt' | 'finishedAt' | 'leaseExpiresAt' | 'leaseExpired'>;

/** What a claim does with one reference: hold it, mark an abandoned send unknown, or leave it. */
export type ClaimDecision = 'claim' | 'mark-unknown' | 'leave';

/** A run as a register stores it (what `register copy` moves): its lease is read, not stored. */
export type StoredRun = Omit<RunRecord, 'leaseExpired'>;

/** A payout as a register stores it: its run is a record of its own. */
export type StoredPayout = Omit<PayoutRecord, 'run'>;

/** Where an entry belongs: a scope is named by its service and integrator, not by a store's id. */
export interface ScopeKey {
  service: string;
  integratorId: string;
}

/**
 * One record of a register as `payouts register copy` moves it from one store to another.
 * Scopes carry their secret (base64): the payee fingerprints are keyed by it.
 */
export type RegisterEntry =
  | ({ type: 'scope'; secret: string; login?: string; createdAt: string; lastUsedAt: string } & ScopeKey)
  | ({ type: 'run'; run: StoredRun } & ScopeKey)
  | ({ type: 'payout'; payout: StoredPayout } & ScopeKey)
  | ({
      type: 'payee';
      kind: 'beneficiary' | 'recipient';
      fingerprint: string;
      id: string;
      createdAt: string;
    } & ScopeKey)
  | ({ type: 'history'; payee: string; history: PayeeHistory } & ScopeKey)
  | { type: 'event'; event: EventRecord }
  | { type: 'approval'; approval: ApprovalRecord }
  | ({ type: 'runApproval'; runId: string; approval: RunApproval } & ScopeKey)
  | { type: 'withdrawal'; withdrawal: WithdrawalRecord }
  | { type: 'policyProposal'; proposal: PolicyProposal }
  | { type: 'policySignature'; signature: PolicySignature }
  | { type: 'policy'; policy: PolicyVersion }
  | ({ type: 'origin'; declaration: OriginDeclaration; declaredAt: string } & ScopeKey);

/**
 * What the operator declared of an origin (a spelling of the service's URL) that an integrator
 * reached with payouts recorded under another: the same service as `sameAs` (its scope and
 * keys are used), or a separate service (a staging copy with the same integrator id).
 */
export type OriginDeclaration = { sameAs: string } | { separate: true };

/** The register file (or database) as a whole. */
export interface Register {
  /** Where it lives, as people may see it: the file, or the database URL without its password. */
  readonly location: string;
  readonly readonly: boolean;
  /**
   * Resolves when the register takes a write now, rejects when it does not (a lock another
   * process holds, a server away): one attempt, no outage waited through. A readiness probe.
   */
  ready(): Promise<void>;
  /** Opens the scope of a service and integrator, creating it (and its secret) on first use. */
  openScope(identity: ScopeIdentity, login?: string): Promise<ScopeStore>;
  /** The scopes recorded, most recently used first. */
  scopes(): Promise<ScopeInfo[]>;
  /** A recorded scope, read as it is (validate, status). */
  scopeStore(scope: ScopeInfo): Promise<ScopeStore>;
  /**
   * Records a webhook event, once (resourceId plus operation identifies a duplicate:
   * docs/service.md "Webhook delivery"), and settles the payout whose transaction it names. False
   * for a duplicate.
   */
  recordEvent(event: EventRecord, settles?: Settlement): Promise<boolean>;
  /** What was declared of this origin for this integrator (undefined: nothing yet). */
  origin(key: ScopeKey): Promise<OriginDeclaration | undefined>;
  /** Remembers what the operator declared of this origin; a declaration stands once made. */
  declareOrigin(key: ScopeKey, declaration: OriginDeclaration): Promise<void>;
  /**
   * Records a signed approval; false when the register held it already (the same text signed by
   * the same key). The caller has checked it: the register keeps, it does not judge.
   */
  recordApproval(approval: ApprovalRecord): Promise<boolean>;
  /**
   * The approvals recorded that name this batch digest or this sheet name, whatever service
   * they name (the gate says which do not cover the sheet, and why), oldest first.
   */
  approvals(query: { digest: string; sheet?: string }): Promise<ApprovalRecord[]>;
  /** Records a signed withdrawal of an approval; false when held already. Checked by the caller. */
  recordWithdrawal(withdrawal: WithdrawalRecord): Promise<boolean>;
  /** The withdrawals that name this batch digest or this sheet name, oldest first. */
  withdrawals(query: { digest: string; sheet?: string }): Promise<WithdrawalRecord[]>;
  /** Records a policy proposal; false when the same one (policy and version replaced) is held. */
  recordPolicyProposal(proposal: PolicyProposal): Promise<boolean>;
  /** The proposal of this policy digest replacing this version of the service's policy. */
  policyProposal(query: {
    service: string;
    digest: string;
    replaces: number;
  }): Promise<PolicyProposal | undefined>;
  /** Records a signature over a policy proposal; false when held already. Checked by the caller. */
  recordPolicySignature(signature: PolicySignature): Promise<boolean>;
  /** The signatures over one proposal, oldest first. */
  policySignatures(query: { service: string; digest: string; replaces: number }): Promise<PolicySignature[]>;
  /**
   * Puts a version of a service's policy in force; false when that version exists already (another
   * proposal replacing the same version took effect first: this one no longer applies).
   */
  enactPolicy(version: PolicyVersion): Promise<boolean>;
  /** The service's policy in force: its latest version (undefined: none). */
  policy(service: string): Promise<PolicyVersion | undefined>;
  /** Every version of the service's policy, oldest first. */
  policyHistory(service: string): Promise<PolicyVersion[]>;
  /** Every record, a scope before what belongs to it (`register copy`). */
  entries(): AsyncIterable<RegisterEntry>;
  /**
   * Adds each entry whose key the register does not hold yet, in one transaction; gives back,
   * for each, the entry it already held under that key (undefined: added).
   */
  putAll(entries: readonly RegisterEntry[]): Promise<(RegisterEntry | undefined)[]>;
  close(): Promise<void>;
}

/** How a register is opened (open.ts). */
export interface OpenOptions {
  /** Read only (validate, status): never creates a register, never writes. */
  readonly?: boolean;
  /**
   * Create the register when there is none (`register init`, `register copy --to`, a rehearsal's
   * throwaway one). Otherwise a missing register is an error: a mistyped location or a volume
   * that was not mounted must never start a second history.
   */
  create?: boolean;
  /** Where the location came from, for the message when there is no register there. */
  from?: RegisterSource;
  /** The wall clock (tests); the SQLite store then times leases by it alone. */
  clock?: Clock;
  /** How long a run's lease lasts past its last heartbeat (ms). */
  leaseMs?: number;
  /** Told once of something a person should know about the connection (a non-TLS remote database). */
  warn?: (message: string) => void;
  /**
   * `--max-outage` (ms): how long the register may fail before an operation gives up (outage.ts);
   * every operation's deadline is half of it, at most 20 s, at least 1 s.
   */
  maxOutageMs?: number;
  /** Aborted when a stopped command's grace is over: register operations end at once. */
  abandon?: AbortSignal;
  /**
   * Aborted at a stop (the first signal): waiting to open a SQLite register another process
   * holds locked ends at once with an InterruptedError, since nothing was sent yet.
   */
  stop?: AbortSignal;
  /** Told once per outage of the register, in words, when it begins. */
  onOutage?: (words: string) => void;
  /** A server (`webhooks listen`): after an outage past the budget, later operations try again. */
  keepTrying?: boolean;
  /** Time read and waited on through an outage and every deadline (tests); by default the machine's. */
  outageClock?: OutageClock;
}
