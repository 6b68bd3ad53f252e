/**
 * Who a payout is (README "Never pay twice: the register"): a payout is its `reference`
 * within one service and one integrator, never the file it came in. Every key sent to the
 * service derives from that identity, so any sheet that names the reference (the same one
 * again, an edited or renamed copy, a fixed results file fed back) sends the same key.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.js';

/** The service a base URL names: its origin (README "Never pay twice: the register"). */
export function serviceOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    throw new ConfigError(`--base-url ${JSON.stringify(baseUrl.slice(0, 80))} is not a URL`);
  }
}

/** Where a payout lives: the register scope (service and integrator). */
export interface ScopeIdentity {
  service: string;
  integratorId: string;
}

/**
 * The Idempotency-Key of a payout's transaction: base64url of SHA-256 over the service, the
 * integrator and the reference, 32 characters (192 bits). The same key serves every attempt,
 * every run and every sheet, and the re-send after a re-quote (docs/api-assumptions.md: a 4xx
 * answer releases the key).
 */
export function transactionKey(scope: ScopeIdentity, reference: string): string {
  return keyOf(`payouts:v2:transaction\n${scope.service}\n${scope.integratorId}\n${reference}`);
}

/**
 * The Idempotency-Key of a beneficiary or recipient creation, from the payee's details (the
 * mapper's dedupe key, itself a hash of the normalised request). Never stored: the register
 * keeps only a keyed hash of the details (register/types.ts), since this one could be guessed
 * from a short account number.
 */
export function creationKey(
  scope: ScopeIdentity,
  kind: 'beneficiary' | 'recipient',
  dedupeKey: string,
): string {
  return keyOf(`payouts:v2:${kind}\n${scope.service}\n${scope.integratorId}\n${dedupeKey}`);
}

function keyOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 32);
}
