import { describe, expect, it } from 'vitest';
import { normaliseName, payeeOf } from '../../src/rows/payee.js';
import type { BeneficiaryRef, PayoutRow, RecipientRef } from '../../src/rows/types.js';

function payout(beneficiary: BeneficiaryRef, recipient: RecipientRef): PayoutRow {
  return { rowNumber: 2, reference: 'INV-1', beneficiary, recipient, issues: [] };
}

const newBeneficiary = (name: string, email?: string, country = 'US'): BeneficiaryRef => ({
  kind: 'new',
  key: 'k',
  request: { type: 'INDIVIDUAL', name, country, ...(email === undefined ? {} : { email }) },
});
const newRecipient = (fields: Record<string, unknown> = {}): RecipientRef => ({
  kind: 'new',
  key: 'r',
  request: { individualName: 'Ada Lovelace', details: { accountNumber: '000123456789' }, ...fields },
});

describe('payeeOf: who a payout pays, without its bank details', () => {
  it.each([
    ['a beneficiaryId given', payout({ kind: 'existing', id: 'ben_9' }, newRecipient()), 'beneficiary:ben_9'],
    [
      'a new beneficiary with an e-mail',
      payout(newBeneficiary('Ada Lovelace', ' Ada@Example.com '), newRecipient()),
      'name:ada lovelace\nemail:ada@example.com',
    ],
    [
      'a new beneficiary without an e-mail: the country',
      payout(newBeneficiary('Ada Lovelace', undefined, 'gb'), newRecipient()),
      'name:ada lovelace\ncountry:GB',
    ],
    [
      'accents, case, punctuation and spaces do not make another payee',
      payout(newBeneficiary('  JOSÉ  Pérez-Ruiz ', 'jose@example.com'), newRecipient()),
      'name:jose perez ruiz\nemail:jose@example.com',
    ],
    [
      'an integrator-level recipient: its name and e-mail',
      payout({ kind: 'integrator' }, newRecipient({ details: { email: 'ADA@example.com' } })),
      'name:ada lovelace\nemail:ada@example.com',
    ],
    [
      'an integrator-level business: its name and country of incorporation',
      payout(
        { kind: 'integrator' },
        newRecipient({ individualName: undefined, businessName: 'Acme, Inc.', countryOfIncorporation: 'MX' }),
      ),
      'name:acme inc\ncountry:MX',
    ],
    [
      'an integrator-level recipient without an e-mail: its address country',
      payout({ kind: 'integrator' }, newRecipient({ details: { recipientAddress: { country: 'BR' } } })),
      'name:ada lovelace\ncountry:BR',
    ],
    [
      'an existing recipient alone',
      payout({ kind: 'integrator' }, { kind: 'existing', id: 'rcp_4' }),
      'recipient:rcp_4',
    ],
  ])('%s', (_, row, key) => {
    expect(payeeOf(row)?.key).toBe(key);
  });

  it('bank details do not change who the payee is', () => {
    const a = payout(newBeneficiary('Ada Lovelace', 'ada@example.com'), newRecipient());
    const b = payout(
      newBeneficiary('Ada Lovelace', 'ada@example.com'),
      newRecipient({ details: { accountNumber: '999999999999', routingNumber: '011000015' } }),
    );
    expect(payeeOf(a)).toEqual(payeeOf(b));
  });

  it('names people as they were written, and nobody when the row names nobody', () => {
    expect(payeeOf(payout(newBeneficiary(' Ada Lovelace ', 'a@b.c'), newRecipient()))?.name).toBe(
      'Ada Lovelace',
    );
    expect(payeeOf(payout({ kind: 'missing' }, newRecipient({ individualName: '' })))).toBeUndefined();
    expect(payeeOf(payout(newBeneficiary('  ...  '), newRecipient()))).toBeUndefined();
  });

  it('normaliseName folds what people vary', () => {
    expect(normaliseName('Zoë   O’Brien')).toBe('zoe o brien');
    expect(normaliseName('MÜLLER GmbH & Co. KG')).toBe('muller gmbh co kg');
  });

  it.each([
    ['Ana Lopez 2', 'ana lopez 2'],
    [' Ana Lopez', 'ana lopez'],
    ['Ana Lopez ', 'ana lopez'],
    ['Ana  Lopez', 'ana lopez'],
    ['ANA-LOPEZ', 'ana lopez'],
    ['Ana\tLopez', 'ana lopez'],
    ['', ''],
    ['  ', ''],
  ])('normaliseName(%j) is %j, spaced words or not', (name, expected) => {
    expect(normaliseName(name)).toBe(expected);
  });
});
