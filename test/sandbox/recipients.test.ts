import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/api/contract.js';
import { RAILS, type Rail } from '../../src/columns/rails.js';
import { address, body, details, type Json } from '../rows/fixtures.js';
import { call, expectErrorBody, recipientBody, sandbox, token } from './helpers.js';

async function withBeneficiary() {
  const sb = await sandbox();
  const accessToken = await token(sb);
  const beneficiary = await call(sb, 'POST', PATHS.beneficiaries, {
    token: accessToken,
    body: { type: 'INDIVIDUAL', name: 'Ana Lopez', country: 'US' },
  });
  return { sb, accessToken, beneficiaryId: beneficiary.body.id as string };
}

/** A rail's valid body (test/rows/fixtures.ts) with fields of its details set or, when undefined, removed. */
function withDetails(rail: Rail, change: Json): Json {
  return details(rail, (d) => {
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined) delete d[key];
      else d[key] = value;
    }
  });
}

/** The rail's valid body with top-level fields set or, when undefined, removed. */
function withFields(rail: Rail, change: Json): Json {
  return body(rail, (request) => {
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined) delete request[key];
      else request[key] = value;
    }
  });
}

describe('recipients: create, read, update', () => {
  it.each(RAILS)('creates a %s recipient with 201 and reads it with 200', async (rail) => {
    const { sb, accessToken, beneficiaryId } = await withBeneficiary();
    const body = { ...recipientBody(rail, beneficiaryId), nickname: 'Ana (main)', unknownField: 'dropped' };
    const created = await call(sb, 'POST', PATHS.recipients, { token: accessToken, body });
    expect(created.status).toBe(201);
    const { unknownField: _dropped, ...kept } = body;
    expect(created.body).toEqual({
      ...kept,
      id: expect.any(String),
      integratorId: sb.integratorIds.primary,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const read = await call(sb, 'GET', PATHS.recipient(created.body.id), { token: accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('creates an integrator-level recipient without a beneficiary', async () => {
    const sb = await sandbox();
    const body = { ...recipientBody('RTP', ''), beneficiaryId: undefined, integratorLevel: true };
    const created = await call(sb, 'POST', PATHS.recipients, { token: await token(sb), body });
    expect(created.status).toBe(201);
    expect(created.body.integratorLevel).toBe(true);
  });

  it('updates a recipient with PUT (200), validated the same way', async () => {
    const { sb, accessToken, beneficiaryId } = await withBeneficiary();
    const created = await call(sb, 'POST', PATHS.recipients, {
      token: accessToken,
      body: recipientBody('ACH', beneficiaryId),
    });
    const path = PATHS.recipient(created.body.id);
    const updated = await call(sb, 'PUT', path, {
      token: accessToken,
      body: recipientBody('SPEI', beneficiaryId, 'Ana B'),
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      type: 'SPEI',
      currency: 'MXN',
      individualName: 'Ana B',
    });
    expect(updated.body.createdAt).toBe(created.body.createdAt);
    const invalid = await call(sb, 'PUT', path, {
      token: accessToken,
      body: { ...withDetails('SPEI', { clabe: '1' }), beneficiaryId },
    });
    expectErrorBody(invalid, 400, path);
    expect(invalid.body.errors).toEqual(['clabe must be 18 digits long']);
    const unknown = PATHS.recipient('nope');
    expectErrorBody(
      await call(sb, 'PUT', unknown, { token: accessToken, body: recipientBody('ACH', beneficiaryId) }),
      404,
      unknown,
    );
  });

  it('answers 404 for an unknown or deleted beneficiary', async () => {
    const { sb, accessToken, beneficiaryId } = await withBeneficiary();
    const unknown = await call(sb, 'POST', PATHS.recipients, {
      token: accessToken,
      body: recipientBody('RTP', 'nope'),
    });
    expectErrorBody(unknown, 404, PATHS.recipients);
    expect(unknown.body.message).toBe('Beneficiary nope not found');
    await call(sb, 'DELETE', PATHS.beneficiary(beneficiaryId), { token: accessToken });
    const deleted = await call(sb, 'POST', PATHS.recipients, {
      token: accessToken,
      body: recipientBody('RTP', beneficiaryId),
    });
    expectErrorBody(deleted, 404, PATHS.recipients);
  });
});

describe("recipients: the service's validation messages through POST /v1/recipients (400)", () => {
  // At least one message per rail plus the common and address ones; every message, one by one,
  // is tested against src/rows/validate.ts in test/rows.
  const thirdParty = { thirdPartyWithdrawal: true, documentId: '1', documentType: 'CC', email: 'a@b.co' };
  const table: Array<[string, Json, string]> = [
    [
      'no name',
      withFields('RTP', { individualName: undefined }),
      'The field recipient.individualName or recipient.businessName is required',
    ],
    [
      'both names',
      withFields('RTP', { businessName: 'Acme', countryOfIncorporation: 'US' }),
      'The field recipient.individualName or recipient.businessName is required',
    ],
    [
      'business without country',
      withFields('RTP', { individualName: undefined, businessName: 'Acme' }),
      'The field recipient.countryOfIncorporation is required when recipient.businessName is provided',
    ],
    [
      'no beneficiaryId',
      withFields('RTP', { beneficiaryId: undefined }),
      'The field recipient.beneficiaryId is required',
    ],
    ['no currency', withFields('RTP', { currency: null }), 'The field recipient.currency is required'],
    ['no type', withFields('RTP', { type: null }), 'The field recipient.type is required'],
    ['no details', withFields('RTP', { details: null }), 'The field recipient.details is required'],
    [
      'country of incorporation',
      withFields('RTP', { individualName: undefined, businessName: 'Acme', countryOfIncorporation: 'USA' }),
      'The field recipient.countryOfIncorporation should follow ISO 3166-2',
    ],
    ['nickname length', withFields('RTP', { nickname: 'n'.repeat(51) }), 'recipient.nickname-max-length'],
    [
      'nickname characters',
      withFields('RTP', { nickname: 'Ana <3' }),
      'recipient.nickname-invalid-characters',
    ],
    [
      'address missing',
      withDetails('ACH', { recipientAddress: undefined }),
      'recipientAddress must be provided',
    ],
    [
      'address street1',
      address('ACH', 'recipientAddress', (a) => delete a['street1']),
      'recipientAddress.street1 must be provided',
    ],
    [
      'address city',
      address('WIRE', 'bankAddress', (a) => delete a['city']),
      'bankAddress.city must be provided',
    ],
    [
      'address state',
      address('ACH', 'recipientAddress', (a) => (a['state'] = 'Texas')),
      'recipientAddress.state must be provided and must be 1-3 letter ISO state code',
    ],
    [
      'address postalCode',
      address('SWIFT', 'recipientAddress', (a) => delete a['postalCode']),
      'recipientAddress.postalCode must be provided',
    ],
    [
      'address country',
      address('ACH', 'recipientAddress', (a) => (a['country'] = 'USA')),
      'recipientAddress.country must be provided and must be 2-letter ISO country code',
    ],
    [
      'ACH account type',
      withDetails('ACH', { accountType: 'Current' }),
      'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
    ],
    ['ACH bank country', withDetails('ACH', { bankCountry: undefined }), 'bankCountry must be provided'],
    ['ACH routing invalid', withDetails('ACH', { routingNumber: '123456789' }), 'routingNumber is invalid'],
    [
      'WIRE routing length',
      withDetails('WIRE', { routingNumber: '02100002' }),
      'routingNumber must be 9 characters long',
    ],
    ['WIRE bank name', withDetails('WIRE', { bankName: '' }), 'bankName must be provided'],
    [
      'SWIFT code format',
      withDetails('SWIFT', { swiftCode: 'deutdeff' }),
      'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
    ],
    [
      'SWIFT bank in the US',
      address('SWIFT', 'bankAddress', (a) => (a['country'] = 'US')),
      'bankAddress.country should be WIRE not SWIFT when country is US',
    ],
    [
      'SWIFT account or iban',
      withDetails('SWIFT', { iban: undefined }),
      'accountNumber or iban must be provided',
    ],
    [
      'SWIFT iban format',
      withDetails('SWIFT', { iban: 'de89' }),
      'iban must matches the regex: ^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
    ],
    ['SWIFT iban invalid', withDetails('SWIFT', { iban: 'DE00370400440532013000' }), 'iban is invalid'],
    [
      'RTP account number',
      withDetails('RTP', { accountNumber: undefined }),
      'accountNumber must be provided',
    ],
    [
      'RTP routing number',
      withDetails('RTP', { routingNumber: undefined }),
      'routingNumber must be provided',
    ],
    [
      'SPEI clabe checksum',
      withDetails('SPEI', { clabe: '032180000118359710' }),
      'clabe has an invalid checksum',
    ],
    ['SPEI receiver name', withDetails('SPEI', { receiverName: undefined }), 'receiverName must be provided'],
    ['SPEI bank code', withDetails('SPEI', { bankCode: undefined }), 'bankCode must be provided'],
    ['PIX pix key', withDetails('PIX', { pixKey: undefined }), 'pixKey must be provided'],
    [
      'PIX document length',
      withDetails('PIX', { documentNumber: '123.456.789' }),
      'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
    ],
    [
      'COP account type',
      withDetails('COP', { accountType: 'Checking' }),
      'accountType must be CHECKING or SAVINGS',
    ],
    ['COP bank account', withDetails('COP', { bankAccount: undefined }), 'bankAccount must be provided'],
    [
      'COP third party documentId',
      withDetails('COP', { ...thirdParty, documentId: undefined }),
      'documentId must be provided for third party withdrawals',
    ],
    [
      'COP third party documentType',
      withDetails('COP', { ...thirdParty, documentType: undefined }),
      'documentType must be provided for third party withdrawals',
    ],
    [
      'COP third party email',
      withDetails('COP', { ...thirdParty, email: undefined }),
      'email must be provided for third party withdrawals',
    ],
  ];

  it.each(table)('%s', async (_name, request, message) => {
    const sb = await sandbox();
    const answer = await call(sb, 'POST', PATHS.recipients, { token: await token(sb), body: request });
    expectErrorBody(answer, 400, PATHS.recipients);
    expect(answer.body.errors).toContain(message);
    expect(answer.body.message.split('; ')).toEqual(answer.body.errors);
  });

  it('gives every message at once, joined with "; " in message and one per item in errors', async () => {
    const sb = await sandbox();
    const answer = await call(sb, 'POST', PATHS.recipients, {
      token: await token(sb),
      body: { type: 'SPEI', currency: 'MXN', details: {} },
    });
    expectErrorBody(answer, 400, PATHS.recipients);
    expect(answer.body.errors).toEqual([
      'The field recipient.individualName or recipient.businessName is required',
      'The field recipient.beneficiaryId is required',
      'clabe must be provided',
      'bankCode must be provided',
      'receiverName must be provided',
    ]);
    expect(answer.body.message).toBe(answer.body.errors.join('; '));
  });

  it('validates before it looks the beneficiary up (400, not 404)', async () => {
    const sb = await sandbox();
    const request = withFields('RTP', { beneficiaryId: 'unknown', details: { routingNumber: '021000021' } });
    const answer = await call(sb, 'POST', PATHS.recipients, { token: await token(sb), body: request });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual(['accountNumber must be provided']);
  });
});
