/**
 * The integrator record and its webhook settings (docs/service.md "Resources and calls", "Webhook
 * secret"): who am I, the callback URL, and the webhook secret (rotate; fetch encrypted and
 * decrypt with the client secret).
 */
import { ConfigError } from '../errors.js';
import {
  decryptWebhookSecret,
  EncryptedWebhookSecretSchema,
  type Integrator,
  IntegratorSchema,
  PATHS,
  WebhookSecretBodySchema,
  WebhookUrlBodySchema,
} from './contract.js';
import { type CallOptions, parseBody, type Requester } from './http.js';

export interface IntegratorsApi {
  /** GET /v1/integrators/me. */
  me(options?: CallOptions): Promise<Integrator>;
  /** GET the callback URL; null when none is set. */
  getWebhookUrl(integratorId: string, options?: CallOptions): Promise<string | null>;
  /** PATCH the callback URL; resolves with the URL the service now holds. */
  setWebhookUrl(integratorId: string, url: string | null, options?: CallOptions): Promise<string | null>;
  /**
   * Regenerates the webhook secret and resolves with the new one (docs/service.md "Webhook
   * secret").
   */
  rotateWebhookSecret(integratorId: string, options?: CallOptions): Promise<string>;
  /** Fetches the encrypted webhook secret and decrypts it with the client secret. */
  fetchWebhookSecret(integratorId: string, options?: CallOptions): Promise<string>;
}

/** The integrator endpoints over `http`; `clientSecret` is the key of the secret's encryption. */
export function integratorsApi(http: Requester, clientSecret: string): IntegratorsApi {
  const api: IntegratorsApi = {
    me: ({ signal } = {}) =>
      http.requestAs<Integrator>(IntegratorSchema, {
        method: 'GET',
        path: PATHS.integratorMe,
        auth: true,
        signal,
      }),

    async getWebhookUrl(integratorId, { signal } = {}) {
      const path = PATHS.webhooks(integratorId);
      return (await http.requestAs(WebhookUrlBodySchema, { method: 'GET', path, auth: true, signal })).url;
    },

    async setWebhookUrl(integratorId, url, { signal } = {}) {
      const request = { method: 'PATCH', path: PATHS.webhooks(integratorId) } as const;
      // Setting the same URL twice leaves the same state: safe to retry.
      const res = await http.request({ ...request, auth: true, body: { url }, safeToRepeat: true, signal });
      // The service does not give this answer (docs/service.md "Resources and calls"): a body is
      // read when there is one.
      return res.data === undefined ? url : parseBody(WebhookUrlBodySchema, res, request).url;
    },

    async rotateWebhookSecret(integratorId, options = {}) {
      const request = { method: 'POST', path: PATHS.updateWebhookSecret(integratorId) } as const;
      // A repeated rotation only rotates again, and the answer is the newest secret either way.
      const res = await http.request({ ...request, auth: true, safeToRepeat: true, signal: options.signal });
      if (res.data === undefined) return api.fetchWebhookSecret(integratorId, options);
      return parseBody(WebhookSecretBodySchema, res, request).webhookSecret;
    },

    async fetchWebhookSecret(integratorId, { signal } = {}) {
      const path = PATHS.webhookSecret(integratorId);
      const encrypted = await http.requestAs(EncryptedWebhookSecretSchema, {
        method: 'GET',
        path,
        auth: true,
        signal,
      });
      const secret = decryptWebhookSecret(encrypted, clientSecret);
      if (secret === undefined) {
        throw new ConfigError(
          `the webhook secret from ${path} cannot be decrypted with this client secret - check PAYOUTS_CLIENT_SECRET belongs to this integrator`,
        );
      }
      return secret;
    },
  };
  return api;
}
