/**
 * A register's export and import, written once for both stores (`payouts register copy`, and
 * its conflict rules in copy.ts): every record in an order where a scope comes before what
 * belongs to it, and each record added unless its key is held, giving back the one held. A
 * store supplies only the statements, in its dialect, with the `:name`s used here.
 */

import { historyFromText, historyText } from './history-text.js';
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
  PAYOUT_FIELDS,
  payoutCells,
  payoutOf,
  type RunRow,
  runOf,
  runValues,
  type ScopeRow,
} from './records.js';
import type { Sql, Values } from './sql.js';
import type { ApprovalRecord, RegisterEntry, RunApproval } from './types.js';

/** A store's statements for export and import. */
export interface TransferStatements {
  /** Every origin declared, then every scope, by service and integrator, then by id. */
  origins: string;
  scopes: string;
  /**
   * What belongs to the scope `:scope`: its runs by start, its payouts by reference after
   * `:after` (`:page` of them), its payees, its payee histories.
   */
  scopeRuns: string;
  scopePayouts: string;
  scopePayees: string;
  scopeHistories: string;
  /** Every webhook event, by occurrence. */
  events: string;
  /** Every signed approval, oldest first; the approvals the runs of `:scope` relied on. */
  allApprovals: string;
  scopeRunApprovals: string;
  /** Every withdrawal of an approval, oldest first. */
  allWithdrawals: string;
  /** Every policy proposal, signature and version, by service and the version each replaces. */
  allPolicyProposals: string;
  allPolicySignatures: string;
  allPolicies: string;
  /** The id of the scope of `:service` and `:integrator`. */
  scopeId: string;
  /**
   * Per entry type: adds it unless its key is held (changing nothing then), and reads the one
   * held. A history without payments is added at `:now`.
   */
  add: Record<RegisterEntry['type'], string>;
  held: Record<RegisterEntry['type'], string>;
}

/** Payouts read per statement: a register can hold millions. */
const PAGE = 1000;

/** Every record of a register, a scope before what belongs to it. */
export async function* exportEntries(
  read: <T>(work: (sql: Sql) => Promise<T>) => Promise<T>,
  s: TransferStatements,
): AsyncIterable<RegisterEntry> {
  type OriginRow = {
    service: string;
    integrator_id: string;
    same_as: string | null;
    declared_at: string | Date;
  };
  for (const row of await read((sql) => sql.rows<OriginRow>(s.origins))) yield originEntry(row);
  for (const row of await read((sql) => sql.rows<ScopeRow>(s.scopes))) {
    yield scopeEntry(row);
    const key = { service: row.service, integratorId: row.integrator_id };
    const scope = { scope: Number(row.id) };
    for (const run of await read((sql) => sql.rows<RunRow>(s.scopeRuns, scope))) {
      const { leaseExpired: _, ...stored } = runOf(run, undefined);
      yield { type: 'run', ...key, run: stored };
    }
    for (let after = ''; ; ) {
      const page = await read((sql) =>
        sql.rows<Record<string, unknown>>(s.scopePayouts, { ...scope, after, page: PAGE }),
      );
      if (page.length === 0) break;
      for (const payout of page)
        yield { type: 'payout', ...key, payout: payoutOf(cellsOf(payout), undefined) };
      after = page.at(-1)!['reference'] as string;
    }
    type PayeeRow = {
      kind: 'beneficiary' | 'recipient';
      fingerprint: string;
      id: string;
      created_at: string | Date;
    };
    for (const p of await read((sql) => sql.rows<PayeeRow>(s.scopePayees, scope))) {
      yield {
        type: 'payee',
        ...key,
        kind: p.kind,
        fingerprint: p.fingerprint,
        id: p.id,
        createdAt: iso(p.created_at),
      };
    }
    for (const h of await read((sql) =>
      sql.rows<{ payee: string; history: string }>(s.scopeHistories, scope),
    ))
      yield { type: 'history', ...key, payee: h.payee, history: historyFromText(h.history) };
    for (const row of await read((sql) => sql.rows<RunApprovalRow>(s.scopeRunApprovals, scope)))
      yield { type: 'runApproval', ...key, runId: row.run_id, approval: runApprovalOf(row) };
  }
  for (const row of await read((sql) => sql.rows<EventRow>(s.events)))
    yield { type: 'event', event: eventOf(row) };
  for (const row of await read((sql) => sql.rows<ApprovalRow>(s.allApprovals)))
    yield { type: 'approval', approval: approvalOf(row) };
  for (const row of await read((sql) => sql.rows<WithdrawalRow>(s.allWithdrawals)))
    yield { type: 'withdrawal', withdrawal: withdrawalOf(row) };
  for (const row of await read((sql) => sql.rows<PolicyProposalRow>(s.allPolicyProposals)))
    yield { type: 'policyProposal', proposal: proposalOf(row) };
  for (const row of await read((sql) => sql.rows<PolicySignatureRow>(s.allPolicySignatures)))
    yield { type: 'policySignature', signature: policySignatureOf(row) };
  for (const row of await read((sql) => sql.rows<PolicyVersionRow>(s.allPolicies)))
    yield { type: 'policy', policy: policyVersionOf(row) };
}

