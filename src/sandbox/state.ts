import type { Beneficiary, Integrator, Recipient, Simulation, Transaction } from '../api/contract.js';
import { HttpError } from './errors.js';
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
  records: Map<string, T>,
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

/** The sandbox's data: plain Maps, no persistence. */
export class SandboxState {
  readonly integrators = new Map<string, IntegratorRecord>();
  readonly beneficiaries = new Map<string, BeneficiaryRecord>();
  readonly recipients = new Map<string, Recipient>();
  readonly simulations = new Map<string, SimulationRecord>();
  readonly transactions = new Map<string, TransactionRecord>();
  readonly requests: RequestCounts = {
    total: 0,
    byRoute: {},
    byStatus: {},
    injected: { errors: 0, resets: 0, rateLimited: 0 },
  };

  /** Counts an answered request. */
  countAnswer(routeLabel: string, status: number | 'reset'): void {
    this.requests.byRoute[routeLabel] = (this.requests.byRoute[routeLabel] ?? 0) + 1;
    const key = String(status);
    this.requests.byStatus[key] = (this.requests.byStatus[key] ?? 0) + 1;
  }

  /** The ledger over the live records: serialize or clone it before anything changes. */
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

/** The ledger in numbers (SandboxLedgerCounts), counted over the live records. */
export function ledgerCounts(state: SandboxState): SandboxLedgerCounts {
  const byStatus: Record<string, number> = {};
  const paid = new Map<string, number>();
  for (const { transaction } of state.transactions.values()) {
    byStatus[transaction.status] = (byStatus[transaction.status] ?? 0) + 1;
    if (transaction.status === 'FAILED' || transaction.reference === null) continue;
    paid.set(transaction.reference, (paid.get(transaction.reference) ?? 0) + 1);
  }
  const again = [...paid].filter(([, n]) => n > 1).map(([reference]) => reference);
  return {
    beneficiaries: state.beneficiaries.size,
    recipients: state.recipients.size,
    simulations: state.simulations.size,
    transactions: state.transactions.size,
    transactionsByStatus: byStatus,
    references: {
      paid: paid.size,
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
