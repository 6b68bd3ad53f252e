/**
 * The register (types.ts) written once above both stores: its operations read and write rows
 * through a store's statements and driver, and leave every decision to the pure rules (rules.ts:
 * what a claim writes, which writes are fenced and how; lease.ts: when a lease ran out; the
 * verdict of `run`'s judge). A store (sqlite.ts, postgres.ts) supplies a Dialect: its driver,
 * its statements, its clock, and the few operations its database does its own way.
 */

import { randomBytes } from 'node:crypto';
import { isoAt } from '../clock.js';
import { scrub } from '../redact.js';
import { Fingerprints } from './fingerprints.js';
import { GroupCommit } from './group-commit.js';
import { historyFromText, historyText } from './history-text.js';
import type { ScopeIdentity } from './identity.js';
import { holderAlive, leaseExpired, liveRunCount, newLease, type Self, type StoreTime } from './lease.js';
import { OUTAGE_DEFAULTS, OutageDriver } from './outage.js';
import {
  type PolicyProposalRow,
  type PolicySignatureRow,
  type PolicyVersionRow,
  policySignatureOf,
  policySignatureValues,
  policyVersionOf,
  policyVersionValues,
  proposalOf,
  proposalValues,
  type WithdrawalRow,
  withdrawalOf,
  withdrawalValues,
} from './policy-records.js';
import {
  cellsOf,
  type EventRow,
  eventOf,
  iso,
  joinedRunOf,
  leaseOf,
  payoutOf,
  type RunRow,
  runOf,
  runValues,
  type ScopeRow,
  scopeInfo,
} from './records.js';
import {
  abandonedSendReason,
  CHANGE_FIELDS,
  claimedState,
  claimLost,
  type Fence,
  type FenceFacts,
  fenceAdmits,
  fenceOf,
  SETTLEABLE,
  sentAt,
  withoutPayment,
  withPayment,
} from './rules.js';
import { type Driver, type Sql, transaction, type Values } from './sql.js';
import { CLAIM_ROW, type Statements } from './statements.js';
import {
  type ApprovalRow,
  approvalOf,
  approvalValues,
  exportEntries,
  importEntries,
  type RunApprovalRow,
  runApprovalOf,
} from './transfer.js';
import type {
  ApprovalRecord,
  BatchPayout,
  ClaimDecision,
  ClaimRequest,
  EventRecord,
  NewRun,
  OpenOptions,
  OriginDeclaration,
  PaidBatch,
  PayeeHistory,
  PayeePayment,
  PayoutChange,
  PayoutRecord,
  PayoutState,
  PolicyProposal,
  PolicySignature,
  PolicyVersion,
  Register,
  RegisterEntry,
  RunApproval,
  RunRecord,
  ScopeInfo,
  ScopeKey,
  ScopeStore,
  Settlement,
  UnknownResolved,
  WithdrawalRecord,
} from './types.js';

/** A claim's row: what `claimedState` decided for a reference this run is to send. */
export interface ClaimRow {
  reference: string;
  request: ClaimRequest;
  state: 'claimed' | 'sending';
  simulationId: string | null;
  transactionId: string | null;
}

/** What one claim writes: the references `runId` now holds, and the abandoned sends marked unknown. */
export interface ClaimWrite {
  scope: number;
  runId: string;
  now: string;
  claims: ClaimRow[];
  unknowns: [reference: string, why: string][];
}

