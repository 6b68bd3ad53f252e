import type { Beneficiary, Integrator, Recipient, Simulation, Transaction } from '../api/contract.js';
import { HttpError } from './errors.js';
import { openSandboxStore, type SandboxDb } from './store.js';
import { RECENT_RECORDS, RecordTable, type TableSpec } from './table.js';
import type { WebhookDelivery } from './webhooks.js';

/** An integrator with what the service keeps to itself. */
export interface IntegratorRecord extends Integrator {
  webhookSecret: string;
}

export interface BeneficiaryRecord {
  beneficiary: Beneficiary;
  deletedAt: string | null;
}

export interface SimulationRecord {
  integratorId: string;
  simulation: Simulation;
  expiresAtMs: number;
  /** The transaction made from it; a simulation is used once. */
  transactionId: string | null;
}

export interface TransactionRecord {
  integratorId: string;
  transaction: Transaction;
  sourceAmount: string;
  idempotencyKey: string | null;
}

/** Requests seen outside /_sandbox, for tests and benchmarks. */
export interface RequestCounts {
  total: number;
  /** By route, e.g. `POST /v1/transactions`; `unmatched` for paths without a route. */
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  injected: { errors: number; resets: number; rateLimited: number };
}

/** A transaction as the ledger shows it (docs/sandbox.md "Ledger"). */
export interface LedgerTransaction {
  id: string;
  integratorId: string;
  simulationId: string;
  recipientId: string;
  beneficiaryId: string | null;
  amount: string;
  currency: string;
  sourceAmount: string;
  status: Transaction['status'];
  idempotencyKey: string | null;
  reference: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Everything the sandbox holds, as GET /_sandbox/ledger answers it. */
export interface SandboxLedger {
  integrators: Integrator[];
  beneficiaries: Array<Beneficiary & { deletedAt: string | null }>;
  recipients: Recipient[];
  simulations: Array<Simulation & { integratorId: string; transactionId: string | null }>;
  transactions: LedgerTransaction[];
  webhookDeliveries: WebhookDelivery[];
  /** Events that had no callback URL to go to. */
  webhookEventsWithoutUrl: number;
  requests: RequestCounts;
}

/**
 * The ledger in numbers, as GET /_sandbox/ledger/counts answers it: what a run of a million rows
 * checks (each reference paid once) without a ledger of a million records to read.
 */
export interface SandboxLedgerCounts {
  beneficiaries: number;
  recipients: number;
  simulations: number;
  transactions: number;
  transactionsByStatus: Record<string, number>;
  /** Transactions that did not fail, by their reference (null references aside). */
  references: { paid: number; paidMoreThanOnce: number; firstPaidMoreThanOnce: string[] };
  requests: RequestCounts;
}

/** A kind of resource, for 403 and 404 messages. */
export type ResourceKind = 'Beneficiary' | 'Recipient' | 'Simulation' | 'Transaction' | 'Integrator';

/** 404 for an unknown id. */
export function notFound(kind: ResourceKind, id: string): HttpError {
  return new HttpError(404, `${kind} ${id} not found`);
}

/** 403 for a resource of another integrator (docs/service.md "Signing in and tokens"). */
export function forbidden(kind: ResourceKind, id: string): HttpError {
  return new HttpError(403, `${kind} ${id} belongs to another integrator - this token may not use it`);
}

/** Returns the record of `id` when it belongs to the caller; 404 when unknown, 403 when another's. */
export function owned<T>(
  records: { get(id: string): T | undefined },
  kind: ResourceKind,
  id: string,
  integratorId: string,
  ownerOf: (record: T) => string,
): T {
  const record = records.get(id);
  if (record === undefined) throw notFound(kind, id);
  if (ownerOf(record) !== integratorId) throw forbidden(kind, id);
  return record;
}

/**
 * The sandbox's data. Integrators are two objects; what a run makes (beneficiaries, recipients,
 * simulations, transactions) are tables of the sandbox's own store (store.ts), with only the
 * recent records in memory, so that a ledger of a million payouts fits a small container.
 */
export class SandboxState {
  readonly integrators = new Map<string, IntegratorRecord>();
  /** The store, for the other records that outlive a request (idempotency.ts). */
  readonly db: SandboxDb = openSandboxStore();
  readonly beneficiaries: RecordTable<BeneficiaryRecord>;
  readonly recipients: RecordTable<Recipient>;
  readonly simulations: RecordTable<SimulationRecord>;
  readonly transactions: RecordTable<TransactionRecord>;
  readonly requests: RequestCounts = {
    total: 0,
    byRoute: {},
    byStatus: {},
    injected: { errors: 0, resets: 0, rateLimited: 0 },
  };

