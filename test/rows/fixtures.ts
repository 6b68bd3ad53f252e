/** Valid RecipientRequest bodies per rail, and helpers to spoil them one field at a time. */
import type { Rail } from '../../src/columns/rails.js';

export type Json = Record<string, unknown>;

export const US_ADDRESS = {
  street1: '1 Main St',
  city: 'New York',
  state: 'NY',
  postalCode: '10001',
  country: 'US',
};
export const DE_ADDRESS = {
  street1: 'Taunusanlage 12',
  city: 'Frankfurt',
  state: 'HE',
  postalCode: '60325',
  country: 'DE',
};

const common = { individualName: 'Ada Lovelace', beneficiaryId: 'ben_123', nickname: 'Ada main' };

export const VALID: Record<Rail, Json> = {
  ACH: {
    ...common,
    currency: 'USD',
    type: 'ACH',
    details: {
      accountNumber: '000123456789',
      routingNumber: '021000021',
      bankName: 'JPMorgan Chase',
      bankCountry: 'US',
      accountType: 'Checking',
      recipientAddress: US_ADDRESS,
    },
  },
  WIRE: {
    ...common,
    currency: 'USD',
    type: 'WIRE',
    details: {
      accountNumber: '000123456789',
      routingNumber: '011000015',
      bankName: 'Federal Reserve Bank of Boston',
      bankAddress: US_ADDRESS,
      recipientAddress: US_ADDRESS,
    },
  },
  SWIFT: {
    ...common,
    currency: 'USD',
    type: 'SWIFT',
    details: {
      swiftCode: 'DEUTDEFF',
      bankName: 'Deutsche Bank',
      bankAddress: DE_ADDRESS,
      recipientAddress: DE_ADDRESS,
      iban: 'DE89370400440532013000',
    },
  },
  RTP: {
    ...common,
    currency: 'USD',
    type: 'RTP',
    details: { accountNumber: '000123456789', routingNumber: '021000021' },
  },
  SPEI: {
    ...common,
    currency: 'MXN',
    type: 'SPEI',
    details: { clabe: '032180000118359719', bankCode: '032', receiverName: 'Juan Pérez' },
  },
  PIX: {
    ...common,
    currency: 'BRL',
    type: 'PIX',
    details: { pixKey: 'joao@example.com', documentNumber: '123.456.789-09' },
  },
  COP: {
    ...common,
    currency: 'COP',
    type: 'COP',
    details: {
      accountType: 'SAVINGS',
      bankAccount: '1234567890',
      bankCode: '1007',
      thirdPartyWithdrawal: false,
    },
  },
};

/** A deep copy of the rail's valid body with `change` applied to it. */
export function body(rail: Rail, change: (request: Json) => void = () => {}): Json {
  const request = structuredClone(VALID[rail]);
  change(request);
  return request;
}

/** A deep copy of the rail's valid body with `change` applied to its details. */
export function details(rail: Rail, change: (details: Json) => void): Json {
  return body(rail, (request) => change(request['details'] as Json));
}

/** A deep copy with `change` applied to one address object of the details. */
export function address(
  rail: Rail,
  addr: 'recipientAddress' | 'bankAddress',
  change: (address: Json) => void,
): Json {
  return details(rail, (d) => change(d[addr] as Json));
}