/** What a store is to the register written above it. */
export interface Dialect {
  readonly location: string;
  readonly readonly: boolean;
  readonly driver: Driver;
  readonly sql: Statements;
  /**
   * Whether a write atomic on its own goes out alone (PostgreSQL, where each round trip is what
   * a write costs) rather than in the group commit (a file, where each transaction costs a sync).
   */
  readonly writesAlone: boolean;
  /** Values (references, fingerprints, ids) per statement. */
  readonly chunk: number;
  readonly leaseMs: number;
  /** The store's time: as of the statement that read `row` (its `store_now`), or now. */
  time(row?: Record<string, unknown>): StoreTime;
  /** The records of these references, where the store reads them faster than `lookup` does. */
  lookup?(sql: Sql, scope: number, references: readonly string[]): Promise<Map<string, PayoutRecord>>;
  /** Runs a claim where no other claim of the scope comes between its read and its writes. */
  claiming<T>(writes: GroupCommit, scope: number, work: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * Runs the update `set` (its `WHERE` open for more) where `fence` admits it, judged by the
   * database in the write itself; rows changed. Without it, the register judges (fencedWrite).
   */
  fenced?(sql: Sql, set: string, values: Values, fence: Fence): Promise<number>;
  /**
   * A page of a paid batch's payouts (`statement` with its values), where the store reads them
   * faster than as rows; by default, the statement's rows.
   */
  batchPage?(sql: Sql, statement: BatchStatement, values: Values): Promise<BatchPayout[]>;
  /** Payouts per page of a paid batch, where another size than BATCH_PAGE reads faster. */
  readonly batchPageRows?: number;
  /** The histories of these payees, where the store finds them faster than `payeeHistory` does. */
  payeeHistories?(
    sql: Sql,
    scope: number,
    payees: readonly string[],
  ): Promise<{ payee: string; history: string }[]>;
}

/**
 * A paid batch's payouts read per statement: a page of a few hundred kilobytes, where a batch
 * can pay a million payees.
 */
const BATCH_PAGE = 4000;

/**
 * Pages of several runs' payouts, each run in reference order, as one batch in reference order
 * and in pages of `page`. A reference belongs to one run at most, so nothing is read twice.
 */
async function* mergedByReference(
  runs: readonly AsyncIterable<BatchPayout[]>[],
  page: number,
): AsyncIterable<BatchPayout[]> {
  const heads = runs.map((run) => ({ pages: run[Symbol.asyncIterator](), page: [] as BatchPayout[], at: 0 }));
  /** The head's next payout, reading its next page when the last is used up; undefined when it is done. */
  const next = async (head: (typeof heads)[number]): Promise<BatchPayout | undefined> => {
    if (head.at === head.page.length) {
      const read = await head.pages.next();
      head.page = read.done ? [] : read.value;
      head.at = 0;
    }
    return head.page[head.at];
  };
  let out: BatchPayout[] = [];
  for (;;) {
    let first: (typeof heads)[number] | undefined;
    let firstPayout: BatchPayout | undefined;
    for (const head of heads) {
      const payout = await next(head);
      if (payout !== undefined && (firstPayout === undefined || payout.reference < firstPayout.reference)) {
        first = head;
        firstPayout = payout;
      }
    }
    if (first === undefined || firstPayout === undefined) break;
    first.at += 1;
    out.push(firstPayout);
    if (out.length === page) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

/** The statements that read a paid batch's payouts a page at a time. */
export type BatchStatement = 'batchPayouts' | 'runPayouts';

/**
 * A paid batch's payout as a page holds it, made by a constructor rather than as an object
 * literal. V8 watches where literals are made: when a collection of the young generation finds
 * every object of one such place alive, as it does with a page of a thousand payouts in use, it
 * makes all later ones in the old generation (pretenuring), which then fills with pages read and
 * done with: a million payouts read that way cost a full collection every 0.1 s and 15 MB more
 * at the peak. Objects made by `new` are never moved that way.
 */
export class PagePayout implements BatchPayout {
  constructor(
    readonly payee: string,
    readonly name: string,
    readonly reference: string,
    readonly amount: string,
    readonly currency: string,
  ) {}
}

/** A page of a paid batch's payouts as `statement` gives them, by reference. */
export async function batchPayoutRows(sql: Sql, statement: string, values: Values): Promise<BatchPayout[]> {
  type Row = {
    payee_key: string;
    payee_name: string | null;
    reference: string;
    amount: string;
    currency: string;
  };
  const rows = await sql.rows<Row>(statement, values);
  return rows.map((p) => new PagePayout(p.payee_key, p.payee_name ?? '', p.reference, p.amount, p.currency));
}

/**
 * The records of these references: the store's own look-up, else the `lookup` statement a chunk
 * at a time, each payout with its run, whose lease is judged in the statement's time.
 */
async function lookup(
  dialect: Dialect,
  sql: Sql,
  scope: number,
  references: readonly string[],
): Promise<Map<string, PayoutRecord>> {
  if (dialect.lookup) return dialect.lookup(sql, scope, references);
  const found = new Map<string, PayoutRecord>();
  for (let i = 0; i < references.length; i += dialect.chunk) {
    const values = { scope, references: references.slice(i, i + dialect.chunk) };
    for (const row of await sql.rows<Record<string, unknown>>(dialect.sql.lookup, values))
      found.set(row['reference'] as string, payoutOf(cellsOf(row), joinedRunOf(row, dialect.time(row))));
  }
  return found;
}

/**
 * The update `set` where `fence` admits it: judged by the database where it can (Dialect.fenced),
 * else read, judged by the rules (rules.ts fenceAdmits) and written in the write's transaction.
 */
async function fencedWrite(dialect: Dialect, sql: Sql, set: string, values: Values, fence: Fence) {
  if (dialect.fenced) return dialect.fenced(sql, set, values, fence);
  type Facts = RunRow & Record<string, unknown> & { run_id: string; state: FenceFacts['state'] };
  const [row] = await sql.rows<Facts>(dialect.sql.fenceFacts, values);
  const facts = row && {
    holder: row.run_id,
    state: row.state,
    leaseHeld:
      row.lease_expires_at !== null &&
      row.finished_at === null &&
      !leaseExpired(leaseOf(row), dialect.time(row)),
  };
  return fenceAdmits(fence, facts) ? sql.changed(set, values) : 0;
}

/** Writes a claim: the references it holds, and the abandoned sends it marks unknown. */
async function writeClaims(sql: Sql, s: Statements, claim: ClaimWrite): Promise<void> {
  const { scope, runId: run, now } = claim;
  // Each row one object holding the claim's values too: a store that writes a row at a time
  // binds it as it is (a merged copy per row was a tenth of a run's allocations).
  const claims = claim.claims.map((c) => {
    const d = c.request.details;
    return {
      scope,
      run,
      now,
      reference: c.reference,
      amount: d.amount,
      currency: d.currency,
      rail: d.rail,
      payee: d.payee,
      payee_hint: d.payeeHint,
      state: c.state,
      idempotency_key: c.request.idempotencyKey,
      simulation_id: c.simulationId,
      transaction_id: c.transactionId,
    } satisfies Record<(typeof CLAIM_ROW)[number] | 'scope' | 'run' | 'now', unknown>;
  });
  await writeRows(sql, s, s.claim, CLAIM_ROW, claims);
  const unknowns = claim.unknowns.map(([reference, why]) => ({ scope, run, now, reference, why }));
  await writeRows(sql, s, s.markUnknown, ['reference', 'why'], unknowns);
}

/**
 * Runs `text` over `rows`, each holding every value the statement names: once per row, or, where
 * the store takes lists, once with a list per column of `columns` (the other values as the first
 * row has them, the same in every row).
 */
async function writeRows(
  sql: Sql,
  s: Statements,
  text: string,
  columns: readonly string[],
  rows: readonly Values[],
): Promise<void> {
  if (rows.length === 0) return;
  if (!s.rowsAsLists) {
    for (const row of rows) await sql.changed(text, row);
    return;
  }
  const lists: Record<string, unknown> = { ...rows[0] };
  for (const column of columns) lists[column] = rows.map((row) => row[column]);
  await sql.changed(text, lists);
}

/** Reads and replaces of one payee's history before giving up (other runs keep changing it). */
const HISTORY_ATTEMPTS = 100;

/** The register of one store. */
export class SqlRegister implements Register {
  readonly writes: GroupCommit;
  /** The store's driver, waiting through outages (outage.ts) once the register is open. */
  readonly driver: Driver;
  private closed = false;
  private readonly scopeStores = new Map<number, SqlScope>();

  constructor(
    readonly dialect: Dialect,
    options: Pick<OpenOptions, 'maxOutageMs' | 'abandon' | 'onOutage' | 'keepTrying' | 'outageClock'> = {},
  ) {
    this.driver = new OutageDriver(dialect.driver, dialect.location, {
      maxOutageMs: options.maxOutageMs ?? OUTAGE_DEFAULTS.maxOutageMs,
      abandon: options.abandon,
      onOutage: options.onOutage,
      keepTrying: options.keepTrying,
      clock: options.outageClock,
    });
    this.writes = new GroupCommit(this.driver, dialect.location, dialect.readonly);
  }

  get location(): string {
    return this.dialect.location;
  }

  get readonly(): boolean {
    return this.dialect.readonly;
  }

  /** The store's time now, as text (for a store that keeps times it gives). */
  now(): string {
    return isoAt(this.dialect.time().now);
  }

  /** Runs a read, the driver's errors said in words. */
  ready(): Promise<void> {
    // The store's own driver, not the one that waits through outages: a probe answers now.
    return transaction(this.dialect.driver, async () => {});
  }

  async read<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    try {
      return await this.driver.connection(work);
    } catch (error) {
      throw this.driver.failure('cannot be read', error);
    }
  }

  /** A write atomic on its own: alone where the store writes so, else in the group commit. */
  write<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.writes.write(work, { alone: this.dialect.writesAlone });
  }

  /** A write whose statements land together or not at all: in the group commit's transaction. */
  together<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.writes.write(work);
  }

