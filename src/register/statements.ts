/**
 * The register's statements, written once for both stores, as kysely's dialects override one
 * shared compiler: a store gives the few things its SQL says its own way (StatementDialect:
 * where its tables are, its time, how a list is bound, how a lease is written and read, a time
 * parameter's type), and `statementsFor` spells every statement with them. What a store does
 * its own way beyond that (SQLite's packed look-ups, PostgreSQL's claim by columns) stays in it.
 */
import { PAYOUT_COLUMNS, PAYOUT_FIELDS, RUN_COLUMNS } from './records.js';
import type { TransferStatements } from './transfer.js';

/**
 * A store's statements, with the `:name`s each operation passes (every one gets `:now`, the
 * store's time as text, which a store whose database has a clock of its own need not use).
 */
export interface Statements extends TransferStatements {
  /** The payouts table, and the store's time in a statement, for an update built per change. */
  payoutsTable: string;
  now: string;
  /** :service :integrator :secret :login; gives the scope's row. */
  openScope: string;
  scopesByUse: string;
  /** :id */
  scope: string;
  /** :state :error :transaction :integrator :settleable (states) */
  settleByEvent: string;
  /** :service :integrator */
  origin: string;
  /** :service :integrator :sameAs */
  declareOrigin: string;
  /** Payouts with their run's columns (`r_`), newest first: :scope :limit. */
  recent: string;
  /** The same, of the references :references of :scope. */
  lookup: string;
  /**
   * What a fence the register judges (store.ts fencedWrite) reads first: the holder and state of
   * :reference of :scope, and the lease of the writing run :fenceRun.
   */
  fenceFacts: string;
  /** :scope :states :after :since (null: any time) :limit */
  payoutsIn: string;
  /** :scope :kind :fingerprints */
  payees: string;
  /** :scope :kind :fingerprint :id */
  rememberPayee: string;
  /** :scope :payees */
  payeeHistory: string;
  hasPayeeHistory: string;
  /** :scope :payee :history :was: replaces the history only if it is still `:was`. */
  replaceHistory: string;
  /** :id :scope :sheet :digest :host :pid :machine :processStart :startedAt and the lease (below). */
  beginRun: string;
  /** :id and the lease: :leaseEnd :leaseBoot :leaseUptime, or :leaseSeconds for the store's own clock. */
  renewLease: string;
  /** The leases of the unfinished runs of :scope. */
  openLeases: string;
  /** :id :rows :statuses :exitCode */
  finishRun: string;
  /** :scope :limit, newest first. */
  recentRuns: string;
  /**
   * Whether a statement over rows (`claim`, `markUnknown`) takes them all at once, a list per
   * column, or runs once per row, each column a value.
   */
  rowsAsLists: boolean;
  /** References claimed by :run of :scope (CLAIM_ROW), taken over from whatever held them. */
  claim: string;
  /** Payouts of :scope marked unknown (`reference`, `why`). */
  markUnknown: string;
  /** :state :error :scope :reference :transaction :settleable */
  settle: string;
  /** :reason :scope :reference */
  resolveAbsent: string;
  /** :why :scope :reference :run :now: `sending` to `unknown`, if `:run` still holds it. */
  abandonSend: string;
  /**
   * :state :transaction :error :sentAt :scope :reference. Dated :sentAt (rules.ts sentAt), else
   * when the register last heard of its send (`updated_at` as it was), never when it was found.
   */
  resolveFound: string;
  /** :scope :run */
  release: string;
  /** :integrator :transactions, by occurrence. */
  settledEvents: string;
  /** The scope and reference of the payouts of :transaction of :integrator. */
  byTransaction: string;
  /** The batch digests of :scope that paid something, latest first: :limit. */
  paidBatches: string;
  /** The latest run of a batch: :scope :digest. */
  batchRun: string;
  /** The ids of every run of a batch: :scope :digest. */
  batchRuns: string;
  /** A row when :scope has runs of another batch than :digest. */
  otherBatches: string;
  /**
   * The submitted or completed payouts of a batch with their payees, by reference after :after,
   * walking the scope's payouts: :scope :digest :after :limit.
   */
  batchPayouts: string;
  /**
   * The same of one run of a batch, through the index by run: :scope :run :after :limit.
   */
  runPayouts: string;
  /** An approval's columns (ApprovalRecord, `:principals` as JSON); added unless held. */
  recordApproval: string;
  /** :digest :sheet (null: none), oldest first. */
  approvals: string;
  /** :scope :run :principal :fingerprint :statementDigest :recordedAt; added unless held. */
  recordRunApproval: string;
  /** :scope :runs */
  runApprovals: string;
  /** A withdrawal's columns (WithdrawalRecord); added unless held. */
  recordWithdrawal: string;
  /** :digest :sheet (null: none), oldest first. */
  withdrawals: string;
  /** A policy proposal's columns; added unless held. */
  recordPolicyProposal: string;
  /** :service :digest :replaces */
  policyProposal: string;
  /** A policy signature's columns; added unless held. */
  recordPolicySignature: string;
  /** :service :digest :replaces, oldest first. */
  policySignatures: string;
  /** A policy version's columns; added unless its version is held. */
  enactPolicy: string;
  /** :service: its latest version. */
  policyInForce: string;
  /** :service: every version, oldest first. */
  policyHistory: string;
}

