import { describe, expect, it } from 'vitest';
import { RAILS } from '../../src/columns/rails.js';
import {
  addressMessages,
  COMMON_MESSAGES,
  currencyNotTheRails,
  DETAIL_MESSAGES,
  TYPE_NOT_A_RAIL,
} from '../../src/rows/messages.js';
import type { ValidationIssue } from '../../src/rows/types.js';
import { validateRecipient, validateTypeAndCurrency } from '../../src/rows/validate.js';
import { address, body, details, US_ADDRESS, VALID } from './fixtures.js';

const messagesOf = (request: unknown) => validateRecipient(request).map((issue) => issue.message);

/**
 * One row per message: the message copied from docs/service.md "Validation messages" (or, for
 * the two messages the service does not give, ours), its path, a request that gets it and one
 * that does not.
 */
interface Case {
  message: string;
  path: string;
  fails: unknown;
  passes: unknown;
}

const cases: Case[] = [
  // Common to every rail
  {
    message: 'The field recipient.individualName or recipient.businessName is required',
    path: 'individualName',
    fails: body('ACH', (r) => delete r['individualName']),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.individualName or recipient.businessName is required',
    path: 'individualName',
    fails: body('ACH', (r) => Object.assign(r, { businessName: 'Acme', countryOfIncorporation: 'US' })),
    passes: body('ACH', (r) => {
      delete r['individualName'];
      Object.assign(r, { businessName: 'Acme', countryOfIncorporation: 'US' });
    }),
  },
  {
    message: 'The field recipient.countryOfIncorporation is required when recipient.businessName is provided',
    path: 'countryOfIncorporation',
    fails: body('ACH', (r) => {
      delete r['individualName'];
      r['businessName'] = 'Acme';
    }),
    passes: body('ACH', (r) => {
      delete r['individualName'];
      Object.assign(r, { businessName: 'Acme', countryOfIncorporation: 'US' });
    }),
  },
  {
    message: 'The field recipient.beneficiaryId is required',
    path: 'beneficiaryId',
    fails: body('ACH', (r) => delete r['beneficiaryId']),
    passes: body('ACH', (r) => {
      delete r['beneficiaryId'];
      r['integratorLevel'] = true;
    }),
  },
  {
    message: 'The field recipient.currency is required',
    path: 'currency',
    fails: body('ACH', (r) => {
      r['currency'] = null;
    }),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.type is required',
    path: 'type',
    fails: body('ACH', (r) => {
      r['type'] = null;
    }),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.details is required',
    path: 'details',
    fails: body('ACH', (r) => {
      r['details'] = null;
    }),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.countryOfIncorporation should follow ISO 3166-2',
    path: 'countryOfIncorporation',
    fails: body('SPEI', (r) => {
      delete r['individualName'];
      Object.assign(r, { businessName: 'Acme SA de CV', countryOfIncorporation: 'MEX' });
    }),
    passes: body('SPEI', (r) => {
      delete r['individualName'];
      Object.assign(r, { businessName: 'Acme SA de CV', countryOfIncorporation: 'MX' });
    }),
  },
  {
    message: 'recipient.nickname-max-length',
    path: 'nickname',
    fails: body('ACH', (r) => {
      r['nickname'] = 'a'.repeat(51);
    }),
    passes: body('ACH', (r) => {
      r['nickname'] = 'a'.repeat(50);
    }),
  },
  {
    message: 'recipient.nickname-invalid-characters',
    path: 'nickname',
    fails: body('ACH', (r) => {
      r['nickname'] = 'pay@me';
    }),
    passes: body('ACH', (r) => {
      r['nickname'] = "José's main (USD), acct_1. O-2";
    }),
  },
  // Ours: the service does not give these two.
  {
    message: 'The field recipient.type must be one of ACH, WIRE, SWIFT, RTP, SPEI, PIX, COP',
    path: 'type',
    fails: body('ACH', (r) => {
      r['type'] = 'SEPA';
    }),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.currency must be USD for ACH',
    path: 'currency',
    fails: body('ACH', (r) => {
      r['currency'] = 'MXN';
    }),
    passes: body('ACH'),
  },
  {
    message: 'The field recipient.currency must be USD for WIRE',
    path: 'currency',
    fails: body('WIRE', (r) => {
      r['currency'] = 'usd';
    }),
    passes: body('WIRE'),
  },
  {
    message: 'The field recipient.currency must be USD for SWIFT',
    path: 'currency',
    fails: body('SWIFT', (r) => {
      r['currency'] = 'EUR';
    }),
    passes: body('SWIFT'),
  },
  {
    message: 'The field recipient.currency must be USD for RTP',
    path: 'currency',
    fails: body('RTP', (r) => {
      r['currency'] = 'BRL';
    }),
    passes: body('RTP'),
  },
  {
    message: 'The field recipient.currency must be MXN for SPEI',
    path: 'currency',
    fails: body('SPEI', (r) => {
      r['currency'] = 'USD';
    }),
    passes: body('SPEI'),
  },
  {
    message: 'The field recipient.currency must be BRL for PIX',
    path: 'currency',
    fails: body('PIX', (r) => {
      r['currency'] = 'USD';
    }),
    passes: body('PIX'),
  },
  {
    message: 'The field recipient.currency must be COP for COP',
    path: 'currency',
    fails: body('COP', (r) => {
      r['currency'] = 'USD';
    }),
    passes: body('COP'),
  },

  // Address messages, recipientAddress (ACH) and bankAddress (WIRE)
  ...(['recipientAddress', 'bankAddress'] as const).flatMap((addr): Case[] => {
    const rail = addr === 'recipientAddress' ? 'ACH' : 'WIRE';
    const literal = {
      recipientAddress: [
        'recipientAddress must be provided',
        'recipientAddress.street1 must be provided',
        'recipientAddress.city must be provided',
        'recipientAddress.state must be provided and must be 1-3 letter ISO state code',
        'recipientAddress.postalCode must be provided',
        'recipientAddress.country must be provided and must be 2-letter ISO country code',
      ],
      bankAddress: [
        'bankAddress must be provided',
        'bankAddress.street1 must be provided',
        'bankAddress.city must be provided',
        'bankAddress.state must be provided and must be 1-3 letter ISO state code',
        'bankAddress.postalCode must be provided',
        'bankAddress.country must be provided and must be 2-letter ISO country code',
      ],
    }[addr];
    return [
      {
        message: literal[0]!,
        path: `details.${addr}`,
        fails: details(rail, (d) => delete d[addr]),
        passes: body(rail),
      },
      {
        message: literal[1]!,
        path: `details.${addr}.street1`,
        fails: address(rail, addr, (a) => {
          a['street1'] = '  ';
        }),
        passes: body(rail),
      },
      {
        message: literal[2]!,
        path: `details.${addr}.city`,
        fails: address(rail, addr, (a) => delete a['city']),
        passes: body(rail),
      },
      {
        message: literal[3]!,
        path: `details.${addr}.state`,
        fails: address(rail, addr, (a) => {
          a['state'] = 'New York';
        }),
        passes: address(rail, addr, (a) => {
          a['state'] = 'N';
        }),
      },
      {
        message: literal[4]!,
        path: `details.${addr}.postalCode`,
        fails: address(rail, addr, (a) => {
          a['postalCode'] = null;
        }),
        passes: body(rail),
      },
      {
        message: literal[5]!,
        path: `details.${addr}.country`,
        fails: address(rail, addr, (a) => {
          a['country'] = 'USA';
        }),
        passes: address(rail, addr, (a) => {
          a['country'] = 'CA';
        }),
      },
    ];
  }),

  // ACH
  {
    message: 'accountNumber must be provided',
    path: 'details.accountNumber',
    fails: details('ACH', (d) => delete d['accountNumber']),
    passes: body('ACH'),
  },
  {
    message: 'routingNumber must be provided',
    path: 'details.routingNumber',
    fails: details('ACH', (d) => {
      d['routingNumber'] = '';
    }),
    passes: body('ACH'),
  },
  {
    message: 'routingNumber must be 9 characters long',
    path: 'details.routingNumber',
    fails: details('ACH', (d) => {
      d['routingNumber'] = '21000021';
    }),
    passes: body('ACH'),
  },
  {
    message: 'routingNumber is invalid',
    path: 'details.routingNumber',
    fails: details('ACH', (d) => {
      d['routingNumber'] = '021000022';
    }),
    passes: body('ACH'),
  },
  {
    message: 'bankName must be provided',
    path: 'details.bankName',
    fails: details('ACH', (d) => delete d['bankName']),
    passes: body('ACH'),
  },
  {
    message: 'bankCountry must be provided',
    path: 'details.bankCountry',
    fails: details('ACH', (d) => delete d['bankCountry']),
    passes: body('ACH'),
  },
  {
    message: 'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
    path: 'details.accountType',
    fails: details('ACH', (d) => {
      d['accountType'] = 'checking';
    }),
    passes: details('ACH', (d) => {
      d['accountType'] = 'GeneralLedger';
    }),
  },

  // SWIFT
  {
    message: 'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
    path: 'details.swiftCode',
    fails: details('SWIFT', (d) => {
      d['swiftCode'] = 'deutdeff';
    }),
    passes: details('SWIFT', (d) => {
      d['swiftCode'] = 'NEDSZAJJXXX';
    }),
  },
  {
    message: 'swiftCode is invalid',
    path: 'details.swiftCode',
    fails: details('SWIFT', (d) => {
      d['swiftCode'] = 'DEUTXXFF';
    }),
    passes: body('SWIFT'),
  },
  {
    message: 'bankAddress.country should be WIRE not SWIFT when country is US',
    path: 'details.bankAddress.country',
    fails: details('SWIFT', (d) => {
      d['bankAddress'] = US_ADDRESS;
    }),
    passes: body('SWIFT'),
  },
  {
    message: 'accountNumber or iban must be provided',
    path: 'details.accountNumber',
    fails: details('SWIFT', (d) => delete d['iban']),
    passes: details('SWIFT', (d) => {
      delete d['iban'];
      d['accountNumber'] = '0532013000';
    }),
  },
  {
    message: 'iban must matches the regex: ^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
    path: 'details.iban',
    fails: details('SWIFT', (d) => {
      d['iban'] = 'DE89 3704 0044 0532 0130 00';
    }),
    passes: body('SWIFT'),
  },
  {
    message: 'iban is invalid',
    path: 'details.iban',
    fails: details('SWIFT', (d) => {
      d['iban'] = 'DE89370400440532013001';
    }),
    passes: details('SWIFT', (d) => {
      d['iban'] = 'GB82WEST12345698765432';
    }),
  },

  // SPEI
  {
    message: 'clabe must be provided',
    path: 'details.clabe',
    fails: details('SPEI', (d) => delete d['clabe']),
    passes: body('SPEI'),
  },
  {
    message: 'clabe must be 18 digits long',
    path: 'details.clabe',
    fails: details('SPEI', (d) => {
      d['clabe'] = '03218000011835971';
    }),
    passes: body('SPEI'),
  },
  {
    message: 'clabe has an invalid checksum',
    path: 'details.clabe',
    fails: details('SPEI', (d) => {
      d['clabe'] = '032180000118359710';
    }),
    passes: details('SPEI', (d) => {
      d['clabe'] = '002010077777777771';
    }),
  },
  {
    message: 'bankCode must be provided',
    path: 'details.bankCode',
    fails: details('SPEI', (d) => delete d['bankCode']),
    passes: body('SPEI'),
  },
  {
    message: 'receiverName must be provided',
    path: 'details.receiverName',
    fails: details('SPEI', (d) => delete d['receiverName']),
    passes: body('SPEI'),
  },

  // PIX
  {
    message: 'pixKey must be provided',
    path: 'details.pixKey',
    fails: details('PIX', (d) => delete d['pixKey']),
    passes: body('PIX'),
  },
  {
    message: 'documentNumber must be provided',
    path: 'details.documentNumber',
    fails: details('PIX', (d) => delete d['documentNumber']),
    passes: body('PIX'),
  },
  {
    message: 'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
    path: 'details.documentNumber',
    fails: details('PIX', (d) => {
      d['documentNumber'] = '123.456.789-0';
    }),
    passes: details('PIX', (d) => {
      d['documentNumber'] = '12.345.678/0001-95';
    }),
  },

  // COP
  {
    message: 'accountType must be CHECKING or SAVINGS',
    path: 'details.accountType',
    fails: details('COP', (d) => {
      d['accountType'] = 'Savings';
    }),
    passes: details('COP', (d) => {
      d['accountType'] = 'CHECKING';
    }),
  },
  {
    message: 'bankAccount must be provided',
    path: 'details.bankAccount',
    fails: details('COP', (d) => delete d['bankAccount']),
    passes: body('COP'),
  },
  {
    message: 'documentId must be provided for third party withdrawals',
    path: 'details.documentId',
    fails: details('COP', (d) => {
      d['thirdPartyWithdrawal'] = true;
    }),
    passes: details('COP', (d) => {
      Object.assign(d, {
        thirdPartyWithdrawal: true,
        documentId: '1020304050',
        documentType: 'CC',
        email: 'a@b.co',
      });
    }),
  },
  {
    message: 'documentType must be provided for third party withdrawals',
    path: 'details.documentType',
    fails: details('COP', (d) => {
      Object.assign(d, { thirdPartyWithdrawal: true, documentId: '1020304050' });
    }),
    passes: details('COP', (d) => {
      Object.assign(d, { thirdPartyWithdrawal: false, documentId: '1020304050' });
    }),
  },
  {
    message: 'email must be provided for third party withdrawals',
    path: 'details.email',
    fails: details('COP', (d) => {
      Object.assign(d, { thirdPartyWithdrawal: true, documentId: '1020304050', documentType: 'CC' });
    }),
    passes: body('COP'),
  },
];