  /** `recent`: records of each kind held as objects, per generation (table.ts). */
  constructor(readonly recent: number = RECENT_RECORDS) {
    const table = <T>(spec: TableSpec<T>) => new RecordTable<T>(this.db, { ...spec, recent });
    this.beneficiaries = table<BeneficiaryRecord>({ name: 'beneficiaries' });
    this.recipients = table<Recipient>({ name: 'recipients' });
    this.simulations = table<SimulationRecord>({ name: 'simulations' });
    this.transactions = table<TransactionRecord>({
      name: 'transactions',
      columns: {
        integrator_id: (r) => r.integratorId,
        reference: (r) => r.transaction.reference,
        status: (r) => r.transaction.status,
      },
      indexes: [['reference']],
    });
  }

  /** Counts an answered request. */
  countAnswer(routeLabel: string, status: number | 'reset'): void {
    this.requests.byRoute[routeLabel] = (this.requests.byRoute[routeLabel] ?? 0) + 1;
    const key = String(status);
    this.requests.byStatus[key] = (this.requests.byStatus[key] ?? 0) + 1;
  }

  /** The integrator's transactions with `reference`, newest first. */
  transactionsWithReference(integratorId: string, reference: string): TransactionRecord[] {
    return [
      ...this.transactions.rows('reference = ? AND integrator_id = ?', [reference, integratorId], true),
    ];
  }

  /** The ledger, read now: a copy of every record. */
  view(deliveries: readonly WebhookDelivery[], eventsWithoutUrl: number): SandboxLedger {
    return {
      integrators: [...this.integrators.values()].map(publicIntegrator),
      beneficiaries: [...this.beneficiaries.values()].map((r) => ({
        ...r.beneficiary,
        deletedAt: r.deletedAt,
      })),
      recipients: [...this.recipients.values()],
      simulations: [...this.simulations.values()].map((r) => ({
        ...r.simulation,
        integratorId: r.integratorId,
        transactionId: r.transactionId,
      })),
      transactions: [...this.transactions.values()].map(ledgerTransaction),
      webhookDeliveries: [...deliveries],
      webhookEventsWithoutUrl: eventsWithoutUrl,
      requests: this.requests,
    };
  }
}

/**
 * The ledger in numbers (SandboxLedgerCounts), counted by the store over every transaction: a
 * reference counts as paid by each transaction of it that did not fail.
 */
export function ledgerCounts(state: SandboxState): SandboxLedgerCounts {
  state.transactions.write();
  const byStatus: Record<string, number> = {};
  const statuses = state.db.prepare(
    'SELECT status, count(*) AS n FROM transactions GROUP BY status ORDER BY min(rowid)',
  );
  for (const row of statuses.all() as Array<{ status: string; n: number }>) byStatus[row.status] = row.n;
  const paid = "status <> 'FAILED' AND reference IS NOT NULL";
  const references = state.db
    .prepare(`SELECT count(DISTINCT reference) AS n FROM transactions WHERE ${paid}`)
    .get() as { n: number };
  const again = (
    state.db
      .prepare(
        `SELECT reference FROM transactions WHERE ${paid}
         GROUP BY reference HAVING count(*) > 1 ORDER BY min(rowid)`,
      )
      .all() as Array<{ reference: string }>
  ).map((row) => row.reference);
  return {
    beneficiaries: state.beneficiaries.size,
    recipients: state.recipients.size,
    simulations: state.simulations.size,
    transactions: state.transactions.size,
    transactionsByStatus: byStatus,
    references: {
      paid: references.n,
      paidMoreThanOnce: again.length,
      firstPaidMoreThanOnce: again.slice(0, 10),
    },
    requests: state.requests,
  };
}

/** The integrator as GET /v1/integrators/me shows it: without its secret. */
export function publicIntegrator(record: IntegratorRecord): Integrator {
  const { webhookSecret: _secret, ...integrator } = record;
  return integrator;
}

function ledgerTransaction(record: TransactionRecord): LedgerTransaction {
  const t = record.transaction;
  return {
    id: t.id,
    integratorId: record.integratorId,
    simulationId: t.simulationId,
    recipientId: t.recipientId,
    beneficiaryId: t.beneficiaryId,
    amount: t.amount,
    currency: t.currency,
    sourceAmount: record.sourceAmount,
    status: t.status,
    idempotencyKey: record.idempotencyKey,
    reference: t.reference,
    failureReason: t.failureReason,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}
