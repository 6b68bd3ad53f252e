/**
 * The register (PRODUCT.md "Never pay twice: the register"; issue 7) in payouts' own terms:
 * scopes, runs, payouts, payees and webhook events. The rest of the code speaks to this
 * interface, never to SQL, so that a PostgreSQL store can stand beside the SQLite one
 * (sqlite.ts) for teams that run many containers against one integrator.
 */
import type { PayoutDetails } from './details.js';
import type { ScopeIdentity } from './identity.js';

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
  host: string;
  pid: number;
  startedAt: string;
  /** Refreshed while the run lives; a run silent past the lease is dead. */
  heartbeatAt: string;
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
  /** The holding run, when it is still recorded. */
  run?: RunRecord;
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

/** What changes on a payout as its run goes through the steps. */
export interface PayoutChange {
  state?: PayoutState;
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
  error?: string | null;
}

/** A webhook event (SPEC.md 2.2) as the register keeps it. */
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

/** The register of one service and integrator. */
export interface ScopeStore {
  readonly scope: ScopeInfo;
  /** Keyed hash (the scope's secret) of payee details: compares equal details, reveals nothing. */
  fingerprint(canonical: string): string;
  /** The records of these references (absent when unknown). */
  lookup(references: readonly string[]): Promise<Map<string, PayoutRecord>>;
  /** Recent payouts, newest first. */
  recentPayouts(limit: number): Promise<PayoutRecord[]>;
  /** The id of a beneficiary or recipient created earlier for these details. */
  payee(kind: 'beneficiary' | 'recipient', fingerprint: string): Promise<string | undefined>;
  rememberPayee(kind: 'beneficiary' | 'recipient', fingerprint: string, id: string): Promise<void>;
  beginRun(run: Omit<RunRecord, 'heartbeatAt' | 'finishedAt'>): Promise<void>;
  heartbeat(runId: string): Promise<void>;
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
  /** Records a step of a payout this run holds; resolves once it is durable. */
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
  /** Gives back the claims of `runId` that sent nothing (a run stopped early). */
  release(runId: string): Promise<void>;
  /** The settling webhook event of each transaction, where one was recorded. */
  settledEvents(transactionIds: readonly string[]): Promise<Map<string, EventRecord>>;
}

/** What a claim does with one reference: hold it, mark an abandoned send unknown, or leave it. */
export type ClaimDecision = 'claim' | 'mark-unknown' | 'leave';

/** The register file (or database) as a whole. */
export interface Register {
  /** The file (or database URL) it lives in. */
  readonly location: string;
  readonly readonly: boolean;
  /** Opens the scope of a service and integrator, creating it (and its secret) on first use. */
  openScope(identity: ScopeIdentity, login?: string): Promise<ScopeStore>;
  /** The scopes recorded, most recently used first. */
  scopes(): Promise<ScopeInfo[]>;
  /** A recorded scope, read as it is (validate, status). */
  scopeStore(scope: ScopeInfo): Promise<ScopeStore>;
  /**
   * Records a webhook event, once (SPEC.md 6.1: resourceId plus operation identifies a
   * duplicate), and settles the payout whose transaction it names. False for a duplicate.
   */
  recordEvent(event: EventRecord, settles?: Settlement): Promise<boolean>;
  close(): Promise<void>;
}
