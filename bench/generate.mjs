// Generates benchmark sheets: valid rows cycling through all seven rails, with beneficiaries
// shared by a few rows each. Written with streams, so generation itself stays small.

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import ExcelJS from 'exceljs';

export const COLUMNS = [
  'reference',
  'amount',
  'currency',
  'type',
  'beneficiaryType',
  'beneficiaryName',
  'beneficiaryEmail',
  'beneficiaryCountry',
  'individualName',
  'businessName',
  'countryOfIncorporation',
  'nickname',
  'accountNumber',
  'routingNumber',
  'bankName',
  'bankCountry',
  'accountType',
  'swiftCode',
  'iban',
  'clabe',
  'bankCode',
  'receiverName',
  'pixKey',
  'documentNumber',
  'bankAccount',
  'thirdPartyWithdrawal',
  'documentId',
  'documentType',
  'email',
  'recipientAddress.street1',
  'recipientAddress.city',
  'recipientAddress.state',
  'recipientAddress.postalCode',
  'recipientAddress.country',
  'bankAddress.street1',
  'bankAddress.city',
  'bankAddress.state',
  'bankAddress.postalCode',
  'bankAddress.country',
];

const usAddress = {
  street1: '350 Fifth Ave',
  city: 'New York',
  state: 'NY',
  postalCode: '10118',
  country: 'US',
};
const deAddress = {
  street1: 'Taunusanlage 12',
  city: 'Frankfurt',
  state: 'HE',
  postalCode: '60325',
  country: 'DE',
};
const address = (prefix, a) => Object.fromEntries(Object.entries(a).map(([k, v]) => [`${prefix}.${k}`, v]));

const RAIL_ROWS = [
  {
    currency: 'USD',
    type: 'ACH',
    accountNumber: '000123456789',
    routingNumber: '021000021',
    bankName: 'JPMorgan Chase',
    bankCountry: 'US',
    accountType: 'Checking',
    ...address('recipientAddress', usAddress),
  },
  {
    currency: 'USD',
    type: 'WIRE',
    accountNumber: '4820019933',
    routingNumber: '026009593',
    bankName: 'Bank of America',
    ...address('bankAddress', usAddress),
    ...address('recipientAddress', usAddress),
  },
  {
    currency: 'USD',
    type: 'SWIFT',
    swiftCode: 'DEUTDEFF',
    iban: 'DE89370400440532013000',
    bankName: 'Deutsche Bank',
    ...address('bankAddress', deAddress),
    ...address('recipientAddress', deAddress),
  },
  { currency: 'USD', type: 'RTP', accountNumber: '7730012345', routingNumber: '121000358' },
  {
    currency: 'MXN',
    type: 'SPEI',
    clabe: '002010077777777771',
    bankCode: '002',
    receiverName: 'Maria Fernandez',
  },
  { currency: 'BRL', type: 'PIX', pixKey: 'joao@example.com.br', documentNumber: '123.456.789-09' },
  {
    currency: 'COP',
    type: 'COP',
    accountType: 'SAVINGS',
    bankAccount: '0012345678',
    bankCode: '1007',
    thirdPartyWithdrawal: 'false',
  },
];

/**
 * The account of row i when every payee is another (`distinct`): the rails whose account is free
 * text get one made of the row number; SWIFT's IBAN and SPEI's CLABE, which carry check digits,
 * stay as they are.
 */
function distinctAccount(rail, i) {
  const n = String(i).padStart(8, '0');
  if (rail.accountNumber) return { accountNumber: `00${n}` };
  if (rail.pixKey) return { pixKey: `payee${n}@example.com.br` };
  if (rail.bankAccount) return { bankAccount: `00${n}` };
  return {};
}

/**
 * The i-th benchmark row as an array of cell texts in COLUMNS order. By default the rows of a
 * rail share its one account (7 payee accounts in all); `{ distinct: true }` gives most rows a
 * payee account of their own.
 */
export function benchRow(i, { distinct = false, prefix = 'BENCH' } = {}) {
  const rail = RAIL_ROWS[i % RAIL_ROWS.length];
  const person = Math.floor(i / 3);
  const row = {
    reference: `${prefix}-${String(i).padStart(8, '0')}`,
    amount: `${(i % 9000) + 10}.${String(i % 100).padStart(2, '0')}`,
    beneficiaryType: 'INDIVIDUAL',
    beneficiaryName: `Person ${person}`,
    beneficiaryEmail: `person${person}@example.com`,
    beneficiaryCountry: 'US',
    individualName: `Person ${person}`,
    nickname: `Payroll ${person}`,
    ...rail,
    ...(distinct ? distinctAccount(rail, i) : {}),
  };
  return COLUMNS.map((c) => row[c] ?? '');
}

function csvLine(cells) {
  return `${cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',')}\r\n`;
}

/** Writes a CSV of `rows` data rows (`options` as benchRow's). */
export async function generateCsv(path, rows, options = {}) {
  const out = createWriteStream(path);
  let buffer = csvLine(COLUMNS);
  for (let i = 0; i < rows; i += 1) {
    buffer += csvLine(benchRow(i, options));
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}

/** Writes an XLSX of `rows` data rows with the exceljs streaming writer (shared strings off). */
export async function generateXlsx(path, rows) {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: false,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet('Payouts');
  sheet.addRow(COLUMNS).commit();
  for (let i = 0; i < rows; i += 1) sheet.addRow(benchRow(i)).commit();
  sheet.commit();
  await workbook.commit();
}
