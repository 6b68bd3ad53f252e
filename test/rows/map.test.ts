import { describe, expect, it } from 'vitest';
import { CANONICAL_COLUMNS, type CanonicalColumn, type ColumnIndex } from '../../src/columns/columns.js';
import { mapRow } from '../../src/rows/map.js';
import type { PayoutRow, RowIssue } from '../../src/rows/types.js';
import type { Cell, RawRow } from '../../src/sheet/types.js';

/** A sheet's header: the canonical columns in the order given. */
function header(...columns: CanonicalColumn[]): ColumnIndex {
  return new Map(columns.map((column, i) => [column, i]));
}

/** Every canonical column, in the contract's order. */
const ALL: ColumnIndex = header(...CANONICAL_COLUMNS);

type Values = Partial<Record<CanonicalColumn, string | Cell>>;

/** A raw row as a CSV reader gives it: text cells, blank ones empty. */
function raw(values: Values, columns: ColumnIndex = ALL, rowNumber = 2): RawRow {
  const cells: Cell[] = Array.from({ length: columns.size }, () => ({ text: '', kind: 'empty' }));
  for (const [column, value] of Object.entries(values) as [CanonicalColumn, string | Cell][]) {
    const index = columns.get(column);
    if (index === undefined) throw new Error(`test header has no ${column}`);
    cells[index] =
      typeof value === 'string' ? { text: value, kind: value === '' ? 'empty' : 'string' } : value;
  }
  return { rowNumber, cells, problems: [] };
}

const number = (text: string): Cell => ({ text, kind: 'number' });

const ACH_ROW: Values = {
  reference: 'INV-1',
  amount: '1250.5',
  currency: 'USD',
  type: 'ach',
  beneficiaryType: 'individual',
  beneficiaryName: 'Ada Lovelace',
  beneficiaryEmail: 'ada@example.com',
  beneficiaryCountry: 'US',
  individualName: 'Ada Lovelace',
  nickname: 'Ada main',
  accountNumber: '000123456789',
  routingNumber: '021000021',
  bankName: 'JPMorgan Chase',
  bankCountry: 'US',
  accountType: 'Checking',
  'recipientAddress.street1': '1 Main St',
  'recipientAddress.city': 'New York',
  'recipientAddress.state': 'NY',
  'recipientAddress.postalCode': '10001',
  'recipientAddress.country': 'US',
};

/** The cells every payout row needs, for a rail, with an existing beneficiary. */
function rowFor(type: string, currency: string, individualName = 'J'): Values {
  return { reference: 'R1', amount: '1', currency, type, beneficiaryId: 'b', individualName };
}

const map = (values: Values, columns?: ColumnIndex) => mapRow(raw(values, columns), columns ?? ALL);
const issuesOf = (values: Values): RowIssue[] => map(values).issues;
const messagesOf = (values: Values): string[] => issuesOf(values).map((i) => i.message);

function newRecipient(payout: PayoutRow) {
  if (payout.recipient.kind !== 'new') throw new Error('expected a new recipient');
  return payout.recipient;
}