/** The register's tables. */
type Table =
  | 'scopes'
  | 'runs'
  | 'payouts'
  | 'payees'
  | 'payee_history'
  | 'events'
  | 'origins'
  | 'approvals'
  | 'run_approvals'
  | 'approval_withdrawals'
  | 'policy_proposals'
  | 'policy_signatures'
  | 'policies';

/** What a store's SQL says its own way. */
export interface StatementDialect {
  /** The schema that holds the tables, with its dot ('payouts.'), or '' for none. */
  schema: string;
  /** The store's time in a statement: `:now` given by the register, or the database's clock. */
  now: string;
  /** `IN` the list bound as `:name`, as the store binds a list. */
  inList(name: string): string;
  /** The parameter `:name`, a time or null, as the store compares it with a stored time. */
  time(name: string): string;
  /** A lease's end as written: `:leaseEnd` from the register, or from the database's clock. */
  leaseEnd: string;
  /** A run's lease columns besides its end, with the parameter each is written from. */
  leaseClock: readonly (readonly [column: string, value: string])[];
  /** Read beside a lease, what judges it: the database's time (`, now() AS store_now`), or ''. */
  storeNow: string;
  /** Whether a run's page names its scope too (where the index by run then reads it in order). */
  runPageScoped: boolean;
  /**
   * The rows a statement writes, as a table named `alias` of these text columns, each bound as
   * `:column`: a value, the statement running once per row, or (`rowsAsLists`) a list of them all.
   */
  rows(alias: string, columns: readonly string[]): string;
  rowsAsLists: boolean;
  /** A first history's row, where the store places it its own way; else a plain insert. */
  addHistory?(table: string): string;
}

/** The columns of a claim's rows. */
export const CLAIM_ROW = [
  'reference',
  'amount',
  'currency',
  'rail',
  'payee',
  'payee_hint',
  'state',
  'idempotency_key',
  'simulation_id',
  'transaction_id',
] as const;

/** A table's name as the store's statements write it. */
type Tables = (table: Table) => string;

/** Every statement of the register, spelt for the store `d`. */
export function statementsFor(d: StatementDialect): Statements {
  const t: Tables = (table) => `${d.schema}${table}`;
  const { now } = d;
  return {
    payoutsTable: t('payouts'),
    now,
    rowsAsLists: d.rowsAsLists,
    openScope: `INSERT INTO ${t('scopes')} (service, integrator_id, secret, login, created_at, last_used_at)
      VALUES (:service, :integrator, :secret, :login, ${now}, ${now})
      ON CONFLICT (service, integrator_id) DO UPDATE SET last_used_at = excluded.last_used_at,
        login = coalesce(excluded.login, scopes.login)
      RETURNING *`,
    scopesByUse: `SELECT * FROM ${t('scopes')} ORDER BY last_used_at DESC, id DESC`,
    scope: `SELECT * FROM ${t('scopes')} WHERE id = :id`,
    origin: `SELECT same_as FROM ${t('origins')} WHERE service = :service AND integrator_id = :integrator`,
    declareOrigin: `INSERT INTO ${t('origins')} (service, integrator_id, same_as, declared_at)
      VALUES (:service, :integrator, :sameAs, ${now}) ON CONFLICT (service, integrator_id)
      DO UPDATE SET same_as = excluded.same_as, declared_at = excluded.declared_at`,
    payees: `SELECT fingerprint, id FROM ${t('payees')}
      WHERE scope_id = :scope AND kind = :kind AND fingerprint ${d.inList('fingerprints')}`,
    rememberPayee: `INSERT INTO ${t('payees')} (scope_id, kind, fingerprint, id, created_at)
      VALUES (:scope, :kind, :fingerprint, :id, ${now})
      ON CONFLICT (scope_id, kind, fingerprint) DO UPDATE SET id = excluded.id`,
    payeeHistory: `SELECT payee, history FROM ${t('payee_history')} WHERE scope_id = :scope AND payee ${d.inList('payees')}`,
    hasPayeeHistory: `SELECT 1 AS present FROM ${t('payee_history')} WHERE scope_id = :scope LIMIT 1`,
    replaceHistory: `UPDATE ${t('payee_history')} SET history = :history, updated_at = ${now}
      WHERE scope_id = :scope AND payee = :payee AND history = :was`,
    settledEvents: `SELECT * FROM ${t('events')} WHERE integrator_id = :integrator
      AND resource_id ${d.inList('transactions')}
      AND operation IN ('TRANSACTION_COMPLETED', 'TRANSACTION_FAILED') ORDER BY occurred_at`,
    recordApproval: addApproval(t('approvals')),
    approvals: `SELECT * FROM ${t('approvals')} WHERE digest = :digest OR sheet = :sheet
      ORDER BY recorded_at, statement_digest, fingerprint`,
    recordRunApproval: addRunApproval(t('run_approvals')),
    runApprovals: `SELECT * FROM ${t('run_approvals')} WHERE scope_id = :scope AND run_id ${d.inList('runs')}
      ORDER BY run_id, principal`,
    ...policyStatements(t),
    ...runStatements(d, t),
    ...payoutStatements(d, t),
    ...batchStatements(d, t),
    ...transferStatements(d, t),
  };
}