describe('validateRecipient: every validation message of the service', () => {
  it.each(RAILS)('accepts a complete %s recipient', (rail) => {
    expect(validateRecipient(VALID[rail])).toEqual([]);
  });

  it.each(cases)(
    '$message ($path): failing input gets it, passing input does not',
    ({ message, path, fails, passes }) => {
      expect(validateRecipient(fails)).toContainEqual({ path, message });
      expect(messagesOf(passes)).not.toContain(message);
    },
  );

  it('has a case for every message exported by messages.ts', () => {
    const exported = new Set<string>([
      ...Object.values(COMMON_MESSAGES),
      ...Object.values(DETAIL_MESSAGES),
      ...Object.values(addressMessages('recipientAddress')),
      ...Object.values(addressMessages('bankAddress')),
      TYPE_NOT_A_RAIL,
      ...RAILS.map(currencyNotTheRails),
    ]);
    const covered = new Set(cases.map((c) => c.message));
    // Rail-specific messages shared with ACH (e.g. "accountNumber must be provided") are
    // covered once above; the rails that share them get their own tests below.
    expect([...exported].filter((m) => !covered.has(m))).toEqual([]);
    expect([...covered].filter((m) => !exported.has(m))).toEqual([]);
  });
});

describe('validateRecipient: one change, exactly the messages it causes', () => {
  it('the common messages alone, for a body that is not an object', () => {
    const expected: ValidationIssue[] = [
      {
        path: 'individualName',
        message: 'The field recipient.individualName or recipient.businessName is required',
      },
      { path: 'beneficiaryId', message: 'The field recipient.beneficiaryId is required' },
      { path: 'currency', message: 'The field recipient.currency is required' },
      { path: 'type', message: 'The field recipient.type is required' },
      { path: 'details', message: 'The field recipient.details is required' },
    ];
    for (const junk of [undefined, null, 42, 'recipient', true, [], [VALID.ACH], {}]) {
      expect(validateRecipient(junk)).toEqual(expected);
    }
  });

  it('details null stops at "details is required": no per-field messages', () => {
    expect(validateRecipient(body('WIRE', (r) => (r['details'] = null)))).toEqual([
      { path: 'details', message: 'The field recipient.details is required' },
    ]);
  });

  it.each([null, 'details', 7, [], [{ accountNumber: '1' }]])(
    'details %j is malformed: "details is required"',
    (d) => {
      expect(validateRecipient(body('ACH', (r) => (r['details'] = d)))).toEqual([
        { path: 'details', message: 'The field recipient.details is required' },
      ]);
    },
  );

  it('an unknown type gives its message and no detail messages', () => {
    expect(validateRecipient(body('ACH', (r) => (r['type'] = 'ach')))).toEqual([
      {
        path: 'type',
        message: 'The field recipient.type must be one of ACH, WIRE, SWIFT, RTP, SPEI, PIX, COP',
      },
    ]);
  });

  it('a missing currency is "required", not "must be USD"', () => {
    expect(validateRecipient(body('ACH', (r) => delete r['currency']))).toEqual([
      { path: 'currency', message: 'The field recipient.currency is required' },
    ]);
  });

  it('both names and no countryOfIncorporation: both messages', () => {
    const request = body('ACH', (r) => (r['businessName'] = 'Acme'));
    expect(messagesOf(request)).toEqual([
      'The field recipient.individualName or recipient.businessName is required',
      'The field recipient.countryOfIncorporation is required when recipient.businessName is provided',
    ]);
  });

  it.each(['', '   ', null, 12, {}])('individualName %j counts as not provided', (name) => {
    expect(messagesOf(body('ACH', (r) => (r['individualName'] = name)))).toEqual([
      'The field recipient.individualName or recipient.businessName is required',
    ]);
  });

  it('countryOfIncorporation of 1 or 2 characters is accepted; only "longer than 2" is refused', () => {
    for (const code of ['M', 'MX']) {
      const request = body('SPEI', (r) => {
        delete r['individualName'];
        Object.assign(r, { businessName: 'Acme', countryOfIncorporation: code });
      });
      expect(validateRecipient(request)).toEqual([]);
    }
  });

  it('integratorLevel must be the JSON true to waive beneficiaryId', () => {
    for (const flag of ['true', 1, false, null]) {
      const request = body('ACH', (r) => {
        delete r['beneficiaryId'];
        r['integratorLevel'] = flag;
      });
      expect(messagesOf(request)).toEqual(['The field recipient.beneficiaryId is required']);
    }
  });
});

