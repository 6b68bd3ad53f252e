/**
 * What a failure to reach or understand the service means: the run's outage handling and the
 * exit code read it alike.
 */
import { NetworkError, RateLimitError, ServiceError, ServiceUnavailableError } from '../errors.js';

/** Answers in which the service understood a request and refused it. */
const REFUSALS = new Set([400, 409, 422]);

/** TLS failures where the client refused the server's certificate (not a handshake cut short). */
const CERTIFICATE_REFUSED = /CERT|UNABLE_TO_VERIFY|SELF_SIGNED/;

/**
 * What a failure to reach or understand the service means for a run (README "Exit codes"):
 * `certificate` when the client refused the service's certificate (configuration: exit 2,
 * nothing sent), `outage` for everything else that kept payouts from the service (DNS,
 * refused, reset, TLS handshake, stall, an unreadable, invalid or oversized answer, a 429
 * longer than --max-outage: exit 6, results written), undefined for any other error.
 */
export function serviceFailureOf(error: unknown): 'certificate' | 'outage' | undefined {
  if (error instanceof NetworkError)
    return CERTIFICATE_REFUSED.test(error.errorCode) ? 'certificate' : 'outage';
  if (error instanceof RateLimitError || error instanceof ServiceUnavailableError) return 'outage';
  // The service understood the request and refused it in words (400, 409, 422): not an outage.
  if (error instanceof ServiceError) return REFUSALS.has(error.status) ? undefined : 'outage';
  return undefined;
}
