import { describe, expect, it } from 'vitest';
import { hasAssignedPrefix, hasValidAbaChecksum, isValidRoutingNumber } from '../../src/rows/checks/aba.js';
import { isValidBic } from '../../src/rows/checks/bic.js';
import { clabeCheckDigit, hasValidClabeChecksum } from '../../src/rows/checks/clabe.js';
import {
  FED_DIRECTORY_DATE,
  FED_DIRECTORY_OUTSIDE_PREFIX_TABLE,
  FED_DIRECTORY_SOURCE,
} from '../../src/rows/checks/fed-directory.js';
import { hasValidIbanChecksum, ibanPatternOf, isValidIban } from '../../src/rows/checks/iban.js';
import { IBAN_REGISTRY, IBAN_REGISTRY_RELEASE } from '../../src/rows/checks/iban-registry.js';
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

  // Federal Reserve directory participants outside the prefix table were once refused.
  it.each([
    ['154000008', 'TREAS DEPT BPD, Parkersburg WV (Fedwire directory)'],
    ['155000007', 'US DEPT OF TREAS/FMS/BK REVIEW BR, Washington DC (Fedwire directory)'],
  ])('accepts the Treasury routing number %s (%s)', (routing) => {
    expect(isValidRoutingNumber(routing)).toBe(true);
  });

  it.each([
    ['154000011', 'prefix 15 with a valid check digit, not in the directory'],
    ['331000009', 'prefix 33 with a valid check digit, not in the directory'],
    ['154000009', 'a directory number with a wrong check digit'],
  ])('still refuses %s (%s)', (routing) => {
    expect(hasValidAbaChecksum(routing)).toBe(routing !== '154000009');
    expect(isValidRoutingNumber(routing)).toBe(false);
  });

  it('ships only directory numbers the prefix table misses, with their source and date', () => {
    expect(FED_DIRECTORY_DATE).toBe('2018-12-04');
    expect(FED_DIRECTORY_SOURCE).toContain('FedACHdir.txt and fpddir.txt');
    expect([...FED_DIRECTORY_OUTSIDE_PREFIX_TABLE]).toEqual(['154000008', '155000007']);
    for (const routing of FED_DIRECTORY_OUTSIDE_PREFIX_TABLE) {
      expect(hasValidAbaChecksum(routing)).toBe(true);
      expect(hasAssignedPrefix(routing)).toBe(false);
    }
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

  // ibantools also knows countries the SWIFT IBAN Registry does not list.
  it.each([
    ['DZ580002100001113000000570', 'Algeria'],
    ['AO44123412341234123412341', 'Angola'],
    ['SN08SN0100152000048500003035', 'Senegal'],
    ['IR081234123412341234123412', 'Iran'],
    ['MA64011519000001205000534921', 'Morocco'],
    ['GF4120041010050500013M02606', 'French Guiana: its IBANs use FR'],
    ['AX2112345600000785', 'Aland Islands: its IBANs use FI'],
  ])('refuses %s, a country outside the IBAN registry (%s)', (iban) => {
    expect(hasValidIbanChecksum(iban)).toBe(true);
    expect(isValidIban(iban)).toBe(false);
  });

  it.each([
    ['BI4210000100010000332045181', 'Burundi'],
    ['DJ2110002010010409943020008', 'Djibouti'],
    ['HN54PISA00000000000000123124', 'Honduras'],
    ['FK88SC123456789012', 'Falkland Islands'],
    ['OM810180000001299123456', 'Oman'],
    ['MN121234123456789123', 'Mongolia'],
    ['PK22SCBL00000011234567AB', 'Pakistan: 16!c allows letters in the account number'],
    ['BY50NB0B3600900000002Z00AB00', 'Belarus: 4!c allows a digit in the bank code'],
  ])("accepts %s, whose country and BBAN structure are the registry's (%s)", (iban) => {
    expect(isValidIban(iban)).toBe(true);
  });

  it.each([
    ['GB00HLFX11016111455365', 'check digits 00 (mod 97 passes as for 97)'],
    ['GE37N10000000101904917', 'GE wants 2 letters, not a digit, in the bank code'],
    ['NI92BAMC000000000000000003123123', 'the old 32-character NI format'],
    ['ES8350210036679521296135', 'the Spanish national check digits fail'],
    ['BE68539007547035', 'mod 97 fails'],
  ])('refuses %s (%s)', (iban) => {
    expect(isValidIban(iban)).toBe(false);
  });

  it('names the registry release and turns its BBAN structures into patterns', () => {
    expect(IBAN_REGISTRY_RELEASE).toBe(101);
    expect(Object.keys(IBAN_REGISTRY)).toHaveLength(89);
    expect(IBAN_REGISTRY['GB']).toBe('4!a6!n8!n');
    expect(ibanPatternOf('GB', '4!a6!n8!n').source).toBe('^GB[0-9]{2}[A-Z]{4}[0-9]{6}[0-9]{8}$');
    expect(ibanPatternOf('BY', '4!c4!n16!c').source).toBe('^BY[0-9]{2}[A-Z0-9]{4}[0-9]{4}[A-Z0-9]{16}$');
  });

  it.each([
    ['GB82WEST12345698765432', true],
    ['GB82WEST12345698765433', false],
    ['GB01WEST12345698765432', false],
    ['GB99WEST12345698765432', false],
    ['GB82west12345698765432', false],
  ])('mod-97 check of %s is %s', (iban, valid) => {
    expect(hasValidIbanChecksum(iban)).toBe(valid);
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
