/** Beneficiaries (docs/service.md "Resources and calls"): create, get, delete. */
import { type Beneficiary, type BeneficiaryRequest, BeneficiarySchema, PATHS } from './contract.js';
import type { CallOptions, Requester } from './http.js';

export interface CreateOptions extends CallOptions {
  /**
   * Sent as Idempotency-Key, which makes the POST retryable. Without one a creation is not
   * retried after a 5xx or a broken connection, since it could create the record twice.
   */
  idempotencyKey?: string;
}

export interface BeneficiariesApi {
  /** POST /v1/beneficiaries (201). */
  create(request: BeneficiaryRequest, options?: CreateOptions): Promise<Beneficiary>;
  /** GET /v1/beneficiaries/{id}. */
  get(id: string, options?: CallOptions): Promise<Beneficiary>;
  /** DELETE /v1/beneficiaries/{id} (204). */
  delete(id: string, options?: CallOptions): Promise<void>;
}

/** The beneficiary endpoints over `http`. */
export function beneficiariesApi(http: Requester): BeneficiariesApi {
  return {
    create: (request, { idempotencyKey, signal } = {}) =>
      http.requestAs<Beneficiary>(BeneficiarySchema, {
        method: 'POST',
        path: PATHS.beneficiaries,
        auth: true,
        body: request,
        idempotencyKey,
        signal,
      }),

    get: (id, { signal } = {}) =>
      http.requestAs<Beneficiary>(BeneficiarySchema, {
        method: 'GET',
        path: PATHS.beneficiary(id),
        auth: true,
        signal,
      }),

    async delete(id, { signal } = {}) {
      await http.request({ method: 'DELETE', path: PATHS.beneficiary(id), auth: true, signal });
    },
  };
}
