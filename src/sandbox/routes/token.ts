import { TOKEN_PATH, type TokenErrorBody } from '../../api/contract.js';
import { SANDBOX_CREDENTIALS, SANDBOX_USERS } from '../credentials.js';
import type { Reply } from '../errors.js';
import type { Route, RouteRequest, Sandbox } from '../router.js';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * The token endpoint (docs/service.md "Signing in and tokens"): the password grant, plus the
 * refresh_token grant for the long form's refresh token (assumed: the service does not show
 * that request). Errors are OAuth 2.0 bodies (RFC 6749 5.2), as an identity server answers,
 * not the service's error body.
 */
export const tokenRoutes: Route[] = [
  { method: 'POST', pattern: TOKEN_PATH, auth: false, handler: issueToken },
];

function issueToken(request: RouteRequest, sandbox: Sandbox): Reply {
  const form = parseForm(request);
  if (form === undefined) {
    return oauthError(
      400,
      'invalid_request',
      'The body must be application/x-www-form-urlencoded or a JSON object',
    );
  }
  const grantType = form.get('grant_type');
  if (grantType === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: grant_type');
  if (grantType !== 'password' && grantType !== 'refresh_token') {
    return oauthError(400, 'unsupported_grant_type', `Unsupported grant_type "${grantType}" - use password`);
  }
  const clientId = form.get('client_id');
  if (
    clientId !== SANDBOX_CREDENTIALS.clientId ||
    form.get('client_secret') !== SANDBOX_CREDENTIALS.clientSecret
  ) {
    return oauthError(401, 'invalid_client', 'Invalid client or Invalid client credentials');
  }
  if (grantType === 'refresh_token') {
    const refreshToken = form.get('refresh_token');
    if (refreshToken === undefined)
      return oauthError(400, 'invalid_request', 'Missing parameter: refresh_token');
    const response = sandbox.tokens.refresh(refreshToken, clientId);
    return response === undefined
      ? oauthError(400, 'invalid_grant', 'Invalid refresh token')
      : { status: 200, body: response, headers: NO_STORE };
  }
  const username = form.get('username');
  const password = form.get('password');
  if (username === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: username');
  if (password === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: password');
  const user = SANDBOX_USERS.find((u) => u.username === username.toLowerCase() && u.password === password);
  const integrator = user === undefined ? undefined : sandbox.state.integrators.get(user.integratorId);
  if (integrator === undefined) return oauthError(401, 'invalid_grant', 'Invalid user credentials');
  return { status: 200, body: sandbox.tokens.issue(integrator, clientId), headers: NO_STORE };
}

/** The parameters of a form-urlencoded or JSON body; undefined when it is neither. */
function parseForm(request: RouteRequest): Map<string, string> | undefined {
  const text = request.rawBody.toString('utf8');
  const contentType = request.headers['content-type']?.toLowerCase() ?? '';
  const form = new Map<string, string>();
  if (contentType.includes('json')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    for (const [key, field] of Object.entries(value)) {
      if (typeof field === 'string') form.set(key, field);
    }
    return form;
  }
  for (const [key, field] of new URLSearchParams(text)) if (!form.has(key)) form.set(key, field);
  return form;
}

function oauthError(status: number, error: TokenErrorBody['error'], description: string): Reply {
  const body: TokenErrorBody = { error, error_description: description };
  return { status, body, headers: NO_STORE };
}