describe('validateRecipient: nickname', () => {
  const nicknameMessages = (nickname: unknown) =>
    messagesOf(body('ACH', (r) => (r['nickname'] = nickname))).filter((m) =>
      m.startsWith('recipient.nickname'),
    );

  it.each([
    'José',
    'Zoë Müller-Łukasz',
    'Jose\u0301 (decomposed accent)',
    '北京 office',
    'Acct. 1, main_(2)',
    "O'Brien",
    'a'.repeat(50),
    '',
    '   ',
  ])('accepts %j', (nickname) => {
    expect(nicknameMessages(nickname)).toEqual([]);
  });

  it.each(['pay@me', 'tab\there', 'line\nbreak', 'O’Brien', 'emoji 💸', 'a/b', '#1', 'x&y'])(
    'refuses %j: recipient.nickname-invalid-characters',
    (nickname) => {
      expect(nicknameMessages(nickname)).toEqual(['recipient.nickname-invalid-characters']);
    },
  );

  it('counts characters, not UTF-16 units', () => {
    expect(nicknameMessages('𝒜'.repeat(50))).toEqual([]); // 100 UTF-16 units
    expect(nicknameMessages('北'.repeat(51))).toEqual(['recipient.nickname-max-length']);
  });

  it('gives both messages when both apply', () => {
    expect(nicknameMessages(`${'a'.repeat(50)}!`)).toEqual([
      'recipient.nickname-max-length',
      'recipient.nickname-invalid-characters',
    ]);
  });

  it.each([42, true, {}, ['Ada']])('a %j nickname is malformed: invalid characters', (nickname) => {
    expect(nicknameMessages(nickname)).toEqual(['recipient.nickname-invalid-characters']);
  });

  it('null nickname is simply not given', () => {
    expect(nicknameMessages(null)).toEqual([]);
  });
});

