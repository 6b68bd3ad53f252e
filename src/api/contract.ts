/**
 * The payments service contract as payouts assumes it.
 *
 * The service's documentation (retold in docs/service.md) fixes the token endpoint, the
 * integrator, webhook and beneficiary paths, the error body, the RecipientRequest fields and
 * the validation messages. Where it leaves something open (paths of recipients, simulations,
 * transactions, terms; request and response bodies; states; event names; idempotency; rate-limit
 * answers) this module holds the one assumption payouts makes, and docs/api-assumptions.md
 * explains each. A user with the real service's documentation changes this file: the client
 * (src/api) and the sandbox (src/sandbox) both build on it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * The fields of an address object (docs/service.md "Rail details": recipientAddress,
 * bankAddress).
 */
export const ADDRESS_FIELDS = ['street1', 'city', 'state', 'postalCode', 'country'] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];

/** An address object (recipientAddress, bankAddress; docs/service.md "Rail details"). */
export type Address = Partial<Record<AddressField, string>>;

/**
 * A rail's details (docs/service.md "Rail details"): the fields a rail uses; values as the
 * service receives them.
 */
export type RecipientDetails = Record<string, string | boolean | Address | undefined>;

/**
 * The RecipientRequest as sent to the service (docs/service.md "The recipient request").
 * `integratorLevel` marks an integrator-level recipient (no beneficiary); how the real service
 * learns that is not given and is assumed in docs/api-assumptions.md.
 */
export interface RecipientRequest {
  individualName?: string;
  businessName?: string;
  countryOfIncorporation?: string;
  beneficiaryId?: string;
  integratorLevel?: boolean;
  currency?: string;
  type?: string;
  details?: RecipientDetails | null;
  nickname?: string;
}

/** Token endpoint path, below the auth URL (docs/service.md "Signing in and tokens"). */
export const TOKEN_PATH = '/auth/realms/service/protocol/openid-connect/token';

/**
 * Resource paths below {base_url}. docs/service.md "Resources and calls" where given; the rest
 * assumed.
 */
export const PATHS = {
  integratorMe: '/v1/integrators/me',
  webhooks: (integratorId: string) => `/v1/integrators/${enc(integratorId)}/webhooks`,
  updateWebhookSecret: (integratorId: string) => `/v1/integrators/${enc(integratorId)}/update-webhook-secret`,
  webhookSecret: (integratorId: string) => `/v1/integrators/${enc(integratorId)}/webhook-secret`,
  /** Assumed prefix: the service gives only ".../terms-and-conditions". */
  termsAndConditions: (integratorId: string) => `/v1/integrators/${enc(integratorId)}/terms-and-conditions`,
  beneficiaries: '/v1/beneficiaries',
  beneficiary: (id: string) => `/v1/beneficiaries/${enc(id)}`,
  /** Assumed: recipients, simulations and transactions are top-level collections. */
  recipients: '/v1/recipients',
  recipient: (id: string) => `/v1/recipients/${enc(id)}`,
  simulations: '/v1/simulations',
  simulation: (id: string) => `/v1/simulations/${enc(id)}`,
  transactions: '/v1/transactions',
  transaction: (id: string) => `/v1/transactions/${enc(id)}`,
  /**
   * Assumed (the service shows no search): the integrator's transactions created with this
   * `reference`, newest first, as `{ data: Transaction[] }`. How `reconcile` settles a payout
   * whose answer was lost: found, its transaction exists; none, it was never created.
   */
  transactionsByReference: (reference: string) =>
    `/v1/transactions?reference=${encodeURIComponent(reference)}`,
} as const;

/** The sandbox's own inspection endpoint (docs/sandbox.md "Ledger"); not part of the service. */
export const SANDBOX_LEDGER_PATH = '/_sandbox/ledger';
/** The same ledger in numbers: a run of a million rows is checked without reading a million records. */
export const SANDBOX_LEDGER_COUNTS_PATH = '/_sandbox/ledger/counts';

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

/**
 * Header names. docs/service.md "Webhook signature" gives the signature header; the others are
 * assumed.
 */
export const HEADERS = {
  idempotencyKey: 'Idempotency-Key',
  /** Set on a response replayed for a repeated Idempotency-Key. */
  idempotentReplayed: 'Idempotent-Replayed',
  requestId: 'X-Request-Id',
  webhookSignature: 'X-Service-Webhook-Signature',
  retryAfter: 'Retry-After',
} as const;

