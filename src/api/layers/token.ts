/**
 * The token layer: a request that needs one carries the bearer token (token.ts), and a 401 gets
 * one new token and one more pass (docs/service.md "Signing in and tokens": a 401 means the token
 * is missing, invalid or expired). A token that cannot be had is this request's failure before
 * sending: a connection failure on the way to the identity endpoint is "not sent", so that the
 * run never marks a transaction `unknown` that never left.
 */
import {
  AuthError,
  NetworkError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
} from '../../errors.js';
import type { CircuitBreaker } from '../breaker.js';
import { HEADERS } from '../contract.js';
import { type ApiLogger, type Call, header, type Layer, type TokenSource, waitFor } from '../http.js';

export interface TokenSettings {
  tokens: TokenSource;
  /** Told to give up when the identity endpoint answers but issues no token (breaker.ts). */
  breaker: CircuitBreaker | undefined;
  logger: ApiLogger | undefined;
}

/** The bearer token of each attempt; one re-authentication on a 401. */
export function tokenLayer(settings: TokenSettings): Layer {
  const { tokens, logger } = settings;
  return (next) => async (call) => {
    if (!call.options.auth) return next(call);
    const token = await tokenFor(call, settings);
    call.token = token;
    const attempt = await next(call);
    if (attempt.kind !== 'response' || attempt.status !== 401) return attempt;
    const { method, path } = call.options;
    const requestId = header(attempt.headers, HEADERS.requestId);
    if (call.reauthenticated) {
      throw new AuthError(
        `${method} ${path} answered 401 even with a fresh token: the service refuses these credentials - check that PAYOUTS_CLIENT_ID and PAYOUTS_USERNAME belong to this environment`,
        { status: 401, requestId },
      );
    }
    call.reauthenticated = true;
    tokens.invalidate(token);
    logger?.debug({ method, path, requestId }, 'token refused - re-authenticating');
    attempt.again = true;
    return attempt;
  };
}

/** The token, or this request's error for not having one. */
async function tokenFor(call: Call, settings: TokenSettings): Promise<string> {
  const { method, path } = call.options;
  try {
    return await waitFor(call, () => settings.tokens.getToken(call.waits));
  } catch (err) {
    if (settings.breaker && (err instanceof ServiceError || err instanceof RateLimitError)) {
      // The identity endpoint answered, but no token came of it (an unreadable answer, one
      // that expires at once, a 5xx past its retries): no request of this run can be sent.
      const reason = `the identity endpoint could not issue a token (${err.message}) - run again later to resume`;
      settings.breaker.giveUp(reason);
      throw new ServiceUnavailableError(`${method} ${path} was not sent: ${reason}`, {
        inDoubt: call.inDoubt,
        reason,
        cause: err,
      });
    }
    if (!(err instanceof NetworkError)) throw err;
    throw new NetworkError(`${method} ${path} was not sent: no token (${err.message})`, {
      method,
      path,
      attempts: 0,
      errorCode: err.errorCode,
      mayHaveTakenEffect: false,
      inDoubt: call.inDoubt,
      cause: err,
    });
  }
}