describe('validateRecipient: addresses', () => {
  it.each([null, 'Main St 1, New York', 5, [], [US_ADDRESS]])(
    'a %j recipientAddress gives only "recipientAddress must be provided"',
    (value) => {
      expect(validateRecipient(details('ACH', (d) => (d['recipientAddress'] = value)))).toEqual([
        { path: 'details.recipientAddress', message: 'recipientAddress must be provided' },
      ]);
    },
  );

  it('an empty address object gives the five field messages in order', () => {
    expect(validateRecipient(details('WIRE', (d) => (d['bankAddress'] = {})))).toEqual([
      { path: 'details.bankAddress.street1', message: 'bankAddress.street1 must be provided' },
      { path: 'details.bankAddress.city', message: 'bankAddress.city must be provided' },
      {
        path: 'details.bankAddress.state',
        message: 'bankAddress.state must be provided and must be 1-3 letter ISO state code',
      },
      { path: 'details.bankAddress.postalCode', message: 'bankAddress.postalCode must be provided' },
      {
        path: 'details.bankAddress.country',
        message: 'bankAddress.country must be provided and must be 2-letter ISO country code',
      },
    ]);
  });

  it.each(['N', 'NY', 'CMX'])('state %j is a 1-3 letter code', (state) => {
    expect(validateRecipient(address('ACH', 'recipientAddress', (a) => (a['state'] = state)))).toEqual([]);
  });

  it.each(['', 'ny', 'ABCD', 'N1', ' NY', 12, null])('state %j is refused', (state) => {
    expect(messagesOf(address('ACH', 'recipientAddress', (a) => (a['state'] = state)))).toEqual([
      'recipientAddress.state must be provided and must be 1-3 letter ISO state code',
    ]);
  });

  it.each(['', 'us', 'USA', 'XX', 'UK', ' US', 1, null])('country %j is refused', (country) => {
    expect(messagesOf(address('ACH', 'recipientAddress', (a) => (a['country'] = country)))).toEqual([
      'recipientAddress.country must be provided and must be 2-letter ISO country code',
    ]);
  });

  it('ACH does not ask for a bankAddress', () => {
    expect(validateRecipient(details('ACH', (d) => delete d['bankAddress']))).toEqual([]);
  });

  it('RTP, SPEI, PIX and COP have no address objects', () => {
    for (const rail of ['RTP', 'SPEI', 'PIX', 'COP'] as const) {
      expect(validateRecipient(body(rail))).toEqual([]);
    }
  });
});

