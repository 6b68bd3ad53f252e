/**
 * Terms and conditions acceptance (docs/service.md "Resources and calls": 204, no body; path
 * prefix assumed).
 */
import { PATHS } from './contract.js';
import type { CallOptions, Requester } from './http.js';

export interface TermsApi {
  /** POST .../terms-and-conditions for the integrator. */
  accept(integratorId: string, options?: CallOptions): Promise<void>;
}

/** The terms endpoint over `http`. */
export function termsApi(http: Requester): TermsApi {
  return {
    async accept(integratorId, options = {}) {
      // Accepting twice leaves them accepted: safe to retry.
      await http.request({
        method: 'POST',
        path: PATHS.termsAndConditions(integratorId),
        auth: true,
        safeToRepeat: true,
        signal: options.signal,
      });
    },
  };
}
