import { describe, expect, it } from 'vitest';
import { PATHS, TOKEN_PATH } from '../../src/api/contract.js';
import { CLIENT, call, expectErrorBody, OTHER, PRIMARY, sandbox } from './helpers.js';

const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

function decodePayload(jwt: string): Record<string, unknown> {
  const [, payload] = jwt.split('.');
  return JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
}

describe('token endpoint', () => {
  it('issues the short form for a form-urlencoded password grant', async () => {
    const sb = await sandbox();
    const answer = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', ...CLIENT, ...PRIMARY }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(answer.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
    const [header] = answer.body.access_token.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodePayload(answer.body.access_token);
    expect(claims['sub']).toBe(sb.integratorIds.primary);
    expect((claims['exp'] as number) - (claims['iat'] as number)).toBe(3600);
  });

  it('accepts a JSON body and gives the long form when configured', async () => {
    const sb = await sandbox({ tokenResponse: 'long' });
    const answer = await call(sb, 'POST', TOKEN_PATH, {
      body: { grant_type: 'password', ...CLIENT, ...PRIMARY },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 86400,
      refresh_expires_in: 1800,
      'not-before-policy': 0,
      scope: 'email openid profile',
    });
    expect(typeof answer.body.session_state).toBe('string');
    expect(decodePayload(answer.body.refresh_token)['typ']).toBe('Refresh');
  });

  it('gives the long form the lifetime the service shows for it, 86400 s, unless --token-ttl says otherwise', async () => {
    const long = await sandbox({ tokenResponse: 'long' });
    const answer = await call(
      long,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', ...CLIENT, ...PRIMARY }),
    );
    expect(answer.body).toMatchObject({ expires_in: 86400, refresh_expires_in: 1800 });
    const claims = decodePayload(answer.body.access_token);
    expect(Number(claims['exp']) - Number(claims['iat'])).toBe(86400);
    const short = await sandbox({ tokenResponse: 'long', tokenTtl: 600 });
    const shorter = await call(
      short,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', ...CLIENT, ...PRIMARY }),
    );
    expect(shorter.body).toMatchObject({ expires_in: 600 });
  });

  it('exchanges a refresh token of the long form for a new access token', async () => {
    const sb = await sandbox({ tokenResponse: 'long' });
    const first = await call(sb, 'POST', TOKEN_PATH, form({ grant_type: 'password', ...CLIENT, ...PRIMARY }));
    const refreshed = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'refresh_token', ...CLIENT, refresh_token: first.body.refresh_token }),
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.session_state).toBe(first.body.session_state);
    const me = await call(sb, 'GET', PATHS.integratorMe, { token: refreshed.body.access_token });
    expect(me.status).toBe(200);
    const bad = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'refresh_token', ...CLIENT, refresh_token: 'x.y.z' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid refresh token' });
  });

  it('gives each user the token of its own integrator', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'POST', TOKEN_PATH, form({ grant_type: 'password', ...CLIENT, ...OTHER }));
    expect(decodePayload(answer.body.access_token)['sub']).toBe(sb.integratorIds.other);
  });

  it('answers 401 for a wrong client or wrong user credentials, with an OAuth error body', async () => {
    const sb = await sandbox();
    const wrongClient = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', client_id: 'sandbox-client', client_secret: 'nope', ...PRIMARY }),
    );
    expect(wrongClient.status).toBe(401);
    expect(wrongClient.body).toEqual({
      error: 'invalid_client',
      error_description: 'Invalid client or Invalid client credentials',
    });
    const wrongUser = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', ...CLIENT, username: PRIMARY.username, password: 'wrong' }),
    );
    expect(wrongUser.status).toBe(401);
    expect(wrongUser.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid user credentials' });
    expect(wrongUser.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers 400 for a wrong or missing grant_type and missing parameters', async () => {
    const sb = await sandbox();
    const wrongGrant = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'client_credentials', ...CLIENT }),
    );
    expect(wrongGrant.status).toBe(400);
    expect(wrongGrant.body.error).toBe('unsupported_grant_type');
    const noGrant = await call(sb, 'POST', TOKEN_PATH, form({ ...CLIENT, ...PRIMARY }));
    expect(noGrant.status).toBe(400);
    expect(noGrant.body).toEqual({
      error: 'invalid_request',
      error_description: 'Missing parameter: grant_type',
    });
    const noPassword = await call(
      sb,
      'POST',
      TOKEN_PATH,
      form({ grant_type: 'password', ...CLIENT, username: 'x' }),
    );
    expect(noPassword.status).toBe(400);
    expect(noPassword.body.error_description).toBe('Missing parameter: password');
    const badJson = await call(sb, 'POST', TOKEN_PATH, {
      body: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toBe('invalid_request');
  });

  it('refuses other methods with 405 and a 2.5 body', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'GET', TOKEN_PATH);
    expectErrorBody(answer, 405, TOKEN_PATH);
    expect(answer.headers.get('allow')).toBe('POST');
  });
});