describe('mapRow: a complete row', () => {
  it('maps an ACH row with a new beneficiary to typed requests and no issues', () => {
    const payout = map(ACH_ROW);
    expect(payout.issues).toEqual([]);
    expect(payout.rowNumber).toBe(2);
    expect(payout.reference).toBe('INV-1');
    expect(payout.amount).toEqual({ minor: 125050n, text: '1250.50' });
    expect(payout.currency).toBe('USD');
    expect(payout.rail).toBe('ACH');
    // Keys are computed on first use (a getter), so they are checked apart from the shape.
    expect(payout.beneficiary.kind === 'new' && payout.beneficiary.key).toMatch(
      /^beneficiary:[A-Za-z0-9_-]{43}$/,
    );
    expect(payout.recipient.kind === 'new' && payout.recipient.key).toMatch(/^recipient:[A-Za-z0-9_-]{43}$/);
    const { kind: bKind, request: bRequest } = payout.beneficiary as { kind: string; request: unknown };
    expect({ kind: bKind, request: bRequest }).toEqual({
      kind: 'new',
      request: { type: 'INDIVIDUAL', name: 'Ada Lovelace', email: 'ada@example.com', country: 'US' },
    });
    const { kind: rKind, request: rRequest } = payout.recipient as { kind: string; request: unknown };
    expect({ kind: rKind, request: rRequest }).toEqual({
      kind: 'new',
      request: {
        individualName: 'Ada Lovelace',
        nickname: 'Ada main',
        currency: 'USD',
        type: 'ACH',
        details: {
          accountNumber: '000123456789',
          routingNumber: '021000021',
          bankName: 'JPMorgan Chase',
          bankCountry: 'US',
          accountType: 'Checking',
          recipientAddress: {
            street1: '1 Main St',
            city: 'New York',
            state: 'NY',
            postalCode: '10001',
            country: 'US',
          },
        },
      },
    });
  });

  it('trims cells and reads them by header position, in any column order', () => {
    const columns = header('amount', 'type', 'reference', 'currency', 'recipientId', 'beneficiaryId');
    const payout = mapRow(
      raw(
        {
          reference: '  INV-9 ',
          amount: ' 10 ',
          currency: ' MXN',
          type: ' spei ',
          recipientId: ' rcp_1 ',
          beneficiaryId: 'ben_1',
        },
        columns,
      ),
      columns,
    );
    expect(payout).toEqual({
      rowNumber: 2,
      reference: 'INV-9',
      amount: { minor: 1000n, text: '10.00' },
      currency: 'MXN',
      rail: 'SPEI',
      beneficiary: { kind: 'existing', id: 'ben_1' },
      recipient: { kind: 'existing', id: 'rcp_1' },
      issues: [],
    });
  });

  it('treats absent columns and short rows as empty', () => {
    const columns = header('reference', 'amount');
    const payout = mapRow({ rowNumber: 7, cells: [{ text: 'R1', kind: 'string' }], problems: [] }, columns);
    expect(payout.rowNumber).toBe(7);
    expect(payout.issues).toEqual([
      {
        column: 'amount',
        message: 'amount is required: enter the amount the recipient receives, e.g. 1250.00',
      },
      {
        column: 'individualName',
        message: 'The field recipient.individualName or recipient.businessName is required',
      },
      { column: 'beneficiaryId', message: 'The field recipient.beneficiaryId is required' },
      { column: 'currency', message: 'The field recipient.currency is required' },
      { column: 'type', message: 'The field recipient.type is required' },
      { message: 'The field recipient.details is required' },
    ]);
  });

  it("leaves the reader's record problems to the caller", () => {
    const row = raw(ACH_ROW);
    row.problems.push('row has 43 fields, the header has 42');
    expect(mapRow(row, ALL).issues).toEqual([]);
  });
});

