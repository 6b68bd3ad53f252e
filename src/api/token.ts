/**
 * Bearer tokens by the password grant (docs/service.md "Signing in and tokens"). One token
 * request in flight however many workers wait (single flight), refreshed before it expires,
 * dropped on a 401 so the token layer can re-authenticate once. Credentials never appear in an
 * error or a log: the token request's body is built here and handed to the request path, which never
 * reports bodies.
 */

import { type Clock, systemClock } from '../clock.js';
import { AuthError, ConfigError, ServiceError } from '../errors.js';
import { TOKEN_PATH, TokenResponseSchema } from './contract.js';
import { type ApiLogger, type ApiResponse, parseBody, type Requester, type TokenSource } from './http.js';

/** The four credentials of the password grant. */
export interface Credentials {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
}

/** Where each credential comes from, so messages name what to check. */
const CREDENTIAL_SOURCES: Record<keyof Credentials, string> = {
  clientId: 'PAYOUTS_CLIENT_ID',
  clientSecret: 'PAYOUTS_CLIENT_SECRET',
  username: 'PAYOUTS_USERNAME',
  password: 'PAYOUTS_PASSWORD',
};

/** Throws ConfigError naming every missing credential (by variable, never by value). */
export function checkCredentials(credentials: Partial<Credentials>): Credentials {
  const missing = (Object.keys(CREDENTIAL_SOURCES) as (keyof Credentials)[]).filter((k) => !credentials[k]);
  if (missing.length > 0) {
    throw new ConfigError(
      `missing credentials: set ${missing.map((k) => CREDENTIAL_SOURCES[k]).join(', ')} (dashboard Settings > API Credentials)`,
    );
  }
  return credentials as Credentials;
}

export interface TokenManagerOptions {
  /** The client of {auth_url} (client.ts `HttpClient`). */
  http: Requester;
  credentials: Credentials;
  clock?: Clock;
  logger?: ApiLogger;
  /** Refresh this long before expiry at most; for short lifetimes, 20% of it instead. */
  refreshMarginMs?: number;
}

interface CurrentToken {
  value: string;
  /** Past this, a new token is fetched before use. */
  refreshAt: number;
  /** Past this, the token is no good even as a fallback. */
  expiresAt: number;
}

const DEFAULT_REFRESH_MARGIN_MS = 60_000;

/** Hands out bearer tokens; see the module comment. */
export class TokenManager implements TokenSource {
  private current: CurrentToken | undefined;
  private inflight: Promise<CurrentToken> | undefined;
  private readonly http: Requester;
  private readonly credentials: Credentials;
  private readonly clock: Clock;
  private readonly logger: ApiLogger | undefined;
  private readonly refreshMarginMs: number;

  constructor(options: TokenManagerOptions) {
    this.http = options.http;
    this.credentials = checkCredentials(options.credentials);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.refreshMarginMs = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  }

  /** A token valid for a while yet; fetches one (once, for all waiting callers) when needed. */
  async getToken(signal?: AbortSignal): Promise<string> {
    const now = this.clock.now();
    const current = this.current;
    if (current && now < current.refreshAt) return current.value;
    try {
      return (await abortable(this.fetchShared(), signal)).value;
    } catch (err) {
      // A refresh that failed for a passing reason must not stop work while the old token lives.
      if (current && this.current === current && now < current.expiresAt && !(err instanceof AuthError)) {
        this.logger?.warn(
          { err: describe(err) },
          'token refresh failed - using the current token until it expires',
        );
        return current.value;
      }
      throw err;
    }
  }

  /** Forgets `token` if it is still the current one, so the next caller fetches a new one. */
  invalidate(token: string): void {
    if (this.current?.value === token) this.current = undefined;
  }

  private fetchShared(): Promise<CurrentToken> {
    // The shared request is not tied to any caller's signal: one caller giving up must not
    // fail the others waiting on it.
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchToken(): Promise<CurrentToken> {
    const startedAt = this.clock.now();
    const context = { method: 'POST' as const, path: TOKEN_PATH };
    let response: ApiResponse;
    try {
      response = await this.http.request({
        ...context,
        auth: false,
        // A second password grant is harmless: retries are safe.
        safeToRepeat: true,
        form: {
          grant_type: 'password',
          client_id: this.credentials.clientId,
          client_secret: this.credentials.clientSecret,
          username: this.credentials.username,
          password: this.credentials.password,
        },
      });
    } catch (err) {
      if (err instanceof ServiceError && [400, 401, 403].includes(err.status)) throw this.refused(err);
      throw err;
    }
    const body = parseBody(TokenResponseSchema, response, context);
    const lifetimeMs = body.expires_in * 1000;
    // Measured from when the request left: the server's clock started no earlier.
    const margin = Math.min(this.refreshMarginMs, lifetimeMs * 0.2);
    const token = {
      value: body.access_token,
      refreshAt: startedAt + lifetimeMs - margin,
      expiresAt: startedAt + lifetimeMs,
    };
    this.current = token;
    this.logger?.debug({ expiresInS: body.expires_in }, 'token obtained');
    return token;
  }

  private refused(err: ServiceError): AuthError {
    const origin = this.http.baseUrl.origin;
    // The identity endpoint's own words (e.g. "Invalid user credentials") help; they carry no secret.
    const detail =
      err.reason && err.reason !== err.serviceMessage
        ? `${err.reason}: ${err.serviceMessage}`
        : err.serviceMessage;
    // RFC 6749 5.2 codes say which pair is wrong (contract.ts TokenErrorBody).
    const which =
      err.reason === 'invalid_client'
        ? 'PAYOUTS_CLIENT_ID and PAYOUTS_CLIENT_SECRET (dashboard Settings > API Credentials > Keys and secrets)'
        : err.reason === 'invalid_grant'
          ? 'PAYOUTS_USERNAME and PAYOUTS_PASSWORD'
          : 'PAYOUTS_CLIENT_ID, PAYOUTS_CLIENT_SECRET, PAYOUTS_USERNAME and PAYOUTS_PASSWORD';
    return new AuthError(
      `the identity endpoint ${origin} refused the credentials (${err.status} ${detail}) - check ${which}, and that --auth-url is the right environment`,
      { status: err.status, requestId: err.requestId },
    );
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