  async openScope(identity: ScopeIdentity, login?: string): Promise<ScopeStore> {
    const values = {
      service: identity.service,
      integrator: identity.integratorId,
      secret: randomBytes(32),
      login: login ?? null,
      now: this.now(),
    };
    const [row] = await this.together((sql) => sql.rows<ScopeRow>(this.dialect.sql.openScope, values));
    return this.storeFor(row!);
  }

  async scopes(): Promise<ScopeInfo[]> {
    return (await this.read((sql) => sql.rows<ScopeRow>(this.dialect.sql.scopesByUse))).map(scopeInfo);
  }

  async scopeStore(scope: ScopeInfo): Promise<ScopeStore> {
    const [row] = await this.read((sql) => sql.rows<ScopeRow>(this.dialect.sql.scope, { id: scope.id }));
    return this.storeFor(row!);
  }

  private storeFor(row: ScopeRow): SqlScope {
    const id = Number(row.id);
    let store = this.scopeStores.get(id);
    if (!store) {
      store = new SqlScope(this, scopeInfo(row), Buffer.from(row.secret));
      this.scopeStores.set(id, store);
    }
    return store;
  }

  recordEvent(event: EventRecord, settles?: Settlement): Promise<boolean> {
    const now = this.now();
    return this.together(async (sql) => {
      if (settles) {
        // Whichever scope of this integrator paid it; only a transaction that exists settles.
        const settled = await sql.changed(this.dialect.sql.settleByEvent, {
          state: settles.state,
          error: settles.error === null ? null : scrub(settles.error),
          transaction: settles.transactionId,
          integrator: event.integratorId,
          settleable: SETTLEABLE,
          now,
        });
        if (settled > 0) {
          const paid = await sql.rows<{ scope_id: number | string; reference: string }>(
            this.dialect.sql.byTransaction,
            { transaction: settles.transactionId, integrator: event.integratorId },
          );
          for (const { scope_id, reference } of paid)
            await learnOutcome(sql, this.dialect, Number(scope_id), reference, now);
        }
      }
      const added = await sql.changed(this.dialect.sql.add.event, {
        integrator: event.integratorId,
        resource: event.resourceId,
        operation: event.operation,
        success: event.success,
        message: event.message === null ? null : scrub(event.message),
        occurredAt: event.occurredAt,
        receivedAt: event.receivedAt,
        payload: scrub(event.payload),
      });
      return added > 0;
    });
  }