/** An approval as a store's row holds it. */
export interface ApprovalRow {
  statement_digest: string;
  fingerprint: string;
  origin: string;
  digest: string;
  sheet: string;
  statement: string;
  signature: string;
  /** JSON array. */
  principals: string;
  recorded_at: string;
}

/** A run's approval as a store's row holds it. */
export interface RunApprovalRow {
  run_id: string;
  principal: string;
  fingerprint: string;
  statement_digest: string;
  recorded_at: string;
}

export function approvalOf(row: ApprovalRow): ApprovalRecord {
  return {
    statementDigest: row.statement_digest,
    fingerprint: row.fingerprint,
    origin: row.origin,
    digest: row.digest,
    sheet: row.sheet,
    statement: row.statement,
    signature: row.signature,
    principals: JSON.parse(row.principals) as string[],
    recordedAt: row.recorded_at,
  };
}

/** The values an approval is written with (the statements' `:name`s). */
export function approvalValues(a: ApprovalRecord): Values {
  return {
    statementDigest: a.statementDigest,
    fingerprint: a.fingerprint,
    origin: a.origin,
    digest: a.digest,
    sheet: a.sheet,
    statement: a.statement,
    signature: a.signature,
    principals: JSON.stringify(a.principals),
    recordedAt: a.recordedAt,
  };
}

export function runApprovalOf(row: RunApprovalRow): RunApproval {
  return {
    principal: row.principal,
    fingerprint: row.fingerprint,
    statementDigest: row.statement_digest,
    recordedAt: row.recorded_at,
  };
}

/** Adds each entry whose key is not held yet; gives back, for each, the one held (undefined: added). */
export async function importEntries(
  sql: Sql,
  s: TransferStatements,
  entries: readonly RegisterEntry[],
  now: string,
): Promise<(RegisterEntry | undefined)[]> {
  const held: (RegisterEntry | undefined)[] = [];
  for (const entry of entries) {
    let scope: number | undefined;
    if ('service' in entry && entry.type !== 'scope' && entry.type !== 'origin') {
      const [row] = await sql.rows<{ id: number | string }>(s.scopeId, {
        service: entry.service,
        integrator: entry.integratorId,
      });
      scope = Number(row!.id);
    }
    const values = { ...valuesOf(entry, scope), now };
    if ((await sql.changed(s.add[entry.type], values)) > 0) held.push(undefined);
    else
      held.push(heldEntry(entry, (await sql.rows<Record<string, unknown>>(s.held[entry.type], values))[0]!));
  }
  return held;
}

