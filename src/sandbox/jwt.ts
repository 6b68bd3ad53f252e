import { createHmac, timingSafeEqual } from 'node:crypto';

/** Claims the sandbox puts in its tokens (a Keycloak-like subset). */
export interface JwtClaims {
  iss: string;
  sub: string;
  azp: string;
  typ: 'Bearer' | 'Refresh';
  iat: number;
  exp: number;
  jti: string;
  sid: string;
  scope: string;
  email: string;
  preferred_username: string;
}

export type JwtCheck = { ok: true; claims: JwtClaims } | { ok: false; reason: 'malformed' | 'signature' };

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Signs the claims as an HS256 JWT (RFC 7519) with the key. */
export function signJwt(claims: JwtClaims, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', key).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${signature}`;
}

/** Checks the form and the HS256 signature of a JWT; expiry is the caller's concern. */
export function verifyJwt(token: string, key: Buffer): JwtCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [header, payload, signature] = parts as [string, string, string];
  if (!BASE64URL.test(header) || !BASE64URL.test(payload) || !BASE64URL.test(signature)) {
    return { ok: false, reason: 'malformed' };
  }
  if (header !== HEADER && decodeJson(header)?.['alg'] !== 'HS256') return { ok: false, reason: 'malformed' };
  const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'signature' };
  const claims = decodeJson(payload);
  if (claims === undefined || typeof claims['sub'] !== 'string' || typeof claims['exp'] !== 'number') {
    return { ok: false, reason: 'malformed' };
  }
  return { ok: true, claims: claims as unknown as JwtClaims };
}

function decodeJson(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
