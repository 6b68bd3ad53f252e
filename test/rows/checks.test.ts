import { describe, expect, it } from 'vitest';
import { hasValidAbaChecksum, isValidRoutingNumber } from '../../src/rows/checks/aba.js';
import { isValidBic } from '../../src/rows/checks/bic.js';
import { clabeCheckDigit, hasValidClabeChecksum } from '../../src/rows/checks/clabe.js';
import { isValidIban } from '../../src/rows/checks/iban.js';
import { COUNTRY_CODES, isCountryCode } from '../../src/rows/countries.js';

describe('ABA routing numbers', () => {
  it.each([
    '021000021', // JPMorgan Chase, New York
    '011000015', // Federal Reserve Bank of Boston
    '026009593', // Bank of America, New York
    '121000248', // Wells Fargo, San Francisco
    '322271627', // Chase, California (thrift prefix 32)
    '256074974', // Navy Federal Credit Union (thrift prefix 25)
  ])('accepts the published routing number %s', (routing) => {
    expect(isValidRoutingNumber(routing)).toBe(true);
  });

  it.each([
    ['021000022', 'wrong check digit'],
    ['011000016', 'wrong check digit'],
    ['02100002', '8 digits'],
    ['0210000210', '10 digits'],
    ['02100002A', 'a letter'],
    [' 21000021', 'a space'],
    ['000000000', 'all zeros (the checksum alone would pass it)'],
    ['990000000', 'prefix 99 is not a Federal Reserve routing symbol'],
    ['150000002', 'prefix 15 is not assigned'],
    ['', 'empty'],
  ])('refuses %s (%s)', (routing) => {
    expect(isValidRoutingNumber(routing)).toBe(false);
  });

  it('checks the 3-7-1 weights on their own', () => {
    expect(hasValidAbaChecksum('990000000')).toBe(true);
    expect(hasValidAbaChecksum('021000021')).toBe(true);
    expect(hasValidAbaChecksum('012000021')).toBe(false);
    expect(hasValidAbaChecksum('12345678')).toBe(false);
  });
});

describe('IBAN', () => {
  it.each([
    'GB82WEST12345698765432',
    'DE89370400440532013000',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'BR1800360305000010009795493C1',
  ])('accepts the published IBAN %s', (iban) => {
    expect(isValidIban(iban)).toBe(true);
  });

  it.each([
    ['GB82WEST12345698765433', 'mod-97 fails'],
    ['DE89370400440532013001', 'mod-97 fails'],
    ['GB82WEST1234569876543', 'one character short for GB'],
    ['DE8937040044053201300012', 'too long for DE'],
    ['XX82WEST12345698765432', 'no such IBAN country'],
    ['US12345678901234567890', 'the US has no IBAN'],
    ['gb82west12345698765432', 'lower case (not the electronic format)'],
    ['GB82 WEST 1234 5698 7654 32', 'print format with spaces'],
  ])('refuses %s (%s)', (iban) => {
    expect(isValidIban(iban)).toBe(false);
  });
});

describe('BIC (SWIFT code)', () => {
  it.each(['DEUTDEFF', 'NEDSZAJJXXX', 'DEUTDEFF500', 'CHASUS33', 'BOFAUS3N', 'NWBKGB2L'])(
    'accepts the published BIC %s',
    (bic) => {
      expect(isValidBic(bic)).toBe(true);
    },
  );

  it.each([
    ['DEUTXXFF', 'XX is no country'],
    ['DEUTZZFF', 'ZZ is no country'],
    ['DEUTDEF', '7 characters'],
    ['DEUTDEFF5', '9 characters'],
    ['deutdeff', 'lower case'],
    ['DEU1DEFF', 'a digit in the bank code'],
    ['', 'empty'],
  ])('refuses %s (%s)', (bic) => {
    expect(isValidBic(bic)).toBe(false);
  });
});

describe('CLABE', () => {
  it.each(['002010077777777771', '032180000118359719'])('accepts the published CLABE %s', (clabe) => {
    expect(hasValidClabeChecksum(clabe)).toBe(true);
  });

  it('computes the 3-7-1 mod-10 check digit', () => {
    expect(clabeCheckDigit('00201007777777777')).toBe(1);
    expect(clabeCheckDigit('03218000011835971')).toBe(9);
    expect(clabeCheckDigit('0321800001183597')).toBeUndefined();
    expect(clabeCheckDigit('0321800001183597A')).toBeUndefined();
  });

  it.each([
    ['002010077777777772', 'wrong check digit'],
    ['032180000118359710', 'wrong check digit'],
    ['00201007777777777', '17 digits'],
    ['0020100777777777711', '19 digits'],
    ['00201007777777777A', 'a letter'],
  ])('refuses %s (%s)', (clabe) => {
    expect(hasValidClabeChecksum(clabe)).toBe(false);
  });
});

describe('ISO 3166-1 country codes', () => {
  it('holds the 249 assigned codes, unique and sorted', () => {
    expect(COUNTRY_CODES).toHaveLength(249);
    expect(new Set(COUNTRY_CODES).size).toBe(249);
    expect([...COUNTRY_CODES].sort()).toEqual(COUNTRY_CODES);
  });

  it.each(['US', 'MX', 'BR', 'CO', 'GB', 'DE', 'ZA', 'SS', 'CW', 'AX'])('knows %s', (code) => {
    expect(isCountryCode(code)).toBe(true);
  });

  it.each(['XX', 'ZZ', 'UK', 'XK', 'AN', 'us', 'USA', 'U', ' US', ''])('does not know %j', (code) => {
    expect(isCountryCode(code)).toBe(false);
  });
});