  async origin(key: ScopeKey): Promise<OriginDeclaration | undefined> {
    const [row] = await this.read((sql) =>
      sql.rows<{ same_as: string | null }>(this.dialect.sql.origin, {
        service: key.service,
        integrator: key.integratorId,
      }),
    );
    if (row === undefined) return undefined;
    return row.same_as === null ? { separate: true } : { sameAs: row.same_as };
  }

  declareOrigin(key: ScopeKey, declaration: OriginDeclaration): Promise<void> {
    const values = {
      service: key.service,
      integrator: key.integratorId,
      sameAs: 'sameAs' in declaration ? declaration.sameAs : null,
      now: this.now(),
    };
    return this.write(async (sql) => {
      await sql.changed(this.dialect.sql.declareOrigin, values);
    });
  }

  recordApproval(approval: ApprovalRecord): Promise<boolean> {
    const values = approvalValues(approval);
    return this.write(async (sql) => (await sql.changed(this.dialect.sql.recordApproval, values)) > 0);
  }

  async approvals(query: { digest: string; sheet?: string }): Promise<ApprovalRecord[]> {
    const rows = await this.read((sql) =>
      sql.rows<ApprovalRow>(this.dialect.sql.approvals, {
        digest: query.digest,
        sheet: query.sheet ?? null,
      }),
    );
    return rows.map(approvalOf);
  }

  recordWithdrawal(withdrawal: WithdrawalRecord): Promise<boolean> {
    const values = withdrawalValues(withdrawal);
    return this.write(async (sql) => (await sql.changed(this.dialect.sql.recordWithdrawal, values)) > 0);
  }

  async withdrawals(query: { digest: string; sheet?: string }): Promise<WithdrawalRecord[]> {
    const values = { digest: query.digest, sheet: query.sheet ?? null };
    const rows = await this.read((sql) => sql.rows<WithdrawalRow>(this.dialect.sql.withdrawals, values));
    return rows.map(withdrawalOf);
  }

  recordPolicyProposal(proposal: PolicyProposal): Promise<boolean> {
    const values = proposalValues(proposal);
    return this.write(async (sql) => (await sql.changed(this.dialect.sql.recordPolicyProposal, values)) > 0);
  }

  async policyProposal(query: {
    service: string;
    digest: string;
    replaces: number;
  }): Promise<PolicyProposal | undefined> {
    const [row] = await this.read((sql) =>
      sql.rows<PolicyProposalRow>(this.dialect.sql.policyProposal, query),
    );
    return row === undefined ? undefined : proposalOf(row);
  }

  recordPolicySignature(signature: PolicySignature): Promise<boolean> {
    const values = policySignatureValues(signature);
    return this.write(async (sql) => (await sql.changed(this.dialect.sql.recordPolicySignature, values)) > 0);
  }

  async policySignatures(query: {
    service: string;
    digest: string;
    replaces: number;
  }): Promise<PolicySignature[]> {
    const rows = await this.read((sql) =>
      sql.rows<PolicySignatureRow>(this.dialect.sql.policySignatures, query),
    );
    return rows.map(policySignatureOf);
  }

  enactPolicy(version: PolicyVersion): Promise<boolean> {
    const values = policyVersionValues(version);
    return this.write(async (sql) => (await sql.changed(this.dialect.sql.enactPolicy, values)) > 0);
  }

  async policy(service: string): Promise<PolicyVersion | undefined> {
    const [row] = await this.read((sql) =>
      sql.rows<PolicyVersionRow>(this.dialect.sql.policyInForce, { service }),
    );
    return row === undefined ? undefined : policyVersionOf(row);
  }

