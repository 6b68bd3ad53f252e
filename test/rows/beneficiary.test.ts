import { describe, expect, it } from 'vitest';
import { validateBeneficiary } from '../../src/rows/beneficiary.js';

const valid = { type: 'INDIVIDUAL', name: 'Ada Lovelace', email: 'ada@example.com', country: 'GB' };

describe('validateBeneficiary', () => {
  it('accepts a complete beneficiary, and one without e-mail', () => {
    expect(validateBeneficiary(valid)).toEqual([]);
    expect(validateBeneficiary({ type: 'BUSINESS', name: 'Acme', country: 'US' })).toEqual([]);
    expect(validateBeneficiary({ ...valid, email: null })).toEqual([]);
    expect(validateBeneficiary({ ...valid, email: '' })).toEqual([]);
  });

  it.each([
    [
      { type: undefined },
      'type',
      'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS',
    ],
    [
      { type: 'individual' },
      'type',
      'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS',
    ],
    [{ type: 'PERSON' }, 'type', 'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS'],
    [{ name: '  ' }, 'name', 'beneficiary.name must be provided'],
    [{ name: 42 }, 'name', 'beneficiary.name must be provided'],
    [{ email: 'ada' }, 'email', 'beneficiary.email must be a valid e-mail address'],
    [{ email: 'ada@example' }, 'email', 'beneficiary.email must be a valid e-mail address'],
    [{ email: 'ada @example.com' }, 'email', 'beneficiary.email must be a valid e-mail address'],
    [{ email: 'a@b@example.com' }, 'email', 'beneficiary.email must be a valid e-mail address'],
    [{ email: 7 }, 'email', 'beneficiary.email must be a valid e-mail address'],
    [
      { country: 'GBR' },
      'country',
      'beneficiary.country must be provided and must be 2-letter ISO country code',
    ],
    [
      { country: 'gb' },
      'country',
      'beneficiary.country must be provided and must be 2-letter ISO country code',
    ],
    [
      { country: 'XX' },
      'country',
      'beneficiary.country must be provided and must be 2-letter ISO country code',
    ],
    [
      { country: undefined },
      'country',
      'beneficiary.country must be provided and must be 2-letter ISO country code',
    ],
  ])('%j → %s: %s', (change, path, message) => {
    expect(validateBeneficiary({ ...valid, ...change })).toEqual([{ path, message }]);
  });

  it('returns every message for a body that is not an object, without throwing', () => {
    for (const junk of [undefined, null, 'x', 3, [], [valid]]) {
      expect(validateBeneficiary(junk)).toEqual([
        {
          path: 'type',
          message: 'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS',
        },
        { path: 'name', message: 'beneficiary.name must be provided' },
        {
          path: 'country',
          message: 'beneficiary.country must be provided and must be 2-letter ISO country code',
        },
      ]);
    }
  });
});
