import { createDecipheriv, createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import { call, expectErrorBody, sandbox, token } from './helpers.js';

/** An independent decryption of contract.ts EncryptedWebhookSecret. */
function decrypt(ciphertext: string, clientSecret: string): string {
  const bytes = Buffer.from(ciphertext, 'base64');
  const key = createHash('sha256').update(clientSecret).digest();
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}

describe('integrators and the webhook secret', () => {
  it('GET /v1/integrators/me returns the caller without its secret', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'GET', PATHS.integratorMe, { token: await token(sb) });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: sb.integratorIds.primary,
      name: 'Sandbox Integrator',
      email: 'integrator@example.com',
      webhookUrl: null,
      termsAcceptedAt: null,
      createdAt: expect.stringMatching(/\+00:00$/),
    });
  });

  it('sets, reads and clears the webhook URL; https anywhere, http only to loopback', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const path = PATHS.webhooks(sb.integratorIds.primary);
    expect((await call(sb, 'GET', path, { token: accessToken })).body).toEqual({ url: null });
    for (const url of [
      'https://hooks.example.com/payouts',
      'http://127.0.0.1:9999/hooks',
      'http://localhost/x',
      'http://[::1]:8080/',
    ]) {
      const set = await call(sb, 'PATCH', path, { token: accessToken, body: { url } });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ url });
      expect((await call(sb, 'GET', path, { token: accessToken })).body).toEqual({ url });
    }
    for (const url of ['http://hooks.example.com/payouts', 'ftp://127.0.0.1/x', 'not a url']) {
      const refused = await call(sb, 'PATCH', path, { token: accessToken, body: { url } });
      expectErrorBody(refused, 400, path);
      expect(refused.body.message).toMatch(/^url must/);
    }
    expectErrorBody(await call(sb, 'PATCH', path, { token: accessToken, body: {} }), 400, path);
    expectErrorBody(await call(sb, 'PATCH', path, { token: accessToken, body: { url: 42 } }), 400, path);
    expectErrorBody(await call(sb, 'PATCH', path, { token: accessToken, body: '{oops' }), 400, path);
    const cleared = await call(sb, 'PATCH', path, { token: accessToken, body: { url: null } });
    expect(cleared.body).toEqual({ url: null });
    expect((await call(sb, 'GET', PATHS.integratorMe, { token: accessToken })).body.webhookUrl).toBeNull();
  });

  it('returns the webhook secret encrypted with AES-256-GCM under SHA-256(client_secret)', async () => {
    const sb = await sandbox({ webhookSecret: 'known-secret' });
    const accessToken = await token(sb);
    const answer = await call(sb, 'GET', PATHS.webhookSecret(sb.integratorIds.primary), {
      token: accessToken,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.algorithm).toBe('AES-256-GCM');
    expect(answer.body.keyDerivation).toBe('SHA-256(client_secret)');
    expect(decrypt(answer.body.ciphertext, 'sandbox-secret')).toBe('known-secret');
  });

  it('regenerates the webhook secret (200 with the new one), and retrieval follows', async () => {
    const sb = await sandbox({ webhookSecret: 'known-secret' });
    const accessToken = await token(sb);
    const rotated = await call(sb, 'POST', PATHS.updateWebhookSecret(sb.integratorIds.primary), {
      token: accessToken,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhookSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const fetched = await call(sb, 'GET', PATHS.webhookSecret(sb.integratorIds.primary), {
      token: accessToken,
    });
    expect(decrypt(fetched.body.ciphertext, 'sandbox-secret')).toBe(rotated.body.webhookSecret);
  });

  it('accepts terms and conditions with 204 and no body', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const answer = await call(sb, 'POST', PATHS.termsAndConditions(sb.integratorIds.primary), {
      token: accessToken,
    });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    const me = await call(sb, 'GET', PATHS.integratorMe, { token: accessToken });
    expect(me.body.termsAcceptedAt).toMatch(/\+00:00$/);
  });
});