  async policyHistory(service: string): Promise<PolicyVersion[]> {
    const rows = await this.read((sql) =>
      sql.rows<PolicyVersionRow>(this.dialect.sql.policyHistory, { service }),
    );
    return rows.map(policyVersionOf);
  }

  entries(): AsyncIterable<RegisterEntry> {
    return exportEntries((work) => this.read(work), this.dialect.sql);
  }

  putAll(entries: readonly RegisterEntry[]): Promise<(RegisterEntry | undefined)[]> {
    return this.together((sql) => importEntries(sql, this.dialect.sql, entries, this.now()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes queued for this tick still commit.
    await this.writes.close();
    await this.driver.close();
  }
}

/** The register of one scope. */
class SqlScope implements ScopeStore {
  private readonly fingerprints: Fingerprints;
  private readonly dialect: Dialect;

  constructor(
    private readonly register: SqlRegister,
    readonly scope: ScopeInfo,
    secret: Buffer,
  ) {
    this.fingerprints = new Fingerprints(secret);
    this.dialect = register.dialect;
  }

  fingerprint(canonical: string): string {
    return this.fingerprints.of(canonical);
  }

  async lookup(references: readonly string[]): Promise<Map<string, PayoutRecord>> {
    if (references.length === 0) return new Map();
    return this.register.read((sql) => lookup(this.dialect, sql, this.scope.id, references));
  }

  /** Payouts read with their runs (`r_` columns), whose leases are judged in the statement's time. */
  private async payoutsWithRuns(text: string, values: Values): Promise<PayoutRecord[]> {
    const rows = await this.register.read((sql) => sql.rows<Record<string, unknown>>(text, values));
    return rows.map((row) => payoutOf(cellsOf(row), joinedRunOf(row, this.dialect.time(row))));
  }

  recentPayouts(limit: number): Promise<PayoutRecord[]> {
    return this.payoutsWithRuns(this.dialect.sql.recent, { scope: this.scope.id, limit });
  }

  payoutsIn(query: {
    states: readonly PayoutState[];
    since?: string;
    after?: string;
    limit: number;
  }): Promise<PayoutRecord[]> {
    return this.payoutsWithRuns(this.dialect.sql.payoutsIn, {
      scope: this.scope.id,
      states: query.states,
      after: query.after ?? '',
      since: query.since ?? null,
      limit: query.limit,
    });
  }

  /** The rows `text` gives for each chunk of `list` (as `:name`). */
  private chunked<R>(text: string, name: string, list: readonly string[], values: Values): Promise<R[]> {
    return this.inChunks(list, (sql, chunk) => sql.rows<R>(text, { ...values, [name]: chunk }));
  }

  /** The rows `read` gives for each chunk of `list`, in one read. */
  private async inChunks<R>(
    list: readonly string[],
    read: (sql: Sql, chunk: readonly string[]) => Promise<R[]>,
  ): Promise<R[]> {
    const rows: R[] = [];
    if (list.length === 0) return rows;
    await this.register.read(async (sql) => {
      for (let i = 0; i < list.length; i += this.dialect.chunk)
        rows.push(...(await read(sql, list.slice(i, i + this.dialect.chunk))));
    });
    return rows;
  }

  async payees(
    kind: 'beneficiary' | 'recipient',
    fingerprints: readonly string[],
  ): Promise<Map<string, string>> {
    const rows = await this.chunked<{ fingerprint: string; id: string }>(
      this.dialect.sql.payees,
      'fingerprints',
      fingerprints,
      { scope: this.scope.id, kind },
    );
    return new Map(rows.map((row) => [row.fingerprint, row.id]));
  }

  rememberPayee(kind: 'beneficiary' | 'recipient', fingerprint: string, id: string): Promise<void> {
    const values = { scope: this.scope.id, kind, fingerprint, id, now: this.register.now() };
    return this.register.write(async (sql) => {
      await sql.changed(this.dialect.sql.rememberPayee, values);
    });
  }

  async payeeHistory(payees: readonly string[]): Promise<Map<string, PayeeHistory>> {
    const { dialect } = this;
    const scope = this.scope.id;
    const rows =
      dialect.payeeHistories === undefined
        ? await this.chunked<{ payee: string; history: string }>(dialect.sql.payeeHistory, 'payees', payees, {
            scope,
          })
        : await this.inChunks(payees, (sql, chunk) => dialect.payeeHistories!(sql, scope, chunk));
    return new Map(rows.map((row) => [row.payee, historyFromText(row.history)]));
  }

  async hasPayeeHistory(): Promise<boolean> {
    const rows = await this.register.read((sql) =>
      sql.rows(this.dialect.sql.hasPayeeHistory, { scope: this.scope.id }),
    );
    return rows.length > 0;
  }

  paidBatches(limit: number): Promise<PaidBatch[]> {
    const s = this.dialect.sql;
    const scope = this.scope.id;
    return this.register.read(async (sql) => {
      const batches: PaidBatch[] = [];
      for (const { digest } of await sql.rows<{ digest: string }>(s.paidBatches, { scope, limit })) {
        const [run] = await sql.rows<{ sheet: string; rows: number | null; started_at: string }>(s.batchRun, {
          scope,
          digest,
        });
        batches.push({
          digest,
          sheet: run?.sheet ?? '',
          at: run === undefined ? '' : iso(run.started_at),
          rows: run?.rows == null ? null : Number(run.rows),
        });
      }
      return batches;
    });
  }

  /**
   * A paid batch's payouts, by reference. Where the scope holds no other batch (a first month,
   * or a register of one batch), its payouts are walked in the primary key's order, which reads
   * each page's rows together. Where it holds others, each run of the batch is read through the
   * index by run, so that a register of twelve monthly batches is not walked whole for one: each
   * row is then a seek of its own, which costs a register of one batch half as much again.
   */
  async *batchPayouts(
    digest: string,
    page = this.dialect.batchPageRows ?? BATCH_PAGE,
  ): AsyncIterable<BatchPayout[]> {
    const s = this.dialect.sql;
    const scope = this.scope.id;
    const [runs, others] = await this.register.read(async (sql) => [
      await sql.rows<{ id: string }>(s.batchRuns, { scope, digest }),
      await sql.rows(s.otherBatches, { scope, digest }),
    ]);
    if (runs.length === 0) return;
    if (others.length === 0) {
      yield* this.pagesOf('batchPayouts', { scope, digest, limit: page }, page);
      return;
    }
    const pages = runs.map((run) => this.pagesOf('runPayouts', { scope, run: run.id, limit: page }, page));
    // A batch is one run as a rule; a resumed or shared one has several, each payout in one.
    yield* pages.length === 1 ? pages[0]! : mergedByReference(pages, page);
  }

  /** The pages `statement` reads, by reference after the last one read (keyset). */
  private async *pagesOf(
    statement: BatchStatement,
    values: Values,
    page: number,
  ): AsyncIterable<BatchPayout[]> {
    const read = (sql: Sql, after: string) =>
      this.dialect.batchPage?.(sql, statement, { ...values, after }) ??
      batchPayoutRows(sql, this.dialect.sql[statement], { ...values, after });
    // Each statement reads its page alone, where an offset would read every earlier page again.
    for (let after = ''; ; ) {
      const payouts = await this.register.read((sql) => read(sql, after));
      if (payouts.length === 0) return;
      after = payouts.at(-1)!.reference;
      yield payouts;
      if (payouts.length < page) return;
    }
  }

  recordPayment(payee: string, payment: PayeePayment, batch: string, name?: string): Promise<void> {
    // Two runs paying one payee must both count, with or without a transaction around it (on
    // PostgreSQL a round trip is what a write costs): insert the first payment, or replace the
    // history only if it is still the one read (compare and set), reading again when another
    // run got there first. Each retry means another run's write landed: the runs progress.
    const key = { scope: this.scope.id, payee, now: this.register.now() };
    const s = this.dialect.sql;
    return this.register.write(async (sql) => {
      const first = historyText(withPayment(undefined, payment, batch, name));
      if ((await sql.changed(s.add.history, { ...key, history: first, updatedAt: null })) > 0) return;
      await changeHistory(sql, s, key, (held) => withPayment(held, payment, batch, name));
    });
  }

  /** A lease from now, for a statement: its end, or its length for a store that sets it by its own clock. */
  private lease(): Values {
    const lease = newLease(this.dialect.time(), this.dialect.leaseMs);
    return {
      leaseEnd: lease.expiresAt,
      leaseBoot: lease.boot,
      leaseUptime: lease.uptimeMs,
      leaseSeconds: this.dialect.leaseMs / 1000,
      now: this.register.now(),
    };
  }

  beginRun(run: NewRun): Promise<void> {
    const values = { ...runValues(run), scope: this.scope.id, ...this.lease() };
    return this.register.write(async (sql) => {
      await sql.changed(this.dialect.sql.beginRun, values);
    });
  }

  heartbeat(runId: string): Promise<{ liveRuns: number }> {
    return this.register.write(async (sql) => {
      await sql.changed(this.dialect.sql.renewLease, { id: runId, ...this.lease() });
      const open = await sql.rows<RunRow & Record<string, unknown>>(this.dialect.sql.openLeases, {
        scope: this.scope.id,
      });
      return {
        liveRuns:
          open.length === 0
            ? 1
            : liveRunCount(
                open.map((row) => ({ ...leaseOf(row), id: String(row['id']) })),
                this.dialect.time(open[0]),
              ),
      };
    });
  }

  finishRun(runId: string, outcome: Pick<RunRecord, 'rows' | 'statuses' | 'exitCode'>): Promise<void> {
    const values = {
      id: runId,
      rows: outcome.rows ?? null,
      statuses: outcome.statuses ? JSON.stringify(outcome.statuses) : null,
      exitCode: outcome.exitCode ?? null,
      now: this.register.now(),
    };
    return this.register.write(async (sql) => {
      await sql.changed(this.dialect.sql.finishRun, values);
    });
  }

  async runs(limit: number): Promise<RunRecord[]> {
    const rows = await this.register.read((sql) =>
      sql.rows<RunRow & Record<string, unknown>>(this.dialect.sql.recentRuns, {
        scope: this.scope.id,
        limit,
      }),
    );
    return rows.map((row) => runOf(row, this.dialect.time(row)));
  }

  claim(
    runId: string,
    requests: readonly ClaimRequest[],
    decide: (request: ClaimRequest, record: PayoutRecord | undefined) => ClaimDecision,
  ): Promise<Map<string, PayoutRecord | undefined>> {
    // Sorted: two claims over the same references meet them in the same order (no deadlock).
    const sorted = [...requests].sort((a, b) =>
      a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0,
    );
    const scope = this.scope.id;
    return this.dialect.claiming(this.register.writes, scope, async (sql) => {
      const records = await lookup(
        this.dialect,
        sql,
        scope,
        sorted.map((r) => r.reference),
      );
      const outcome = new Map<string, PayoutRecord | undefined>();
      const claims: ClaimRow[] = [];
      const unknowns: [string, string][] = [];
      for (const request of sorted) {
        const record = records.get(request.reference);
        const decision = decide(request, record);
        if (decision === 'claim') {
          const claimed = claimedState(record);
          claims.push({
            reference: request.reference,
            request,
            state: claimed.state,
            simulationId: claimed.simulationId ?? null,
            transactionId: claimed.transactionId ?? null,
          });
        } else if (decision === 'mark-unknown' && record) {
          const why = abandonedSendReason(record.sheet);
          unknowns.push([request.reference, why]);
          record.state = 'unknown';
          record.error = why;
        }
        outcome.set(request.reference, record);
      }
      if (claims.length > 0 || unknowns.length > 0)
        await writeClaims(sql, this.dialect.sql, {
          scope,
          runId,
          now: this.register.now(),
          claims,
          unknowns,
        });
      return outcome;
    });
  }

  update(runId: string, reference: string, change: PayoutChange): Promise<void> {
    const s = this.dialect.sql;
    const fence = fenceOf(runId, change);
    const values: Record<string, unknown> = {
      scope: this.scope.id,
      reference,
      now: this.register.now(),
      fenceRun: runId,
      fenceStates: fence.orIn,
    };
    const sets = [`updated_at = ${s.now}`];
    for (const [key, column] of Object.entries(CHANGE_FIELDS) as [keyof PayoutChange, string][]) {
      const value = change[key];
      if (value === undefined) continue;
      values[key] = key === 'error' && typeof value === 'string' ? scrub(value) : value;
      sets.push(`${column} = :${key}`);
    }
    if (change.transactionId !== undefined) sets.push(`paid_at = coalesce(paid_at, ${s.now})`);
    const where = 'WHERE scope_id = :scope AND reference = :reference';
    const set = `UPDATE ${s.payoutsTable} SET ${sets.join(', ')} ${where}`;
    return this.register.write(async (sql) => {
      if ((await fencedWrite(this.dialect, sql, set, values, fence)) > 0) return;
      throw claimLost(
        reference,
        runId,
        (await lookup(this.dialect, sql, this.scope.id, [reference])).get(reference),
      );
    });
  }

  settle(
    reference: string,
    transactionId: string,
    state: 'completed' | 'failed',
    error?: string,
  ): Promise<void> {
    const values = {
      state,
      error: error === undefined ? null : scrub(error),
      scope: this.scope.id,
      reference,
      transaction: transactionId,
      settleable: SETTLEABLE,
      now: this.register.now(),
    };
    return this.register.write(async (sql) => {
      if ((await sql.changed(this.dialect.sql.settle, values)) > 0)
        await learnOutcome(sql, this.dialect, this.scope.id, reference, this.register.now());
    });
  }

  abandonSend(reference: string, self: Self): Promise<boolean> {
    const scope = this.scope.id;
    return this.register.write(async (sql) => {
      const record = (await lookup(this.dialect, sql, scope, [reference])).get(reference);
      if (record?.state !== 'sending' || holderAlive(record.run, self)) return false;
      const why = abandonedSendReason(record.sheet);
      const values = { scope, reference, run: record.runId, why, now: this.register.now() };
      return (await sql.changed(this.dialect.sql.abandonSend, values)) > 0;
    });
  }

  resolveUnknown(reference: string, found: UnknownResolved): Promise<boolean> {
    const key = { scope: this.scope.id, reference, now: this.register.now() };
    return this.register.write(async (sql) => {
      const changed =
        'absent' in found
          ? await sql.changed(this.dialect.sql.resolveAbsent, { ...key, reason: scrub(found.reason) })
          : await sql.changed(this.dialect.sql.resolveFound, {
              ...key,
              state: found.state,
              transaction: found.transactionId,
              error: found.error === undefined ? null : scrub(found.error),
              sentAt: sentAt(found.createdAt, key.now) ?? null,
            });
      if (changed > 0) await learnOutcome(sql, this.dialect, this.scope.id, reference, key.now);
      return changed > 0;
    });
  }

  release(runId: string): Promise<void> {
    return this.register.write(async (sql) => {
      // A claim that sent nothing is simply forgotten; one that reached a refusal keeps it.
      await sql.changed(this.dialect.sql.release, { scope: this.scope.id, run: runId });
    });
  }

  async settledEvents(transactionIds: readonly string[]): Promise<Map<string, EventRecord>> {
    const rows = await this.chunked<EventRow>(
      this.dialect.sql.settledEvents,
      'transactions',
      transactionIds,
      {
        integrator: this.scope.integratorId,
      },
    );
    // Ordered by occurrence: the last settling event wins (reconcile.ts).
    return new Map(rows.map((row) => [row.resource_id, eventOf(row)]));
  }

  recordRunApprovals(runId: string, approvals: readonly RunApproval[]): Promise<void> {
    if (approvals.length === 0) return Promise.resolve();
    return this.register.together(async (sql) => {
      for (const approval of approvals) {
        await sql.changed(this.dialect.sql.recordRunApproval, {
          scope: this.scope.id,
          run: runId,
          principal: approval.principal,
          fingerprint: approval.fingerprint,
          statementDigest: approval.statementDigest,
          recordedAt: approval.recordedAt,
        });
      }
    });
  }

  async runApprovals(runIds: readonly string[]): Promise<Map<string, RunApproval[]>> {
    const rows = await this.chunked<RunApprovalRow>(this.dialect.sql.runApprovals, 'runs', runIds, {
      scope: this.scope.id,
    });
    const byRun = new Map<string, RunApproval[]>();
    for (const row of rows) {
      const list = byRun.get(row.run_id) ?? [];
      list.push(runApprovalOf(row));
      byRun.set(row.run_id, list);
    }
    return byRun;
  }
}

/** A payout as its payee's history keeps it. */
function paymentOf(record: PayoutRecord): PayeePayment {
  return {
    account: record.details.payee,
    accountHint: record.details.payeeHint,
    reference: record.reference,
    rail: record.details.rail,
    paidAt: record.paidAt ?? record.updatedAt,
    amount: record.details.amount,
    currency: record.details.currency,
  };
}

/**
 * A payout's outcome, learnt after it was sent (reconcile, --wait, a webhook), in its payee's
 * history, in the same transaction as the outcome itself: submitted or completed joins the
 * history (once: a payout already there stays once), failed leaves it, so a failed account
 * never counts as a known one. A payout from before payees were recorded with it is left alone.
 */
async function learnOutcome(sql: Sql, dialect: Dialect, scope: number, reference: string, now: string) {
  const record = (await lookup(dialect, sql, scope, [reference])).get(reference);
  if (record?.payeeKey === undefined) return;
  const key = { scope, payee: record.payeeKey, now };
  if (record.state === 'completed' || record.state === 'submitted') {
    const payment = paymentOf(record);
    await changeHistory(sql, dialect.sql, key, (held) =>
      withPayment(held, payment, held?.batch ?? LEARNT_BATCH, record.payeeName),
    );
  } else if (record.state === 'failed') {
    await changeHistory(sql, dialect.sql, key, (held) =>
      held === undefined ? undefined : withoutPayment(held, reference),
    );
  }
}

/** The batch a history is filed under when its first payout was learnt after its run. */
const LEARNT_BATCH = 'learnt';

/**
 * Changes a payee's history by `change` (undefined: leave it), compare and set: written only if
 * it is still the one read, read again when another run changed it first.
 */
async function changeHistory(
  sql: Sql,
  s: Statements,
  key: { scope: number; payee: string; now: string },
  change: (held: PayeeHistory | undefined) => PayeeHistory | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < HISTORY_ATTEMPTS; attempt += 1) {
    const [held] = await sql.rows<{ history: string }>(s.held.history, key);
    const next = change(held === undefined ? undefined : historyFromText(held.history));
    if (next === undefined) return;
    const history = historyText(next);
    const written =
      held === undefined
        ? await sql.changed(s.add.history, { ...key, history, updatedAt: null })
        : await sql.changed(s.replaceHistory, { ...key, history, was: held.history });
    if (written > 0) return;
  }
  throw new Error(
    `the payee history changed under ${HISTORY_ATTEMPTS} attempts in a row to record an outcome`,
  );
}