describe('mapRow: reference, amount, currency and type', () => {
  it('requires a reference', () => {
    expect(issuesOf({ ...ACH_ROW, reference: '  ' })).toEqual([
      {
        column: 'reference',
        message: 'reference is required: give every payout a unique reference (invoice or payroll line)',
      },
    ]);
  });

  it.each([
    ['', 'amount is required: enter the amount the recipient receives, e.g. 1250.00'],
    [
      '12,50',
      'amount "12,50" uses a decimal comma, which only a semicolon-delimited CSV makes certain: write it as 12.50 with a "." for the decimals',
    ],
    [
      '-3',
      'amount "-3" is negative: a payout amount must be greater than 0, so remove the row or fix the amount cell',
    ],
  ])('reports amount %j on the amount column', (amount, message) => {
    const payout = map({ ...ACH_ROW, amount });
    expect(payout.amount).toBeUndefined();
    expect(payout.issues).toEqual([{ column: 'amount', message }]);
  });

  it('accepts an XLSX number amount', () => {
    expect(map({ ...ACH_ROW, amount: number('1250.5') }).amount).toEqual({ minor: 125050n, text: '1250.50' });
  });

  it('reads an XLSX number of 3 decimals as such, where the same text is two readings', () => {
    expect(map({ ...ACH_ROW, amount: number('10.005') }).issues).toEqual([
      {
        column: 'amount',
        message: 'amount "10.005" has more than 2 decimals: give the amount in cents at most (e.g. 1250.05)',
      },
    ]);
    expect(map({ ...ACH_ROW, amount: number('1250') }).amount).toEqual({ minor: 125000n, text: '1250.00' });
    expect(map({ ...ACH_ROW, amount: '10.005' }).issues[0]?.message).toMatch(
      /^amount "10\.005" is ambiguous: /,
    );
  });

  it('keeps an unknown type as given: its message, and details null', () => {
    const payout = map({ ...ACH_ROW, type: 'Sepa' });
    expect(payout.rail).toBeUndefined();
    expect(newRecipient(payout).request.type).toBe('Sepa');
    expect(newRecipient(payout).request.details).toBeNull();
    expect(payout.issues).toEqual([
      {
        column: 'type',
        message: 'The field recipient.type must be one of ACH, WIRE, SWIFT, RTP, SPEI, PIX, COP',
      },
      { message: 'The field recipient.details is required' },
    ]);
  });

  it("reports a currency that is not the rail's", () => {
    expect(issuesOf({ ...ACH_ROW, currency: 'MXN' })).toEqual([
      { column: 'currency', message: 'The field recipient.currency must be USD for ACH' },
    ]);
  });
});

describe('mapRow: beneficiary', () => {
  const noBeneficiary: Values = {
    ...ACH_ROW,
    beneficiaryType: '',
    beneficiaryName: '',
    beneficiaryEmail: '',
    beneficiaryCountry: '',
  };

  it('an existing beneficiary goes into the recipient request', () => {
    const payout = map({ ...noBeneficiary, beneficiaryId: 'ben_42' });
    expect(payout.beneficiary).toEqual({ kind: 'existing', id: 'ben_42' });
    expect(newRecipient(payout).request.beneficiaryId).toBe('ben_42');
    expect(payout.issues).toEqual([]);
  });

  it('a new beneficiary: no beneficiaryId in the request, and no "beneficiaryId is required"', () => {
    const payout = map(ACH_ROW);
    expect(newRecipient(payout).request).not.toHaveProperty('beneficiaryId');
    expect(payout.issues).toEqual([]);
  });

  it('no beneficiary at all: the service message on the beneficiaryId column', () => {
    const payout = map(noBeneficiary);
    expect(payout.beneficiary).toEqual({ kind: 'missing' });
    expect(payout.issues).toEqual([
      { column: 'beneficiaryId', message: 'The field recipient.beneficiaryId is required' },
    ]);
  });

  it.each(['true', 'TRUE', 'Yes', '1', { text: 'true', kind: 'boolean' } as Cell, number('1')])(
    'integratorLevel %j: integrator-level recipient without beneficiary',
    (integratorLevel) => {
      const payout = map({ ...noBeneficiary, integratorLevel });
      expect(payout.beneficiary).toEqual({ kind: 'integrator' });
      expect(newRecipient(payout).request.integratorLevel).toBe(true);
      expect(newRecipient(payout).request).not.toHaveProperty('beneficiaryId');
      expect(payout.issues).toEqual([]);
    },
  );

  it.each(['false', 'No', '0', { text: 'false', kind: 'boolean' } as Cell])(
    'integratorLevel %j is not integrator-level',
    (integratorLevel) => {
      const payout = map({ ...noBeneficiary, integratorLevel });
      expect(payout.beneficiary).toEqual({ kind: 'missing' });
      expect(newRecipient(payout).request).not.toHaveProperty('integratorLevel');
    },
  );

  it('an unreadable integratorLevel is an issue on its column', () => {
    expect(issuesOf({ ...noBeneficiary, integratorLevel: 'maybe' })).toEqual([
      {
        column: 'integratorLevel',
        message:
          'integratorLevel "maybe" is not true or false: write true or false (yes/no and 1/0 also work), or leave the cell empty for false',
      },
      { column: 'beneficiaryId', message: 'The field recipient.beneficiaryId is required' },
    ]);
  });

  it('integratorLevel true with a beneficiary named is a contradiction', () => {
    const message =
      'integratorLevel is true but the row also names a beneficiary (beneficiaryId or beneficiaryType, beneficiaryName, beneficiaryEmail, beneficiaryCountry): an integrator-level recipient has no beneficiary, so clear integratorLevel or the beneficiary cells';
    expect(issuesOf({ ...ACH_ROW, integratorLevel: 'true' })).toEqual([
      { column: 'integratorLevel', message },
    ]);
    const withId = map({ ...noBeneficiary, beneficiaryId: 'ben_1', integratorLevel: 'yes' });
    expect(withId.beneficiary).toEqual({ kind: 'existing', id: 'ben_1' });
    expect(withId.issues).toEqual([{ column: 'integratorLevel', message }]);
  });

  it('validates a new beneficiary and names its columns', () => {
    const payout = map({
      ...ACH_ROW,
      beneficiaryType: 'person',
      beneficiaryEmail: 'ada',
      beneficiaryCountry: 'UK',
    });
    expect(payout.issues).toEqual([
      {
        column: 'beneficiaryType',
        message: 'beneficiary.type must be provided - possible values - INDIVIDUAL,BUSINESS',
      },
      { column: 'beneficiaryEmail', message: 'beneficiary.email must be a valid e-mail address' },
      {
        column: 'beneficiaryCountry',
        message: 'beneficiary.country must be provided and must be 2-letter ISO country code',
      },
    ]);
  });

  it('one beneficiary cell is enough to ask for a new beneficiary', () => {
    const payout = map({ ...noBeneficiary, beneficiaryEmail: 'ada@example.com' });
    expect(payout.beneficiary.kind).toBe('new');
    expect(payout.issues.map((i) => i.column)).toEqual([
      'beneficiaryType',
      'beneficiaryName',
      'beneficiaryCountry',
    ]);
  });
});

