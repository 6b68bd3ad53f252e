import { randomUUID } from 'node:crypto';
import {
  MAX_REFERENCE_LENGTH,
  MESSAGES,
  PATHS,
  type Recipient,
  type Transaction,
} from '../../api/contract.js';
import { HttpError, type Reply, validationError } from '../errors.js';
import { type AuthedRequest, jsonObject, PARAM, param, type Route, type Sandbox } from '../router.js';
import { owned, type TransactionRecord } from '../state.js';
import { isoWithOffset } from '../time.js';
import { emitEvent, type SandboxEvent } from './events.js';
import { assertPayable } from './recipients.js';
import { ownSimulation } from './simulations.js';

/** Transaction routes (paths, bodies and states assumed in contract.ts). */
export const transactionRoutes: Route[] = [
  { method: 'POST', pattern: PATHS.transactions, auth: true, handler: createTransaction },
  { method: 'GET', pattern: PATHS.transaction(PARAM), auth: true, handler: getTransaction },
  { method: 'GET', pattern: PATHS.transactions, auth: true, handler: findTransactions },
];

/**
 * The sandbox's documented failure trigger: a transaction fails when its recipient's
 * individualName, businessName or details.receiverName starts with this (any case).
 */
export const FAILURE_TRIGGER = 'FAIL';

/** Why a payment to the recipient fails in the sandbox, or null when it completes. */
export function failureReasonFor(recipient: Recipient): string | null {
  const names = [recipient.individualName, recipient.businessName, recipient.details?.['receiverName']];
  const trigger = names.find(
    (name): name is string =>
      typeof name === 'string' && name.trimStart().toUpperCase().startsWith(FAILURE_TRIGGER),
  );
  return trigger === undefined
    ? null
    : `The receiving bank rejected the payment to "${trigger}" (sandbox failure trigger: a recipient name starting with ${FAILURE_TRIGGER})`;
}

function createTransaction(request: AuthedRequest, sandbox: Sandbox): Reply {
  const body = jsonObject(request);
  const { simulationId, reference } = body;
  const problems: string[] = [];
  if (typeof simulationId !== 'string' || simulationId === '')
    problems.push('The field simulationId is required');
  if (reference !== undefined && reference !== null) {
    if (typeof reference !== 'string' || reference.length > MAX_REFERENCE_LENGTH) {
      problems.push(`The field reference must be a string of at most ${MAX_REFERENCE_LENGTH} characters`);
    }
  }
  if (problems.length > 0) throw validationError(problems);

  const id = simulationId as string;
  const simulation = ownSimulation(sandbox, id, request.integrator.id);
  if (simulation.transactionId !== null) {
    throw new HttpError(
      422,
      `${MESSAGES.simulationUsedPrefix}: simulation ${id} became transaction ${simulation.transactionId} - create a new simulation`,
    );
  }
  if (request.now >= simulation.expiresAtMs) {
    throw new HttpError(
      422,
      `${MESSAGES.simulationExpiredPrefix}: simulation ${id} expired at ${simulation.simulation.expiresAt} - create a new simulation`,
    );
  }
  const recipient = sandbox.state.recipients.get(simulation.simulation.recipientId);
  if (recipient === undefined)
    throw new HttpError(422, `Recipient ${simulation.simulation.recipientId} no longer exists`);
  assertPayable(sandbox, recipient);

  const createdAt = isoWithOffset(request.now);
  const transaction: Transaction = {
    id: randomUUID(),
    simulationId: id,
    recipientId: recipient.id,
    beneficiaryId: typeof recipient.beneficiaryId === 'string' ? recipient.beneficiaryId : null,
    amount: simulation.simulation.amount,
    currency: simulation.simulation.currency,
    status: 'PENDING',
    reference: typeof reference === 'string' ? reference : null,
    failureReason: null,
    createdAt,
    updatedAt: createdAt,
  };
  const record: TransactionRecord = {
    integratorId: request.integrator.id,
    transaction,
    sourceAmount: simulation.simulation.sourceAmount,
    idempotencyKey: request.idempotencyKey,
  };
  simulation.transactionId = transaction.id;
  sandbox.state.simulations.replace(id, simulation);
  sandbox.state.transactions.add(transaction.id, record);
  emitEvent(sandbox, transactionEvent(record), request.draws.aux[1]);
  scheduleSettlement(sandbox, record, failureReasonFor(recipient), request.draws.aux[2]);
  return { status: 201, body: transaction };
}

function getTransaction(request: AuthedRequest, sandbox: Sandbox): Reply {
  const id = param(request);
  const record = owned(
    sandbox.state.transactions,
    'Transaction',
    id,
    request.integrator.id,
    (r) => r.integratorId,
  );
  return { status: 200, body: record.transaction };
}

/** GET /v1/transactions?reference=R: the integrator's transactions with that reference, newest first. */
function findTransactions(request: AuthedRequest, sandbox: Sandbox): Reply {
  const reference = request.query.get('reference');
  if (reference === null || reference === '') {
    throw validationError(['reference is required to list transactions']);
  }
  const data = sandbox.state
    .transactionsWithReference(request.integrator.id, reference)
    .map((r) => r.transaction);
  return { status: 200, body: { data } };
}

/** PENDING → COMPLETED or FAILED after --settle-delay, then the event goes out. */
function scheduleSettlement(
  sandbox: Sandbox,
  record: TransactionRecord,
  failureReason: string | null,
  duplicateDraw: number,
): void {
  sandbox.work.start();
  sandbox.scheduler.after(sandbox.config.settleDelayMs, () => {
    const transaction = record.transaction;
    transaction.status = failureReason === null ? 'COMPLETED' : 'FAILED';
    transaction.failureReason = failureReason;
    transaction.updatedAt = isoWithOffset(sandbox.config.clock.now());
    sandbox.state.transactions.replace(transaction.id, record);
    emitEvent(sandbox, transactionEvent(record), duplicateDraw);
    sandbox.work.done();
  });
}

/** The event of the transaction's current state: CREATED while PENDING, then COMPLETED or FAILED. */
function transactionEvent(record: TransactionRecord): SandboxEvent {
  const t = record.transaction;
  const operation =
    t.status === 'PENDING'
      ? 'TRANSACTION_CREATED'
      : t.status === 'COMPLETED'
        ? 'TRANSACTION_COMPLETED'
        : 'TRANSACTION_FAILED';
  return {
    operation,
    integratorId: record.integratorId,
    resourceId: t.id,
    beneficiaryId: t.beneficiaryId,
    success: t.status !== 'FAILED',
    message: t.failureReason,
    data: {
      transactionId: t.id,
      status: t.status,
      amount: t.amount,
      currency: t.currency,
      sourceAmount: record.sourceAmount,
      simulationId: t.simulationId,
      recipientId: t.recipientId,
      reference: t.reference,
      failureReason: t.failureReason,
    },
  };
}