/** The columns that hold a run's lease, as the store times it. */
function leaseColumns(d: StatementDialect): string[] {
  return ['lease_expires_at', ...d.leaseClock.map(([column]) => column)];
}

/** A run's beginning, lease and end: the lease written and read as the store times it. */
function runStatements(d: StatementDialect, t: Tables) {
  const runs = t('runs');
  const { now } = d;
  const leaseRead = leaseColumns(d);
  const leaseSet = [['lease_expires_at', d.leaseEnd] as const, ...d.leaseClock];
  return {
    beginRun: `INSERT INTO ${runs} (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at,
        heartbeat_at, ${leaseSet.map(([column]) => column).join(', ')})
      VALUES (:id, :scope, :sheet, :digest, :host, :pid, :machine, :processStart, :startedAt,
        ${now}, ${leaseSet.map(([, value]) => value).join(', ')}) ON CONFLICT (id) DO NOTHING`,
    renewLease: `UPDATE ${runs} SET heartbeat_at = ${now}, ${leaseSet.map(([c, v]) => `${c} = ${v}`).join(', ')}
      WHERE id = :id AND finished_at IS NULL`,
    openLeases: `SELECT id, ${leaseRead.join(', ')}${d.storeNow} FROM ${runs}
      WHERE scope_id = :scope AND finished_at IS NULL`,
    finishRun: `UPDATE ${runs} SET finished_at = ${now}, rows = :rows, statuses = :statuses, exit_code = :exitCode
      WHERE id = :id`,
    recentRuns: `SELECT *${d.storeNow} FROM ${runs} WHERE scope_id = :scope ORDER BY started_at DESC LIMIT :limit`,
  };
}