describe('mapRow: recipient', () => {
  it('an existing recipient: recipient columns are not read, type and currency are', () => {
    const payout = map({
      reference: 'R1',
      amount: '5',
      currency: 'USD',
      type: 'PIX',
      recipientId: 'rcp_1',
      documentNumber: number('123'),
    });
    expect(payout.recipient).toEqual({ kind: 'existing', id: 'rcp_1' });
    expect(payout.issues).toEqual([
      { column: 'currency', message: 'The field recipient.currency must be BRL for PIX' },
    ]);
    expect(messagesOf({ reference: 'R1', amount: '5', recipientId: 'rcp_1' })).toEqual([
      'The field recipient.currency is required',
      'The field recipient.type is required',
    ]);
  });

  it('a business recipient', () => {
    const payout = map({
      ...ACH_ROW,
      individualName: '',
      businessName: 'Acme Inc',
      countryOfIncorporation: 'US',
    });
    expect(newRecipient(payout).request).toMatchObject({
      businessName: 'Acme Inc',
      countryOfIncorporation: 'US',
    });
    expect(newRecipient(payout).request).not.toHaveProperty('individualName');
    expect(payout.issues).toEqual([]);
  });

  it('a rail reads only its own detail columns', () => {
    const payout = map({
      ...rowFor('SPEI', 'MXN', 'Juan Pérez'),
      clabe: '032180000118359719',
      bankCode: '032',
      receiverName: 'Juan Pérez',
      routingNumber: number('21000021'),
      iban: 'garbage',
      'recipientAddress.city': 'CDMX',
    });
    expect(newRecipient(payout).request.details).toEqual({
      clabe: '032180000118359719',
      bankCode: '032',
      receiverName: 'Juan Pérez',
    });
    expect(payout.issues).toEqual([]);
  });

  it('no detail cell of the rail filled: details null and the service message', () => {
    const payout = map({
      ...rowFor('PIX', 'BRL'),
    });
    expect(newRecipient(payout).request.details).toBeNull();
    expect(payout.issues).toEqual([{ message: 'The field recipient.details is required' }]);
  });

  it('an address with no cell filled is missing; one cell makes it an object', () => {
    const withoutAddress: Values = { ...ACH_ROW };
    for (const f of ['street1', 'city', 'state', 'postalCode', 'country'] as const) {
      withoutAddress[`recipientAddress.${f}`] = '';
    }
    expect(issuesOf(withoutAddress)).toEqual([{ message: 'recipientAddress must be provided' }]);

    const cityOnly = map({ ...withoutAddress, 'recipientAddress.city': 'Boston' });
    expect(newRecipient(cityOnly).request.details?.['recipientAddress']).toEqual({ city: 'Boston' });
    expect(cityOnly.issues).toEqual([
      { column: 'recipientAddress.street1', message: 'recipientAddress.street1 must be provided' },
      {
        column: 'recipientAddress.state',
        message: 'recipientAddress.state must be provided and must be 1-3 letter ISO state code',
      },
      { column: 'recipientAddress.postalCode', message: 'recipientAddress.postalCode must be provided' },
      {
        column: 'recipientAddress.country',
        message: 'recipientAddress.country must be provided and must be 2-letter ISO country code',
      },
    ]);
  });

  it('WIRE and SWIFT read bankAddress; paths become columns', () => {
    const payout = map({
      ...rowFor('SWIFT', 'USD', 'Hans'),
      swiftCode: 'DEUTDEFF',
      bankName: 'Deutsche Bank',
      iban: 'DE89370400440532013001',
      'bankAddress.street1': 'Taunusanlage 12',
      'bankAddress.city': 'Frankfurt',
      'bankAddress.state': 'HE',
      'bankAddress.postalCode': '60325',
      'bankAddress.country': 'US',
    });
    expect(payout.issues).toEqual([
      { message: 'recipientAddress must be provided' },
      {
        column: 'bankAddress.country',
        message: 'bankAddress.country should be WIRE not SWIFT when country is US',
      },
      { column: 'iban', message: 'iban is invalid' },
    ]);
  });

  describe('COP thirdPartyWithdrawal', () => {
    const COP_ROW: Values = {
      ...rowFor('COP', 'COP', 'Camila'),
      accountType: 'SAVINGS',
      bankAccount: '1234567890',
      bankCode: '1007',
    };

    it('empty is false', () => {
      const payout = map(COP_ROW);
      expect(newRecipient(payout).request.details?.['thirdPartyWithdrawal']).toBe(false);
      expect(payout.issues).toEqual([]);
    });

    it('yes is the JSON true and asks for the three fields', () => {
      const payout = map({ ...COP_ROW, thirdPartyWithdrawal: 'YES' });
      expect(newRecipient(payout).request.details?.['thirdPartyWithdrawal']).toBe(true);
      expect(payout.issues).toEqual([
        { column: 'documentId', message: 'documentId must be provided for third party withdrawals' },
        { column: 'documentType', message: 'documentType must be provided for third party withdrawals' },
        { column: 'email', message: 'email must be provided for third party withdrawals' },
      ]);
    });

    it('an unreadable value is an issue and is not guessed', () => {
      const payout = map({ ...COP_ROW, thirdPartyWithdrawal: 'perhaps' });
      expect(newRecipient(payout).request.details).not.toHaveProperty('thirdPartyWithdrawal');
      expect(payout.issues).toEqual([
        {
          column: 'thirdPartyWithdrawal',
          message:
            'thirdPartyWithdrawal "perhaps" is not true or false: write true or false (yes/no and 1/0 also work), or leave the cell empty for false',
        },
      ]);
    });

    it('thirdPartyWithdrawal alone counts as a filled detail cell', () => {
      const payout = map({
        ...rowFor('COP', 'COP', 'C'),
        thirdPartyWithdrawal: 'no',
      });
      expect(newRecipient(payout).request.details).toEqual({ thirdPartyWithdrawal: false });
    });
  });
});