describe('validateRecipient: rail details', () => {
  it('ACH with empty details lists every ACH message', () => {
    expect(validateRecipient(body('ACH', (r) => (r['details'] = {})))).toEqual([
      { path: 'details.accountNumber', message: 'accountNumber must be provided' },
      { path: 'details.routingNumber', message: 'routingNumber must be provided' },
      { path: 'details.bankName', message: 'bankName must be provided' },
      { path: 'details.bankCountry', message: 'bankCountry must be provided' },
      {
        path: 'details.accountType',
        message: 'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
      },
      { path: 'details.recipientAddress', message: 'recipientAddress must be provided' },
    ]);
  });

  it.each([
    ['021000022', 'routingNumber is invalid'],
    ['02100002A', 'routingNumber is invalid'],
    ['000000000', 'routingNumber is invalid'],
    ['0210000210', 'routingNumber must be 9 characters long'],
    ['2100', 'routingNumber must be 9 characters long'],
    [21000021, 'routingNumber must be provided'],
    ['  ', 'routingNumber must be provided'],
  ])('ACH and WIRE routingNumber %j: %s', (routingNumber, message) => {
    for (const rail of ['ACH', 'WIRE'] as const) {
      expect(validateRecipient(details(rail, (d) => (d['routingNumber'] = routingNumber)))).toEqual([
        { path: 'details.routingNumber', message },
      ]);
    }
  });

  // In the Federal Reserve's directory, outside the routing-symbol table.
  it.each(['154000008', '155000007'])(
    'ACH, WIRE and SWIFT accept the Treasury routing number %s',
    (routing) => {
      for (const rail of ['ACH', 'WIRE', 'SWIFT'] as const) {
        expect(validateRecipient(details(rail, (d) => (d['routingNumber'] = routing)))).toEqual([]);
      }
    },
  );

  // "iban is invalid" means not in the IBAN directory (the SWIFT registry).
  it.each(['DZ580002100001113000000570', 'GF4120041010050500013M02606', 'CI93CI0080111301134291200589'])(
    'SWIFT iban %s of a country outside the IBAN registry: iban is invalid',
    (iban) => {
      expect(validateRecipient(details('SWIFT', (d) => (d['iban'] = iban)))).toEqual([
        { path: 'details.iban', message: 'iban is invalid' },
      ]);
    },
  );

  it.each(['Checking', 'Savings', 'GeneralLedger', 'Loan'])(
    'ACH accountType %s is accepted',
    (accountType) => {
      expect(validateRecipient(details('ACH', (d) => (d['accountType'] = accountType)))).toEqual([]);
    },
  );

  it.each(['CHECKING', 'savings', 'Current', '', 1])('ACH accountType %j is refused', (accountType) => {
    expect(messagesOf(details('ACH', (d) => (d['accountType'] = accountType)))).toEqual([
      'accountType must be provided - possible values - Checking,Savings,GeneralLedger,Loan',
    ]);
  });

  it('WIRE with empty details lists every WIRE message', () => {
    expect(messagesOf(body('WIRE', (r) => (r['details'] = {})))).toEqual([
      'accountNumber must be provided',
      'routingNumber must be provided',
      'bankName must be provided',
      'bankAddress must be provided',
      'recipientAddress must be provided',
    ]);
  });

  it('SWIFT with empty details lists every SWIFT message', () => {
    expect(validateRecipient(body('SWIFT', (r) => (r['details'] = {})))).toEqual([
      {
        path: 'details.swiftCode',
        message: 'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
      },
      { path: 'details.bankName', message: 'bankName must be provided' },
      { path: 'details.bankAddress', message: 'bankAddress must be provided' },
      { path: 'details.recipientAddress', message: 'recipientAddress must be provided' },
      { path: 'details.accountNumber', message: 'accountNumber or iban must be provided' },
    ]);
  });

  it.each(['', 'DEUTDEF', 'DEUTDEFF5', 'DEU1DEFF', 'deutdeff', 12345678])(
    'SWIFT swiftCode %j is the regex message, not "is invalid"',
    (swiftCode) => {
      expect(messagesOf(details('SWIFT', (d) => (d['swiftCode'] = swiftCode)))).toEqual([
        'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
      ]);
    },
  );

  it('SWIFT with a US bank: the address is fine and the rail is wrong', () => {
    expect(
      validateRecipient(
        details('SWIFT', (d) => {
          d['swiftCode'] = 'CHASUS33';
          d['bankAddress'] = US_ADDRESS;
        }),
      ),
    ).toEqual([
      {
        path: 'details.bankAddress.country',
        message: 'bankAddress.country should be WIRE not SWIFT when country is US',
      },
    ]);
  });

  it('SWIFT accepts an accountNumber without iban, and both together', () => {
    expect(validateRecipient(details('SWIFT', (d) => (d['accountNumber'] = '0532013000')))).toEqual([]);
    const accountOnly = details('SWIFT', (d) => {
      delete d['iban'];
      d['accountNumber'] = '0532013000';
    });
    expect(validateRecipient(accountOnly)).toEqual([]);
  });

  it.each([
    ['de89370400440532013000', 'iban must matches the regex: ^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'],
    ['DE8937040044053201300', 'iban is invalid'],
    ['XX89370400440532013000', 'iban is invalid'],
  ])('SWIFT iban %j: %s', (iban, message) => {
    expect(validateRecipient(details('SWIFT', (d) => (d['iban'] = iban)))).toEqual([
      { path: 'details.iban', message },
    ]);
  });

  it('SWIFT iban that is not a string: neither given as an account nor well-formed', () => {
    expect(messagesOf(details('SWIFT', (d) => (d['iban'] = 12345)))).toEqual([
      'accountNumber or iban must be provided',
      'iban must matches the regex: ^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
    ]);
  });

  it('counts a PIX document after removing only / - and ., as the service does', () => {
    // "123 456 789 09" is 14 characters with its spaces, so it passes the length rule.
    expect(validateRecipient(details('PIX', (d) => (d['documentNumber'] = '123 456 789 09')))).toEqual([]);
  });

  it.each([
    ['021000021', []],
    ['', []],
    [null, []],
    ['021000022', ['routingNumber is invalid']],
    ['21000021', ['routingNumber is invalid']],
    [21000021, ['routingNumber is invalid']],
  ])('SWIFT optional routingNumber %j', (routingNumber, expected) => {
    expect(messagesOf(details('SWIFT', (d) => (d['routingNumber'] = routingNumber)))).toEqual(expected);
  });

  it('RTP: accountNumber, routingNumber and its length; no checksum message', () => {
    expect(messagesOf(body('RTP', (r) => (r['details'] = {})))).toEqual([
      'accountNumber must be provided',
      'routingNumber must be provided',
    ]);
    expect(messagesOf(details('RTP', (d) => (d['routingNumber'] = '12345678')))).toEqual([
      'routingNumber must be 9 characters long',
    ]);
    // The service gives RTP no "is invalid": a bad check digit passes the pre-validation.
    expect(messagesOf(details('RTP', (d) => (d['routingNumber'] = '021000022')))).toEqual([]);
  });

  it.each([
    ['03218000011835971', 'clabe must be 18 digits long'],
    ['0321800001183597190', 'clabe must be 18 digits long'],
    ['03218000011835971A', 'clabe must be 18 digits long'],
    ['032 180 000 118 359 719', 'clabe must be 18 digits long'],
    ['032180000118359718', 'clabe has an invalid checksum'],
    [32180000118359720, 'clabe must be provided'], // a JSON number is not a CLABE
  ])('SPEI clabe %j: %s', (clabe, message) => {
    expect(validateRecipient(details('SPEI', (d) => (d['clabe'] = clabe)))).toEqual([
      { path: 'details.clabe', message },
    ]);
  });

  it('SPEI with empty details lists every SPEI message', () => {
    expect(messagesOf(body('SPEI', (r) => (r['details'] = {})))).toEqual([
      'clabe must be provided',
      'bankCode must be provided',
      'receiverName must be provided',
    ]);
  });

  it.each(['12345678909', '123.456.789-09', '12345678000195', '12.345.678/0001-95'])(
    'PIX documentNumber %j has 11 or 14 characters once / - . are removed',
    (documentNumber) => {
      expect(validateRecipient(details('PIX', (d) => (d['documentNumber'] = documentNumber)))).toEqual([]);
    },
  );

  it.each(['1234567890', '123456789012', '1234567800019', '123 456 789-09'])(
    'PIX documentNumber %j is the wrong length',
    (documentNumber) => {
      expect(messagesOf(details('PIX', (d) => (d['documentNumber'] = documentNumber)))).toEqual([
        'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
      ]);
    },
  );

  it('PIX with empty details lists every PIX message', () => {
    expect(messagesOf(body('PIX', (r) => (r['details'] = {})))).toEqual([
      'pixKey must be provided',
      'documentNumber must be provided',
    ]);
  });

  it('COP with empty details lists every COP message, third-party ones only when asked', () => {
    expect(messagesOf(body('COP', (r) => (r['details'] = {})))).toEqual([
      'accountType must be CHECKING or SAVINGS',
      'bankAccount must be provided',
      'bankCode must be provided',
    ]);
    expect(messagesOf(body('COP', (r) => (r['details'] = { thirdPartyWithdrawal: true })))).toEqual([
      'accountType must be CHECKING or SAVINGS',
      'bankAccount must be provided',
      'bankCode must be provided',
      'documentId must be provided for third party withdrawals',
      'documentType must be provided for third party withdrawals',
      'email must be provided for third party withdrawals',
    ]);
  });

  it.each(['true', 1, 'yes', null])('COP thirdPartyWithdrawal %j is not the JSON true', (flag) => {
    expect(validateRecipient(details('COP', (d) => (d['thirdPartyWithdrawal'] = flag)))).toEqual([]);
  });

  it('a rail reads only its own fields', () => {
    const request = details('RTP', (d) =>
      Object.assign(d, { clabe: 'x', iban: 'nonsense', recipientAddress: 5 }),
    );
    expect(validateRecipient(request)).toEqual([]);
  });
});