/** Payouts read with their runs, claimed, and moved from state to state. */
function payoutStatements(d: StatementDialect, t: Tables) {
  const payouts = t('payouts');
  const { now } = d;
  /** A payout with its run's columns, prefixed `r_` (lease.ts judges its lease). */
  const withRun = `p.*, ${[...RUN_COLUMNS, ...d.leaseClock.map(([c]) => c)].map((c) => `r.${c} AS r_${c}`).join(', ')}${d.storeNow}
    FROM ${payouts} p LEFT JOIN ${t('runs')} r ON r.id = p.run_id`;
  const byIntegrator = `scope_id IN (SELECT id FROM ${t('scopes')} WHERE integrator_id = :integrator)`;
  return {
    recent: `SELECT ${withRun} WHERE p.scope_id = :scope ORDER BY p.updated_at DESC LIMIT :limit`,
    lookup: `SELECT ${withRun} WHERE p.scope_id = :scope AND p.reference ${d.inList('references')}`,
    fenceFacts: `SELECT p.run_id, p.state, ${['finished_at', ...leaseColumns(d)].map((c) => `r.${c}`).join(', ')}${d.storeNow}
      FROM ${payouts} p LEFT JOIN ${t('runs')} r ON r.id = :fenceRun WHERE p.scope_id = :scope AND p.reference = :reference`,
    payoutsIn: `SELECT ${withRun} WHERE p.scope_id = :scope AND p.state ${d.inList('states')} AND p.reference > :after
      AND (${d.time('since')} IS NULL OR COALESCE(p.paid_at, p.updated_at) >= ${d.time('since')})
      ORDER BY p.reference LIMIT :limit`,
    claim: `INSERT INTO ${payouts} (scope_id, ${CLAIM_ROW.join(', ')}, run_id, sheet, updated_at)
      SELECT :scope, c.*, :run, (SELECT sheet FROM ${t('runs')} WHERE id = :run), ${now} FROM ${d.rows('c', CLAIM_ROW)}
      WHERE true ON CONFLICT (scope_id, reference) DO UPDATE SET
        ${[...CLAIM_ROW.slice(1), 'run_id', 'sheet', 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')},
        error = NULL`,
    markUnknown: `UPDATE ${payouts} AS p SET state = 'unknown', error = u.why, updated_at = ${now}
      FROM ${d.rows('u', ['reference', 'why'])} WHERE p.scope_id = :scope AND p.reference = u.reference`,
    settle: `UPDATE ${payouts} SET state = :state, error = :error, updated_at = ${now}
      WHERE scope_id = :scope AND reference = :reference AND transaction_id = :transaction
        AND state ${d.inList('settleable')}`,
    settleByEvent: `UPDATE ${payouts} SET state = :state, error = :error, updated_at = ${now}
      WHERE transaction_id = :transaction AND state ${d.inList('settleable')} AND ${byIntegrator}`,
    byTransaction: `SELECT scope_id, reference FROM ${payouts} WHERE transaction_id = :transaction AND ${byIntegrator}`,
    resolveAbsent: `UPDATE ${payouts} SET state = 'refused', error = :reason, updated_at = ${now}
      WHERE scope_id = :scope AND reference = :reference AND state = 'unknown'`,
    abandonSend: `UPDATE ${payouts} SET state = 'unknown', error = :why, updated_at = ${now}
      WHERE scope_id = :scope AND reference = :reference AND state = 'sending' AND run_id = :run`,
    resolveFound: `UPDATE ${payouts} SET state = :state, transaction_id = :transaction, error = :error,
        paid_at = COALESCE(paid_at, ${d.time('sentAt')}, updated_at), updated_at = ${now}
      WHERE scope_id = :scope AND reference = :reference AND state = 'unknown'`,
    release: `DELETE FROM ${payouts} WHERE scope_id = :scope AND run_id = :run AND state = 'claimed'`,
  };
}

/** The batches of a scope that paid something, and a batch's payouts a page at a time. */
function batchStatements(d: StatementDialect, t: Tables) {
  const payouts = t('payouts');
  const runs = t('runs');
  const page = 'p.payee_key, p.payee_name, p.reference, p.amount, p.currency';
  const paid = "p.state IN ('submitted', 'completed') AND p.payee_key IS NOT NULL";
  return {
    paidBatches: `SELECT r.digest AS digest, max(r.started_at) AS at FROM ${runs} r WHERE r.scope_id = :scope
      AND EXISTS (SELECT 1 FROM ${payouts} p WHERE p.run_id = r.id AND ${paid})
      GROUP BY r.digest ORDER BY at DESC LIMIT :limit`,
    batchRun: `SELECT sheet, rows, started_at FROM ${runs} WHERE scope_id = :scope AND digest = :digest
      ORDER BY started_at DESC LIMIT 1`,
    batchRuns: `SELECT id FROM ${runs} WHERE scope_id = :scope AND digest = :digest ORDER BY id`,
    otherBatches: `SELECT 1 FROM ${runs} WHERE scope_id = :scope AND digest <> :digest LIMIT 1`,
    batchPayouts: `SELECT ${page} FROM ${payouts} p WHERE p.scope_id = :scope AND p.reference > :after
      AND p.run_id IN (SELECT id FROM ${runs} WHERE scope_id = :scope AND digest = :digest)
      AND ${paid} ORDER BY p.reference LIMIT :limit`,
    runPayouts: `SELECT ${page} FROM ${payouts} p
      WHERE p.run_id = :run${d.runPageScoped ? ' AND p.scope_id = :scope' : ''} AND p.reference > :after
      AND ${paid} ORDER BY p.reference LIMIT :limit`,
  };
}

