/** Redaction replaces secrets, never words (errors.ts redactSecrets). */
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/errors.js';

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