describe('mapRow: spreadsheet damage (docs/sheets.md)', () => {
  it('an identifier stored as a number: damage first, then the service message on the text', () => {
    expect(issuesOf({ ...ACH_ROW, routingNumber: number('21000021') })).toEqual([
      {
        column: 'routingNumber',
        message:
          'routingNumber arrived as a number (21000021): a spreadsheet dropped its leading zeros or digits. Format the routingNumber column as Text, re-enter the value and save again.',
      },
      { column: 'routingNumber', message: 'routingNumber must be 9 characters long' },
    ]);
  });

  it('even a number that happens to be valid is reported', () => {
    expect(messagesOf({ ...ACH_ROW, accountNumber: number('123456789') })).toEqual([
      'accountNumber arrived as a number (123456789): a spreadsheet dropped its leading zeros or digits. Format the accountNumber column as Text, re-enter the value and save again.',
    ]);
  });

  it('scientific notation, as text (CSV saved by a spreadsheet) or as a number', () => {
    expect(issuesOf({ ...ACH_ROW, routingNumber: '2.1E+08' })).toEqual([
      {
        column: 'routingNumber',
        message:
          'routingNumber arrived in scientific notation (2.1E+08): a spreadsheet rounded the number and its digits are lost. Format the routingNumber column as Text, re-enter the full value and save again.',
      },
      { column: 'routingNumber', message: 'routingNumber must be 9 characters long' },
    ]);
    expect(messagesOf({ ...ACH_ROW, routingNumber: '2.100E+08' })).toContain('routingNumber is invalid');
    const spei: Values = {
      ...rowFor('SPEI', 'MXN'),
      bankCode: '032',
      receiverName: 'J',
    };
    expect(issuesOf({ ...spei, clabe: number('3.2180000118359716e+16') })).toEqual([
      {
        column: 'clabe',
        message:
          'clabe arrived in scientific notation (3.2180000118359716e+16): a spreadsheet rounded the number and its digits are lost. Format the clabe column as Text, re-enter the full value and save again.',
      },
      { column: 'clabe', message: 'clabe must be 18 digits long' },
    ]);
    expect(issuesOf({ ...spei, clabe: number('32180000118359720') })).toEqual([
      {
        column: 'clabe',
        message:
          'clabe arrived as a number with more than 15 digits (32180000118359720): a spreadsheet keeps only 15 digits and replaced the rest. Format the clabe column as Text, re-enter the full value and save again.',
      },
      { column: 'clabe', message: 'clabe must be 18 digits long' },
    ]);
  });

  it('a long digit string typed as text is not damage', () => {
    const payout = map({
      ...rowFor('SPEI', 'MXN'),
      clabe: '032180000118359719',
      bankCode: '032',
      receiverName: 'J',
    });
    expect(payout.issues).toEqual([]);
  });

  it('an account number with letters and an E is not scientific notation', () => {
    expect(issuesOf({ ...ACH_ROW, accountNumber: '12E45' })).toEqual([]);
  });

  it('columns the rail does not use, and non-identifier columns, are not reported', () => {
    expect(
      issuesOf({ ...ACH_ROW, clabe: number('1'), documentNumber: '1.2E+10', bankName: number('7') }),
    ).toEqual([]);
  });

  it('PIX documentNumber as a number', () => {
    const payout = map({
      ...rowFor('PIX', 'BRL', 'João'),
      pixKey: 'joao@example.com',
      documentNumber: number('1234567890'),
    });
    expect(payout.issues.map((i) => i.message)).toEqual([
      'documentNumber arrived as a number (1234567890): a spreadsheet dropped its leading zeros or digits. Format the documentNumber column as Text, re-enter the value and save again.',
      'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
    ]);
  });
});

