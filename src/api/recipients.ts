/**
 * Recipients, the payment destinations (docs/service.md "The recipient request"; paths assumed in
 * contract.ts).
 */

import type { CreateOptions } from './beneficiaries.js';
import type { RecipientRequest } from './contract.js';
import { PATHS, type Recipient, RecipientSchema } from './contract.js';
import type { CallOptions, Requester } from './http.js';

export interface RecipientsApi {
  /**
   * POST /v1/recipients (201). A 400 carries the messages of docs/service.md "Validation
   * messages".
   */
  create(request: RecipientRequest, options?: CreateOptions): Promise<Recipient>;
  /** PUT /v1/recipients/{id} (200): replaces the recipient. */
  update(id: string, request: RecipientRequest, options?: CallOptions): Promise<Recipient>;
  /** GET /v1/recipients/{id}. */
  get(id: string, options?: CallOptions): Promise<Recipient>;
}

/** The recipient endpoints over `http`. */
export function recipientsApi(http: Requester): RecipientsApi {
  return {
    create: (request, { idempotencyKey, signal } = {}) =>
      http.requestAs<Recipient>(RecipientSchema, {
        method: 'POST',
        path: PATHS.recipients,
        auth: true,
        body: request,
        idempotencyKey,
        signal,
      }),

    // A PUT replaces the record with the same body each time: safe to retry.
    update: (id, request, { signal } = {}) =>
      http.requestAs<Recipient>(RecipientSchema, {
        method: 'PUT',
        path: PATHS.recipient(id),
        auth: true,
        body: request,
        safeToRepeat: true,
        signal,
      }),

    get: (id, { signal } = {}) =>
      http.requestAs<Recipient>(RecipientSchema, {
        method: 'GET',
        path: PATHS.recipient(id),
        auth: true,
        signal,
      }),
  };
}
