/** One policy for what never leaves the process: secrets redacted (never words), accounts masked (redact.ts). */
import { describe, expect, it } from 'vitest';
import { maskAccountNumbers, redactSecrets, scrub, scrubValue } from '../../src/redact.js';

describe('redactSecrets', () => {
  it.each([
    [
      'grant_type=password&client_secret=cs-123&password=pw-456',
      'grant_type=password&client_secret=[REDACTED]&password=[REDACTED]',
    ],
    [
      '{"access_token":"abc.def","refresh_token": "r-1"}',
      '{"access_token":"[REDACTED]","refresh_token": "[REDACTED]"}',
    ],
    ["secret: 'hunter2'", "secret: '[REDACTED]'"],
    ['Authorization: Bearer eyJhbGciOi.x.y', 'Authorization: Bearer [REDACTED]'],
    ['the token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-part expired', 'the token [REDACTED] expired'],
    ['postgres://payouts:s3cret@db:5432/payouts', 'postgres://payouts:***@db:5432/payouts'],
    // Words stay words.
    [
      'the client secret: the service refuses these credentials',
      'the client secret: the service refuses these credentials',
    ],
    ['token: refused by the identity endpoint', 'token: refused by the identity endpoint'],
    ['password reset needed', 'password reset needed'],
  ])('%s', (text, redacted) => {
    expect(redactSecrets(text)).toBe(redacted);
  });
});

describe('maskAccountNumbers', () => {
  it.each([
    ['account 000123456789 closed', 'account ****6789 closed'],
    ['iban DE89370400440532013000', 'iban ****3000'],
    ['clabe 002010077777777771', 'clabe ****7771'],
    ['ref-000123456789', 'ref-****6789'],
    ['transaction 3f9c90b5-d90d-4b29-ac33-a1453ad9dfb2', 'transaction 3f9c90b5-d90d-4b29-ac33-a1453ad9dfb2'],
    ['integrator 11111111-1111-4111-8111-111111111111', 'integrator 11111111-1111-4111-8111-111111111111'],
    ['row 1834 amount 1250.00', 'row 1834 amount 1250.00'],
    // A batch digest is no account number, even when it begins with eight digits.
    [
      'digest 12345678e4c9d0f3a8b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3',
      'digest 12345678e4c9d0f3a8b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3',
    ],
  ])('%s', (input, expected) => {
    expect(maskAccountNumbers(input)).toBe(expected);
  });
});

describe('scrub: text as the register and the logs keep it', () => {
  it('redacts the secrets and masks the accounts, and leaves ids, digests and amounts', () => {
    expect(
      scrub(
        'transaction 11111111-1111-4111-8111-111111111111 to 000123456789 (DE89370400440532013000) refused for 1250.00: password=pw-1',
      ),
    ).toBe(
      'transaction 11111111-1111-4111-8111-111111111111 to ****6789 (****3000) refused for 1250.00: password=[REDACTED]',
    );
  });
});

// Amounts of 8 to 16 digits (315,000,000.00 COP is an ordinary payroll in pesos), in every
// currency of the rails, as the logs and the register hold them.
const LARGE_AMOUNTS = ['USD', 'MXN', 'BRL', 'COP'].flatMap((currency) =>
  [8, 9, 10, 12, 14, 16].map((digits) => {
    const whole = `3${'1'.repeat(digits - 1)}`;
    return { currency, whole, decimal: `${whole}.00`, comma: `${whole},50` };
  }),
);

describe('amounts, totals and counts are never masked', () => {
  it.each(LARGE_AMOUNTS)(
    '$currency $decimal in money fields, kept exactly',
    ({ currency, whole, decimal }) => {
      const logged = {
        totals: { [currency]: decimal },
        validTotals: { [currency]: decimal },
        sendTotals: { [currency]: whole },
        amount: decimal,
        counts: { submitted: Number(whole) },
        rows: Number(whole),
      };
      expect(scrubValue(logged)).toEqual(logged);
    },
  );

  it.each(LARGE_AMOUNTS)('$currency $decimal in words, kept exactly', ({ currency, decimal, comma }) => {
    const text = `paid ${decimal} ${currency} (sheet said ${comma}); total ${currency}=${decimal}`;
    expect(scrub(text)).toBe(text);
    expect(scrubValue({ msg: text })).toEqual({ msg: text });
  });
});

describe('scrubValue: by field', () => {
  it.each([
    ['accountNumber', '000123456789', '****6789'],
    ['routingNumber', '021000021', '****0021'],
    ['iban', 'DE89370400440532013000', '****3000'],
    ['clabe', '002010077777777771', '****7771'],
    ['bankAccount', '1234', '****'],
    ['documentNumber', '123.456.789-09', '****9-09'],
    ['pixKey', 'ana@example.com', '****.com'],
  ])('%s %s is masked whatever it holds', (key, value, masked) => {
    expect(scrubValue({ details: { [key]: value } })).toEqual({ details: { [key]: masked } });
  });

  it('redacts secret fields and still masks account numbers in free text', () => {
    expect(
      scrubValue({ password: 'pw-1', error: 'account 000123456789 closed', totals: { USD: '12345678.00' } }),
    ).toEqual({ password: '[REDACTED]', error: 'account ****6789 closed', totals: { USD: '12345678.00' } });
  });
});
