import { randomBytes, randomUUID } from 'node:crypto';
import type { TokenResponse } from '../api/contract.js';
import type { Clock } from '../clock.js';
import { HttpError } from './errors.js';
import type { TokenResponseForm } from './flags.js';
import { type JwtClaims, signJwt, verifyJwt } from './jwt.js';
import type { IntegratorRecord, SandboxState } from './state.js';
import { isoWithOffset } from './time.js';

/** The long form's refresh lifetime (docs/service.md "Signing in and tokens"). */
export const REFRESH_TTL_SECONDS = 1800;

/** The scopes of the short and the long response form (docs/service.md "Signing in and tokens"). */
const SCOPES: Record<TokenResponseForm, string> = { short: 'read write', long: 'email openid profile' };

/** Verified tokens kept; the cache starts over when it grows past this. */
const CACHE_LIMIT = 50_000;

export interface TokenServiceOptions {
  tokenTtl: number;
  form: TokenResponseForm;
  clock: Clock;
}

interface CachedToken {
  integratorId: string;
  expiresAtMs: number;
}

const WWW_AUTHENTICATE_MISSING = 'Bearer realm="service"';
const WWW_AUTHENTICATE_INVALID = 'Bearer realm="service", error="invalid_token"';

/**
 * Issues and checks the sandbox's HS256 JWTs. The signing key is random per sandbox, so a
 * token of another sandbox is badly signed. A verified access token is cached, so the hot
 * path costs one Map lookup; its expiry is checked on every use.
 */
export class TokenService {
  /** `iss` of the tokens; set once the sandbox knows its URL. */
  issuer = 'sandbox';
  private readonly key = randomBytes(32);
  private readonly cache = new Map<string, CachedToken>();

  constructor(
    private readonly state: SandboxState,
    private readonly options: TokenServiceOptions,
  ) {}

  /** The token response for an integrator, in the configured form. */
  issue(integrator: IntegratorRecord, clientId: string, sessionId: string = randomUUID()): TokenResponse {
    const now = Math.floor(this.options.clock.now() / 1000);
    const scope = SCOPES[this.options.form];
    const claims = (typ: JwtClaims['typ'], ttl: number): JwtClaims => ({
      iss: this.issuer,
      sub: integrator.id,
      azp: clientId,
      typ,
      iat: now,
      exp: now + ttl,
      jti: randomUUID(),
      sid: sessionId,
      scope,
      email: integrator.email,
      preferred_username: integrator.email,
    });
    const accessToken = signJwt(claims('Bearer', this.options.tokenTtl), this.key);
    if (this.options.form === 'short') {
      return { access_token: accessToken, token_type: 'Bearer', expires_in: this.options.tokenTtl, scope };
    }
    return {
      access_token: accessToken,
      expires_in: this.options.tokenTtl,
      refresh_expires_in: REFRESH_TTL_SECONDS,
      refresh_token: signJwt(claims('Refresh', REFRESH_TTL_SECONDS), this.key),
      token_type: 'Bearer',
      'not-before-policy': 0,
      session_state: sessionId,
      scope,
    };
  }

  /** A new token response for a valid, unexpired refresh token of this client; undefined otherwise. */
  refresh(refreshToken: string, clientId: string): TokenResponse | undefined {
    const check = verifyJwt(refreshToken, this.key);
    if (!check.ok) return undefined;
    const { claims } = check;
    if (
      claims.typ !== 'Refresh' ||
      claims.azp !== clientId ||
      claims.exp * 1000 <= this.options.clock.now()
    ) {
      return undefined;
    }
    const integrator = this.state.integrators.get(claims.sub);
    return integrator === undefined ? undefined : this.issue(integrator, clientId, claims.sid);
  }

  /**
   * The integrator of the bearer token in an Authorization header; 401 otherwise (docs/service.md
   * "Signing in and tokens").
   */
  authenticate(authorization: string | undefined): IntegratorRecord {
    if (authorization === undefined || authorization === '') {
      throw unauthorized(
        'Full authentication is required: send the header Authorization: Bearer <ACCESS_TOKEN>',
        WWW_AUTHENTICATE_MISSING,
      );
    }
    const space = authorization.indexOf(' ');
    if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer') {
      throw unauthorized('The Authorization header must be Bearer <ACCESS_TOKEN>', WWW_AUTHENTICATE_INVALID);
    }
    const token = authorization.slice(space + 1).trim();
    const now = this.options.clock.now();
    let cached = this.cache.get(token);
    if (cached === undefined) {
      cached = this.verify(token);
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(token, cached);
    }
    if (cached.expiresAtMs <= now) {
      throw unauthorized(
        `The access token expired at ${isoWithOffset(cached.expiresAtMs)} - request a new token`,
        WWW_AUTHENTICATE_INVALID,
      );
    }
    const integrator = this.state.integrators.get(cached.integratorId);
    if (integrator === undefined)
      throw unauthorized('The access token names no integrator', WWW_AUTHENTICATE_INVALID);
    return integrator;
  }

  private verify(token: string): CachedToken {
    const check = verifyJwt(token, this.key);
    if (!check.ok) {
      throw unauthorized(
        check.reason === 'signature'
          ? 'The access token signature is invalid'
          : 'The access token is malformed: expected a JWT',
        WWW_AUTHENTICATE_INVALID,
      );
    }
    if (check.claims.typ !== 'Bearer') {
      throw unauthorized('A refresh token cannot be used as an access token', WWW_AUTHENTICATE_INVALID);
    }
    return { integratorId: check.claims.sub, expiresAtMs: check.claims.exp * 1000 };
  }
}

function unauthorized(message: string, challenge: string): HttpError {
  return new HttpError(401, message, { headers: { 'WWW-Authenticate': challenge } });
}