/** Policies, their signatures and versions, and withdrawals of approvals: written once, never changed. */
function policyStatements(t: Tables) {
  const bySignedAt = 'ORDER BY recorded_at, statement_digest, fingerprint';
  return {
    recordWithdrawal: addWithdrawal(t('approval_withdrawals')),
    withdrawals: `SELECT * FROM ${t('approval_withdrawals')} WHERE digest = :digest OR sheet = :sheet ${bySignedAt}`,
    recordPolicyProposal: addPolicyProposal(t('policy_proposals')),
    policyProposal: `SELECT * FROM ${t('policy_proposals')}
      WHERE service = :service AND replaces = :replaces AND digest = :digest`,
    recordPolicySignature: addPolicySignature(t('policy_signatures')),
    policySignatures: `SELECT * FROM ${t('policy_signatures')}
      WHERE service = :service AND replaces = :replaces AND digest = :digest ${bySignedAt}`,
    enactPolicy: addPolicy(t('policies')),
    policyInForce: `SELECT * FROM ${t('policies')} WHERE service = :service ORDER BY version DESC LIMIT 1`,
    policyHistory: `SELECT * FROM ${t('policies')} WHERE service = :service ORDER BY version`,
  };
}

function addWithdrawal(table: string): string {
  return `INSERT INTO ${table} (statement_digest, fingerprint, approval_digest, origin, digest, sheet, statement,
      signature, recorded_at)
    VALUES (:statementDigest, :fingerprint, :approvalDigest, :origin, :digest, :sheet, :statement, :signature,
      :recordedAt) ON CONFLICT DO NOTHING`;
}

function addPolicyProposal(table: string): string {
  return `INSERT INTO ${table} (service, digest, replaces, policy, proposed_at)
    VALUES (:service, :digest, :replaces, :policy, :proposedAt) ON CONFLICT DO NOTHING`;
}

function addPolicySignature(table: string): string {
  return `INSERT INTO ${table} (statement_digest, fingerprint, service, digest, replaces, statement, signature,
      recorded_at)
    VALUES (:statementDigest, :fingerprint, :service, :digest, :replaces, :statement, :signature, :recordedAt)
    ON CONFLICT DO NOTHING`;
}

function addPolicy(table: string): string {
  return `INSERT INTO ${table} (service, version, digest, policy, signed_by, since)
    VALUES (:service, :version, :digest, :policy, :signedBy, :since) ON CONFLICT DO NOTHING`;
}

function addApproval(table: string): string {
  return `INSERT INTO ${table} (statement_digest, fingerprint, origin, digest, sheet, statement, signature,
      principals, recorded_at)
    VALUES (:statementDigest, :fingerprint, :origin, :digest, :sheet, :statement, :signature, :principals,
      :recordedAt) ON CONFLICT DO NOTHING`;
}

function addRunApproval(table: string): string {
  return `INSERT INTO ${table} (scope_id, run_id, principal, fingerprint, statement_digest, recorded_at)
    VALUES (:scope, :run, :principal, :fingerprint, :statementDigest, :recordedAt) ON CONFLICT DO NOTHING`;
}