describe('mapRow: dedupe keys', () => {
  const other: Values = { ...ACH_ROW, reference: 'INV-2', amount: '99.99' };

  it('rows naming the same beneficiary and recipient share their keys', () => {
    const a = map(ACH_ROW);
    const b = map(other);
    expect(a.beneficiary.kind === 'new' && a.beneficiary.key).toBe(
      b.beneficiary.kind === 'new' && b.beneficiary.key,
    );
    expect(newRecipient(a).key).toBe(newRecipient(b).key);
  });

  it('the beneficiary type is matched in any case', () => {
    const a = map(ACH_ROW);
    const b = map({ ...other, beneficiaryType: 'INDIVIDUAL' });
    expect(a.beneficiary).toEqual(b.beneficiary);
  });

  it('a different beneficiary field gives another beneficiary, and so another recipient', () => {
    const a = map(ACH_ROW);
    const b = map({ ...other, beneficiaryEmail: 'ada@example.org' });
    expect(a.beneficiary.kind === 'new' && a.beneficiary.key).not.toBe(
      b.beneficiary.kind === 'new' && b.beneficiary.key,
    );
    expect(newRecipient(a).request).toEqual(newRecipient(b).request);
    expect(newRecipient(a).key).not.toBe(newRecipient(b).key);
  });

  it.each([
    ['accountNumber', '000123456780'],
    ['nickname', 'Ada savings'],
    ['recipientAddress.postalCode', '10002'],
  ] as [CanonicalColumn, string][])('a different %s gives another recipient', (column, value) => {
    expect(newRecipient(map(ACH_ROW)).key).not.toBe(newRecipient(map({ ...other, [column]: value })).key);
  });

  it('the same recipient under different existing beneficiaries is two recipients', () => {
    const a = map({ ...ACH_ROW, beneficiaryId: 'ben_1' });
    const b = map({ ...ACH_ROW, beneficiaryId: 'ben_2' });
    expect(newRecipient(a).key).not.toBe(newRecipient(b).key);
  });

  it('column order in the sheet does not change the keys', () => {
    const reversed = header(...([...ALL.keys()].reverse() as CanonicalColumn[]));
    expect(map(ACH_ROW, reversed).recipient).toEqual(map(ACH_ROW).recipient);
  });

  it('keys carry no account data', () => {
    const key = newRecipient(map(ACH_ROW)).key;
    expect(key).not.toContain('000123456789');
    expect(key).not.toContain('Ada');
  });
});