/** The values an entry is added and looked for with. */
function valuesOf(entry: RegisterEntry, scope: number | undefined): Values {
  switch (entry.type) {
    case 'approval':
      return approvalValues(entry.approval);
    case 'withdrawal':
      return withdrawalValues(entry.withdrawal);
    case 'policyProposal':
      return proposalValues(entry.proposal);
    case 'policySignature':
      return policySignatureValues(entry.signature);
    case 'policy':
      return policyVersionValues(entry.policy);
    case 'runApproval':
      return {
        scope,
        run: entry.runId,
        principal: entry.approval.principal,
        fingerprint: entry.approval.fingerprint,
        statementDigest: entry.approval.statementDigest,
        recordedAt: entry.approval.recordedAt,
      };
    case 'event':
      return eventValues(entry.event);
    case 'origin':
      return {
        service: entry.service,
        integrator: entry.integratorId,
        sameAs: 'sameAs' in entry.declaration ? entry.declaration.sameAs : null,
        declaredAt: entry.declaredAt,
      };
    case 'scope':
      return {
        service: entry.service,
        integrator: entry.integratorId,
        secret: Buffer.from(entry.secret, 'base64'),
        login: entry.login ?? null,
        createdAt: entry.createdAt,
        lastUsedAt: entry.lastUsedAt,
      };
    case 'run':
      return runEntryValues(entry.run, scope);
    case 'payout': {
      const cells = payoutCells(entry.payout);
      return { scope, ...Object.fromEntries(PAYOUT_FIELDS.map(([column], i) => [column, cells[i]])) };
    }
    case 'payee':
      return {
        scope,
        kind: entry.kind,
        fingerprint: entry.fingerprint,
        id: entry.id,
        createdAt: entry.createdAt,
      };
    case 'history':
      return {
        scope,
        payee: entry.payee,
        history: historyText(entry.history),
        // When its last payout was made; the store's time when it has none.
        updatedAt: entry.history.accounts[0]?.paidAt ?? null,
      };
  }
}

/** A webhook event's values, as the receiver recorded it. */
function eventValues(e: Extract<RegisterEntry, { type: 'event' }>['event']): Values {
  return {
    integrator: e.integratorId,
    resource: e.resourceId,
    operation: e.operation,
    success: e.success,
    message: e.message,
    occurredAt: e.occurredAt,
    receivedAt: e.receivedAt,
    payload: e.payload,
  };
}

/** A run's values with its lease and its outcome, as its record held them. */
function runEntryValues(
  r: Extract<RegisterEntry, { type: 'run' }>['run'],
  scope: number | undefined,
): Values {
  return {
    ...runValues(r),
    scope,
    heartbeatAt: r.heartbeatAt,
    leaseExpiresAt: r.leaseExpiresAt,
    finishedAt: r.finishedAt ?? null,
    rows: r.rows ?? null,
    statuses: r.statuses ? JSON.stringify(r.statuses) : null,
    exitCode: r.exitCode ?? null,
  };
}

/** The entry a store holds under the key of `entry`, from its row. */
function heldEntry(entry: RegisterEntry, row: Record<string, unknown>): RegisterEntry {
  switch (entry.type) {
    case 'approval':
      return { type: 'approval', approval: approvalOf(row as unknown as ApprovalRow) };
    case 'withdrawal':
      return { type: 'withdrawal', withdrawal: withdrawalOf(row as unknown as WithdrawalRow) };
    case 'policyProposal':
      return { type: 'policyProposal', proposal: proposalOf(row as unknown as PolicyProposalRow) };
    case 'policySignature':
      return { type: 'policySignature', signature: policySignatureOf(row as unknown as PolicySignatureRow) };
    case 'policy':
      return { type: 'policy', policy: policyVersionOf(row as unknown as PolicyVersionRow) };
    case 'runApproval':
      return { ...entry, approval: runApprovalOf(row as unknown as RunApprovalRow) };
    case 'event':
      return { type: 'event', event: eventOf(row as unknown as EventRow) };
    case 'origin':
      return originEntry(row as never);
    case 'scope': {
      const { login: _, ...held } = scopeEntry(row as unknown as ScopeRow) as typeof entry;
      return held;
    }
    case 'run': {
      const { leaseExpired: _, ...run } = runOf(row as unknown as RunRow, undefined);
      return { ...entry, run };
    }
    case 'payout':
      return { ...entry, payout: payoutOf(cellsOf(row), undefined) };
    case 'payee':
      return { ...entry, id: row['id'] as string };
    case 'history':
      return { ...entry, history: historyFromText(row['history'] as string) };
  }
}

function originEntry(o: {
  service: string;
  integrator_id: string;
  same_as: string | null;
  declared_at: string | Date;
}): RegisterEntry {
  return {
    type: 'origin',
    service: o.service,
    integratorId: o.integrator_id,
    declaration: o.same_as === null ? { separate: true } : { sameAs: o.same_as },
    declaredAt: iso(o.declared_at),
  };
}

function scopeEntry(row: ScopeRow): RegisterEntry {
  return {
    type: 'scope',
    service: row.service,
    integratorId: row.integrator_id,
    secret: Buffer.from(row.secret).toString('base64'),
    ...(row.login ? { login: row.login } : {}),
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  };
}