/** Export and import (transfer.ts): every record read in a fixed order, and added unless held. */
function transferStatements(d: StatementDialect, t: Tables): TransferStatements {
  const history = t('payee_history');
  return {
    allApprovals: `SELECT * FROM ${t('approvals')} ORDER BY recorded_at, statement_digest, fingerprint`,
    allWithdrawals: `SELECT * FROM ${t('approval_withdrawals')} ORDER BY recorded_at, statement_digest, fingerprint`,
    allPolicyProposals: `SELECT * FROM ${t('policy_proposals')} ORDER BY service, replaces, proposed_at, digest`,
    allPolicySignatures: `SELECT * FROM ${t('policy_signatures')}
      ORDER BY service, replaces, recorded_at, statement_digest, fingerprint`,
    allPolicies: `SELECT * FROM ${t('policies')} ORDER BY service, version`,
    scopeRunApprovals: `SELECT * FROM ${t('run_approvals')} WHERE scope_id = :scope ORDER BY run_id, principal`,
    origins: `SELECT * FROM ${t('origins')} ORDER BY service, integrator_id`,
    scopes: `SELECT * FROM ${t('scopes')} ORDER BY id`,
    scopeRuns: `SELECT * FROM ${t('runs')} WHERE scope_id = :scope ORDER BY started_at`,
    scopePayouts: `SELECT ${PAYOUT_COLUMNS} FROM ${t('payouts')} WHERE scope_id = :scope AND reference > :after
      ORDER BY reference LIMIT :page`,
    scopePayees: `SELECT * FROM ${t('payees')} WHERE scope_id = :scope ORDER BY kind, fingerprint`,
    scopeHistories: `SELECT payee, history FROM ${history} WHERE scope_id = :scope ORDER BY payee`,
    events: `SELECT * FROM ${t('events')} ORDER BY occurred_at`,
    scopeId: `SELECT id FROM ${t('scopes')} WHERE service = :service AND integrator_id = :integrator`,
    add: {
      approval: addApproval(t('approvals')),
      withdrawal: addWithdrawal(t('approval_withdrawals')),
      policyProposal: addPolicyProposal(t('policy_proposals')),
      policySignature: addPolicySignature(t('policy_signatures')),
      policy: addPolicy(t('policies')),
      runApproval: addRunApproval(t('run_approvals')),
      event: `INSERT INTO ${t('events')} (integrator_id, resource_id, operation, success, message, occurred_at,
          received_at, payload)
        VALUES (:integrator, :resource, :operation, :success, :message, :occurredAt, :receivedAt, :payload)
        ON CONFLICT DO NOTHING`,
      origin: `INSERT INTO ${t('origins')} (service, integrator_id, same_as, declared_at)
        VALUES (:service, :integrator, :sameAs, :declaredAt) ON CONFLICT DO NOTHING`,
      scope: `INSERT INTO ${t('scopes')} (service, integrator_id, secret, login, created_at, last_used_at)
        VALUES (:service, :integrator, :secret, :login, :createdAt, :lastUsedAt) ON CONFLICT DO NOTHING`,
      run: `INSERT INTO ${t('runs')} (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at,
          heartbeat_at, lease_expires_at, finished_at, rows, statuses, exit_code)
        VALUES (:id, :scope, :sheet, :digest, :host, :pid, :machine, :processStart, :startedAt,
          :heartbeatAt, :leaseExpiresAt, :finishedAt, :rows, :statuses, :exitCode) ON CONFLICT DO NOTHING`,
      payout: `INSERT INTO ${t('payouts')} (scope_id, ${PAYOUT_COLUMNS})
        VALUES (:scope, ${PAYOUT_FIELDS.map(([column]) => `:${column}`).join(', ')}) ON CONFLICT DO NOTHING`,
      payee: `INSERT INTO ${t('payees')} (scope_id, kind, fingerprint, id, created_at)
        VALUES (:scope, :kind, :fingerprint, :id, :createdAt) ON CONFLICT DO NOTHING`,
      history:
        d.addHistory?.(history) ??
        `INSERT INTO ${history} (scope_id, payee, history, updated_at)
          VALUES (:scope, :payee, :history, COALESCE(${d.time('updatedAt')}, ${d.now})) ON CONFLICT DO NOTHING`,
    },
    held: {
      approval: `SELECT * FROM ${t('approvals')} WHERE statement_digest = :statementDigest AND fingerprint = :fingerprint`,
      withdrawal: `SELECT * FROM ${t('approval_withdrawals')}
        WHERE statement_digest = :statementDigest AND fingerprint = :fingerprint`,
      policyProposal: `SELECT * FROM ${t('policy_proposals')}
        WHERE service = :service AND replaces = :replaces AND digest = :digest`,
      policySignature: `SELECT * FROM ${t('policy_signatures')}
        WHERE statement_digest = :statementDigest AND fingerprint = :fingerprint`,
      policy: `SELECT * FROM ${t('policies')} WHERE service = :service AND version = :version`,
      runApproval: `SELECT * FROM ${t('run_approvals')} WHERE run_id = :run AND principal = :principal`,
      event: `SELECT * FROM ${t('events')}
        WHERE integrator_id = :integrator AND resource_id = :resource AND operation = :operation`,
      origin: `SELECT * FROM ${t('origins')} WHERE service = :service AND integrator_id = :integrator`,
      scope: `SELECT * FROM ${t('scopes')} WHERE service = :service AND integrator_id = :integrator`,
      run: `SELECT * FROM ${t('runs')} WHERE id = :id`,
      payout: `SELECT ${PAYOUT_COLUMNS} FROM ${t('payouts')} WHERE scope_id = :scope AND reference = :reference`,
      payee: `SELECT id FROM ${t('payees')} WHERE scope_id = :scope AND kind = :kind AND fingerprint = :fingerprint`,
      history: `SELECT history FROM ${history} WHERE scope_id = :scope AND payee = :payee`,
    },
  };
}