describe('mapRow: text as people type it', () => {
  it('reads the currency in any case: usd is USD, and the rail in any case', () => {
    const payout = map({ ...ACH_ROW, currency: ' usd ', type: 'ach' });
    expect(payout.issues).toEqual([]);
    expect(payout.currency).toBe('USD');
    expect(payout.rail).toBe('ACH');
    expect(payout.recipient.kind === 'new' && payout.recipient.request.currency).toBe('USD');
  });

  it('normalises names before mapping: a no-break space and a plain one are one payee', () => {
    const plain = map({ ...ACH_ROW, beneficiaryName: 'Ada Lovelace', individualName: 'Ada Lovelace' });
    const nbsp = map({
      ...ACH_ROW,
      beneficiaryName: 'Ada\u00a0Lovelace\u200b',
      individualName: 'Ada\u00a0Lovelace ',
    });
    expect(nbsp.beneficiary.kind === 'new' && nbsp.beneficiary.request.name).toBe('Ada Lovelace');
    expect(nbsp.recipient.kind === 'new' && nbsp.recipient.request.individualName).toBe('Ada Lovelace');
    expect(nbsp.beneficiary.kind === 'new' && nbsp.beneficiary.key).toBe(
      plain.beneficiary.kind === 'new' && plain.beneficiary.key,
    );
    expect(nbsp.recipient.kind === 'new' && nbsp.recipient.key).toBe(
      plain.recipient.kind === 'new' && plain.recipient.key,
    );
  });

  it('reads a grouped amount and says so', () => {
    expect(map({ ...ACH_ROW, amount: '1,250.00' }).amount).toEqual({
      minor: 125000n,
      text: '1250.00',
      grouped: true,
    });
  });

  it('reads a decimal comma only when the sheet says so', () => {
    const values = { ...ACH_ROW, amount: '1.250,00' };
    expect(mapRow(raw(values), ALL).amount).toBeUndefined();
    expect(mapRow(raw(values), ALL, { decimalComma: true }).amount?.minor).toBe(125000n);
  });
});