/** The error body (docs/service.md "Error body"). */
export interface ErrorBody {
  timestamp: string;
  status: number;
  error: string;
  message: string;
  path: string;
  /**
   * Assumed extension on a 400 with validation details (docs/service.md "Status codes"): each
   * message on its own, word for word (docs/service.md "Validation messages"). `message`
   * holds the same messages joined with VALIDATION_MESSAGE_SEPARATOR.
   */
  errors?: string[];
}

/** Joins the validation messages in the `message` of a 400 (assumed; no 7.2 message has it). */
export const VALIDATION_MESSAGE_SEPARATOR = '; ';

/**
 * Error body of the token endpoint (assumed): the identity endpoint is an OAuth 2.0 server
 * (RFC 6749 5.2), so it answers 400/401 with `error` and `error_description`, not with 2.5.
 */
export interface TokenErrorBody {
  error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type';
  error_description: string;
}

/**
 * The token response (docs/service.md "Signing in and tokens"); the long form adds the optional
 * fields.
 */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_expires_in?: number;
  refresh_token?: string;
  'not-before-policy'?: number;
  session_state?: string;
  scope: string;
}

/** GET /v1/integrators/me (fields assumed). */
export interface Integrator {
  id: string;
  name: string;
  email: string;
  webhookUrl: string | null;
  termsAcceptedAt: string | null;
  createdAt: string;
}

/** Beneficiary kinds (assumed). */
export const BENEFICIARY_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export type BeneficiaryType = (typeof BENEFICIARY_TYPES)[number];

/** POST /v1/beneficiaries body (assumed). */
export interface BeneficiaryRequest {
  type: BeneficiaryType;
  name: string;
  email?: string;
  country: string;
}

export interface Beneficiary extends BeneficiaryRequest {
  id: string;
  integratorId: string;
  createdAt: string;
}

/** POST /v1/recipients answers 201, PUT /v1/recipients/{id} 200 (assumed). */
export interface Recipient extends RecipientRequest {
  id: string;
  integratorId: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * POST /v1/simulations body (assumed). `amount` is what the recipient receives, in the rail's
 * currency, as a decimal string with a `.` and at most 2 decimals: money is never a float.
 */
export interface SimulationRequest {
  recipientId: string;
  amount: string;
  currency: string;
}

/** The quote (assumed). The integrator funds in USD; fxRate is units of `currency` per USD. */
export interface Simulation {
  id: string;
  recipientId: string;
  amount: string;
  currency: string;
  sourceAmount: string;
  sourceCurrency: 'USD';
  fxRate: string;
  fee: string;
  expiresAt: string;
  createdAt: string;
}

/**
 * POST /v1/transactions body (docs/service.md "Resources and calls": it takes the simulation's
 * id; the rest assumed).
 */
export interface TransactionRequest {
  simulationId: string;
  /** The payout's own reference from the sheet. */
  reference?: string;
}

/** Longest `reference` a transaction accepts (assumed: docs/api-assumptions.md "Limits"). */
export const MAX_REFERENCE_LENGTH = 255;

/** Transaction states (not given by the service; docs/api-assumptions.md "States"). */
export const TRANSACTION_STATUSES = ['PENDING', 'COMPLETED', 'FAILED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export interface Transaction {
  id: string;
  simulationId: string;
  recipientId: string;
  beneficiaryId: string | null;
  amount: string;
  currency: string;
  status: TransactionStatus;
  reference: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Webhook operations. docs/service.md "Webhook payload" gives TRANSACTION_COMPLETED; the others
 * are assumed.
 */
export const WEBHOOK_OPERATIONS = [
  'TRANSACTION_CREATED',
  'TRANSACTION_COMPLETED',
  'TRANSACTION_FAILED',
  'BENEFICIARY_CREATED',
  'BENEFICIARY_DELETED',
] as const;
export type WebhookOperation = (typeof WEBHOOK_OPERATIONS)[number];

/** The webhook payload (docs/service.md "Webhook payload"). */
export interface WebhookPayload {
  operation: string;
  resourceId: string;
  /** ISO 8601 without a zone designator, as the service shows it. */
  createdAt: string;
  integratorId: string;
  beneficiaryId?: string | null;
  message: string | null;
  success: boolean;
  data: Record<string, unknown>;
}

/** PATCH/GET /v1/integrators/{id}/webhooks body (assumed). */
export interface WebhookUrlBody {
  url: string | null;
}

/**
 * GET /v1/integrators/{id}/webhook-secret: "the webhook secret in encrypted form" (docs/service.md
 * "Webhook secret"; scheme assumed): AES-256-GCM with the key SHA-256(client_secret);
 * `ciphertext` is base64 of iv (12 bytes) | tag (16 bytes) | encrypted secret.
 */
export interface EncryptedWebhookSecret {
  algorithm: 'AES-256-GCM';
  keyDerivation: 'SHA-256(client_secret)';
  ciphertext: string;
}

/** POST /v1/integrators/{id}/update-webhook-secret answers 200 with the new secret (assumed). */
export interface WebhookSecretBody {
  webhookSecret: string;
}

/**
 * Messages the service gives with 404 and 422 that the client acts on (assumed wording).
 * A 422 on POST /v1/transactions whose message starts with SIMULATION_EXPIRED_PREFIX means the
 * quote timed out and a new simulation may be made; any other 422 is final.
 */
export const MESSAGES = {
  simulationExpiredPrefix: 'Simulation has expired',
  simulationUsedPrefix: 'Simulation has already been used',
  idempotencyConflictPrefix: 'Idempotency-Key has already been used with a different request',
  /** 409: the first request with this key has not finished; retry the same request later. */
  idempotencyInProgressPrefix: 'A request with this Idempotency-Key is still in progress',
  /**
   * Assumed (docs/api-assumptions.md "States"): a 422 whose message contains this says a payee in
   * the request (a recipient's beneficiary) was deleted on the service.
   */
  payeeDeletedFragment: 'has been deleted',
} as const;

// ---------------------------------------------------------------------------------------------
// Response schemas (src/api validates answers with these). Light on purpose: they check the
// fields payouts acts on and let every other field through untouched (looseObject), so a real
// service that adds fields keeps working and one that renames a field we use fails loudly.
// ---------------------------------------------------------------------------------------------

/**
 * The error body (docs/service.md "Error body"), read leniently: a proxy or the identity endpoint
 * may answer in another shape.
 */
export const ErrorBodySchema = z.looseObject({
  status: z.number().optional(),
  error: z.string().optional(),
  message: z.string().optional(),
  path: z.string().optional(),
  /** Each validation message of a 400 on its own (ErrorBody.errors). */
  errors: z.array(z.string()).optional(),
  /** OAuth 2.0 error answers of the token endpoint (TokenErrorBody). */
  error_description: z.string().optional(),
});

/** The token response; `token_type` compared case-insensitively, as RFC 6749 7.1 says. */
export const TokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i),
  expires_in: z.number().positive(),
  scope: z.string().optional(),
});

