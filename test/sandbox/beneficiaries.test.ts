import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import { validateBeneficiary } from '../../src/rows/beneficiary.js';
import { call, expectErrorBody, sandbox, token } from './helpers.js';

describe('beneficiaries', () => {
  it('creates (201), reads (200), deletes (204) and then no longer finds (404) a beneficiary', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    const body = { type: 'BUSINESS', name: 'Acme SA de CV', email: 'pay@acme.mx', country: 'MX' };
    const created = await call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ...body,
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      integratorId: sb.integratorIds.primary,
      createdAt: expect.stringMatching(/\+00:00$/),
    });
    const path = PATHS.beneficiary(created.body.id);
    const read = await call(sb, 'GET', path, { token: accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const deleted = await call(sb, 'DELETE', path, { token: accessToken });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectErrorBody(await call(sb, 'GET', path, { token: accessToken }), 404, path);
    expectErrorBody(await call(sb, 'DELETE', path, { token: accessToken }), 404, path);
    expect(sb.ledger().beneficiaries[0]?.deletedAt).toMatch(/\+00:00$/);
  });

  it('answers 400 with every message of src/rows/beneficiary.ts (one source of truth)', async () => {
    const sb = await sandbox();
    const body = { type: 'ROBOT', email: 'not-an-email', country: 'Mexico' };
    const answer = await call(sb, 'POST', PATHS.beneficiaries, { token: await token(sb), body });
    expectErrorBody(answer, 400, PATHS.beneficiaries);
    const expected = validateBeneficiary(body).map((issue) => issue.message);
    expect(expected.length).toBe(4);
    expect(answer.body.errors).toEqual(expected);
    expect(answer.body.message).toBe(expected.join('; '));
  });

  it('answers 400 for a body that is not a JSON object', async () => {
    const sb = await sandbox();
    const accessToken = await token(sb);
    for (const body of ['[1]', 'nope', '']) {
      const answer = await call(sb, 'POST', PATHS.beneficiaries, { token: accessToken, body });
      expectErrorBody(answer, 400, PATHS.beneficiaries);
    }
  });
});