describe('validateRecipient: several messages at once', () => {
  it('returns every message, in the order of docs/service.md "Validation messages"', () => {
    const request = {
      businessName: 'Acme Holdings',
      countryOfIncorporation: 'USA',
      currency: 'MXN',
      type: 'WIRE',
      nickname: `Acme <${'x'.repeat(50)}>`,
      details: {
        accountNumber: '',
        routingNumber: '21000021',
        bankAddress: {
          street1: '1 Main St',
          city: 'New York',
          state: 'New York',
          postalCode: '10001',
          country: 'us',
        },
      },
    };
    expect(validateRecipient(request)).toEqual([
      { path: 'beneficiaryId', message: 'The field recipient.beneficiaryId is required' },
      { path: 'currency', message: 'The field recipient.currency must be USD for WIRE' },
      {
        path: 'countryOfIncorporation',
        message: 'The field recipient.countryOfIncorporation should follow ISO 3166-2',
      },
      { path: 'nickname', message: 'recipient.nickname-max-length' },
      { path: 'nickname', message: 'recipient.nickname-invalid-characters' },
      { path: 'details.accountNumber', message: 'accountNumber must be provided' },
      { path: 'details.routingNumber', message: 'routingNumber must be 9 characters long' },
      { path: 'details.bankName', message: 'bankName must be provided' },
      {
        path: 'details.bankAddress.state',
        message: 'bankAddress.state must be provided and must be 1-3 letter ISO state code',
      },
      {
        path: 'details.bankAddress.country',
        message: 'bankAddress.country must be provided and must be 2-letter ISO country code',
      },
      { path: 'details.recipientAddress', message: 'recipientAddress must be provided' },
    ]);
  });
});

