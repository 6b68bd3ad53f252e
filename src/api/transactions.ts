/**
 * Transactions (docs/service.md "Resources and calls": created from a simulation). The only
 * call that moves money, so its POST always carries an Idempotency-Key (README "Never pay
 * twice: the register"): the same key on every
 * attempt and on every run of the batch, which makes retrying it safe.
 */
import type { z } from 'zod';
import { ServiceError } from '../errors.js';
import {
  HEADERS,
  MESSAGES,
  PATHS,
  type Transaction,
  TransactionListSchema,
  type TransactionRequest,
  TransactionSchema,
} from './contract.js';
import { type CallOptions, parseBody, type Requester } from './http.js';

export interface CreateTransactionOptions extends CallOptions {
  /** Required: from register/identity.ts `transactionKey(scope, reference)`. */
  idempotencyKey: string;
}

export interface CreatedTransaction {
  transaction: Transaction;
  /** The service answered from its idempotency store: an earlier attempt or run created it. */
  replayed: boolean;
  requestId: string | undefined;
}

/** A transaction of a list, as far as its schema checks it: id, status, failure reason. */
export type FoundTransaction = z.infer<typeof TransactionSchema>;

export interface TransactionsApi {
  /** POST /v1/transactions with an Idempotency-Key. */
  create(request: TransactionRequest, options: CreateTransactionOptions): Promise<CreatedTransaction>;
  /** GET /v1/transactions/{id}: the status check. */
  get(id: string, options?: CallOptions): Promise<Transaction>;
  /** The transactions created with this reference, newest first (contract.ts, assumed). */
  findByReference(reference: string, options?: CallOptions): Promise<FoundTransaction[]>;
}

/** The transaction endpoints over `http`. */
export function transactionsApi(http: Requester): TransactionsApi {
  return {
    async create(request, options) {
      if (!options?.idempotencyKey) {
        // A programming error, not a user's: sending money without a key could pay twice.
        throw new TypeError('transactions.create needs an idempotencyKey');
      }
      const ctx = { method: 'POST', path: PATHS.transactions } as const;
      const res = await http.request({
        ...ctx,
        auth: true,
        body: request,
        idempotencyKey: options.idempotencyKey,
        signal: options.signal,
      });
      const replayed =
        String(res.headers[HEADERS.idempotentReplayed.toLowerCase()] ?? '').toLowerCase() === 'true';
      return {
        transaction: parseBody<Transaction>(TransactionSchema, res, ctx),
        replayed,
        requestId: res.requestId,
      };
    },

    get: (id, { signal } = {}) =>
      http.requestAs<Transaction>(TransactionSchema, {
        method: 'GET',
        path: PATHS.transaction(id),
        auth: true,
        signal,
      }),

    async findByReference(reference, { signal } = {}) {
      const list = await http.requestAs<{ data: z.infer<typeof TransactionSchema>[] }>(
        TransactionListSchema,
        {
          method: 'GET',
          path: PATHS.transactionsByReference(reference),
          auth: true,
          signal,
        },
      );
      return list.data;
    },
  };
}

/** A 422 saying the simulation expired: a new simulation may be made. */
export function isSimulationExpired(err: unknown): err is ServiceError {
  return serviceMessageStarts(err, 422, MESSAGES.simulationExpiredPrefix);
}

/**
 * What a refused recipient creation or quote says of the payee ids it named: `beneficiary`
 * when the beneficiary is gone (a 404 creating a recipient for it; a 422 saying it was
 * deleted), `recipient` when the recipient is (a 404 quoting for it); undefined otherwise.
 * docs/api-assumptions.md "States".
 */
export function payeeGone(
  err: unknown,
  step: 'recipient' | 'simulation',
): 'beneficiary' | 'recipient' | undefined {
  if (!(err instanceof ServiceError)) return undefined;
  if (err.status === 404) return step === 'recipient' ? 'beneficiary' : 'recipient';
  if (err.status === 422 && err.serviceErrors.some((m) => m.includes(MESSAGES.payeeDeletedFragment)))
    return 'beneficiary';
  return undefined;
}

/** A 422 saying the simulation already paid for another transaction. */
export function isSimulationUsed(err: unknown): err is ServiceError {
  return serviceMessageStarts(err, 422, MESSAGES.simulationUsedPrefix);
}

/** Another request with the same Idempotency-Key is still being processed (409). */
export function isIdempotencyInProgress(err: unknown): err is ServiceError {
  return serviceMessageStarts(err, 409, MESSAGES.idempotencyInProgressPrefix);
}

/** The Idempotency-Key was already used with a different request body. */
export function isIdempotencyConflict(err: unknown): err is ServiceError {
  return err instanceof ServiceError && err.serviceMessage.startsWith(MESSAGES.idempotencyConflictPrefix);
}

function serviceMessageStarts(err: unknown, status: number, prefix: string): err is ServiceError {
  return err instanceof ServiceError && err.status === status && err.serviceMessage.startsWith(prefix);
}