export const IntegratorSchema = z.looseObject({ id: z.string().min(1) });

export const WebhookUrlBodySchema = z.looseObject({ url: z.string().nullable() });

export const EncryptedWebhookSecretSchema = z.looseObject({
  algorithm: z.literal('AES-256-GCM'),
  keyDerivation: z.literal('SHA-256(client_secret)'),
  ciphertext: z.string().min(1),
});

export const WebhookSecretBodySchema = z.looseObject({ webhookSecret: z.string().min(1) });

export const BeneficiarySchema = z.looseObject({ id: z.string().min(1) });

export const RecipientSchema = z.looseObject({ id: z.string().min(1) });

export const SimulationSchema = z.looseObject({
  id: z.string().min(1),
  expiresAt: z.string().optional(),
});

export const TransactionSchema = z.looseObject({
  id: z.string().min(1),
  simulationId: z.string().optional(),
  status: z.enum(TRANSACTION_STATUSES),
  failureReason: z.string().nullable().optional(),
});

/** GET /v1/transactions?reference=... (assumed): the transactions with that reference. */
export const TransactionListSchema = z.looseObject({ data: z.array(TransactionSchema) });

// ---------------------------------------------------------------------------------------------
// Webhook secret encryption (EncryptedWebhookSecret above): the assumed scheme in one place, so
// the client decrypts and the sandbox encrypts with the same code.
// ---------------------------------------------------------------------------------------------

const IV_BYTES = 12;
const TAG_BYTES = 16;

function webhookSecretKey(clientSecret: string): Buffer {
  return createHash('sha256').update(clientSecret, 'utf8').digest();
}

/** Encrypts a webhook secret as the service is assumed to (used by the sandbox). */
export function encryptWebhookSecret(secret: string, clientSecret: string): EncryptedWebhookSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', webhookSecretKey(clientSecret), iv);
  const encrypted = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return {
    algorithm: 'AES-256-GCM',
    keyDerivation: 'SHA-256(client_secret)',
    ciphertext: Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64'),
  };
}

/**
 * Decrypts an EncryptedWebhookSecret with the integrator's client secret. Returns undefined
 * when the ciphertext is malformed or was made with another key (GCM authentication fails).
 */
export function decryptWebhookSecret(body: EncryptedWebhookSecret, clientSecret: string): string | undefined {
  const raw = Buffer.from(body.ciphertext, 'base64');
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      webhookSecretKey(clientSecret),
      raw.subarray(0, IV_BYTES),
    );
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}