describe('validateRecipient: untrusted JSON', () => {
  const shapes: unknown[] = [
    undefined,
    null,
    0,
    Number.NaN,
    'ACH',
    true,
    [],
    [1, 2, 3],
    {},
    { type: {}, currency: [], details: { recipientAddress: 5 } },
    { type: 'SWIFT', currency: 'USD', details: { swiftCode: 5, iban: [], bankAddress: { country: {} } } },
    { type: 'SPEI', currency: 'MXN', details: { clabe: { length: 18 } } },
    { type: 'PIX', currency: 'BRL', details: { documentNumber: ['12345678909'] } },
    { type: 'COP', currency: 'COP', details: { thirdPartyWithdrawal: true, documentId: 7 } },
    { type: 'ACH', currency: 'USD', details: { recipientAddress: { state: 1, country: ['US'] } } },
    JSON.parse('{"__proto__": {"type": "ACH"}, "type": "toString", "details": {"constructor": 1}}'),
    Object.create(null),
    { type: 'constructor', currency: 'USD', details: {} },
  ];

  it.each(shapes)('never throws and returns issues with string paths and messages: %j', (shape) => {
    const issues = validateRecipient(shape);
    expect(Array.isArray(issues)).toBe(true);
    for (const issue of issues) {
      expect(typeof issue.path).toBe('string');
      expect(typeof issue.message).toBe('string');
    }
  });

  it('does not mutate its input', () => {
    const request = body('SWIFT', (r) => (r['details'] = { iban: 'x' }));
    const copy = structuredClone(request);
    validateRecipient(request);
    expect(request).toEqual(copy);
  });
});

describe('validateTypeAndCurrency', () => {
  it('checks presence, the rail and the rail currency', () => {
    expect(validateTypeAndCurrency('SPEI', 'MXN')).toEqual([]);
    expect(validateTypeAndCurrency(undefined, undefined)).toEqual([
      { path: 'currency', message: 'The field recipient.currency is required' },
      { path: 'type', message: 'The field recipient.type is required' },
    ]);
    expect(validateTypeAndCurrency('PIX', 'USD')).toEqual([
      { path: 'currency', message: 'The field recipient.currency must be BRL for PIX' },
    ]);
    expect(validateTypeAndCurrency('BOLETO', 'BRL')).toEqual([
      {
        path: 'type',
        message: 'The field recipient.type must be one of ACH, WIRE, SWIFT, RTP, SPEI, PIX, COP',
      },
    ]);
  });
});
