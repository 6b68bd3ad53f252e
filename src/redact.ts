/**
 * What payouts never shows: secrets, replaced by `[REDACTED]` (a URL's password by `***`), and
 * account numbers, masked to their last four characters. One policy wherever text leaves the
 * process: error messages (and so the results file) have their secrets redacted, logs and the
 * register their secrets and accounts. Secrets are replaced, never words: prose that names a
 * password keeps its words. In a logged object the field decides first: an account field is
 * masked whatever it holds, a money or count field is never touched whatever its digits; only
 * free text is searched for account-like digit runs, and an amount (digits with decimals) is
 * never one.
 */

/** Keys whose values are secrets wherever they stand in a logged object. */
export const SECRET_KEYS: readonly string[] = [
  'password',
  'client_secret',
  'clientSecret',
  'access_token',
  'refresh_token',
  'accessToken',
  'refreshToken',
  'authorization',
  'Authorization',
  'secret',
  'webhookSecret',
  'credentials',
];

const SECRET_PATTERNS: RegExp[] = [
  // The password of a URL's user info (a database URL), shown as register/location.ts shows it:
  // postgres://user:***@host.
  // The user info ends at the last @ of the address: a password may hold # / ? @ or :.
  /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)\S*(@)/gi,
  // A credential given as a value: `password=...` (a form, a query), `"secret": "..."` (JSON).
  // Prose that names one ("the client secret: the service refuses it") keeps its words.
  /(client_secret|password|access_token|refresh_token|secret|token)(\s*=\s*["']?|["']\s*:\s*["']?|\s*:\s*["'])[^"'&\s,}]+/gi,
  /(Bearer\s+)[A-Za-z0-9\-_.~+/]+=*/g,
  // A bare JWT (the service's access and refresh tokens are JWTs: docs/service.md, "Signing in"), wherever it stands.
  /()()\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/g,
];

/** Replaces anything that looks like a credential or token with [REDACTED]. */
export function redactSecrets(text: string): string {
  let out = text;
  // A pattern with one group gets the match offset (a number) as its second argument: keep strings only.
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (_m, a: string, b: unknown) =>
      pattern === SECRET_PATTERNS[0] ? `${a}***${b}` : `${a}${typeof b === 'string' ? b : ''}[REDACTED]`,
    );
  }
  return out;
}

/** The last four characters, the rest hidden: enough for a person to recognise the account. */
export function mask(value: string): string {
  return value.length <= 4 ? '****' : `****${value.slice(-4)}`;
}

/** Fields of a logged object that hold an account or document identifier: always masked. */
export const ACCOUNT_KEYS: ReadonlySet<string> = new Set([
  'accountNumber',
  'routingNumber',
  'iban',
  'clabe',
  'bankAccount',
  'documentNumber',
  'documentId',
  'pixKey',
]);

/**
 * Fields of a logged object that hold money or counts (a row's amount, the totals per currency,
 * the count per status): kept exactly, since a cron job reads its totals from the log.
 */
export const MONEY_KEYS: ReadonlySet<string> = new Set([
  'amount',
  'amounts',
  'total',
  'totals',
  'validTotals',
  'sendTotals',
  'expectTotals',
  'maxAmounts',
  'count',
  'counts',
  'rows',
  'statuses',
]);

// A UUID or a SHA-256 digest in hex (left alone: ids of the service and batch digests are not
// account data, even where they begin with eight digits), an IBAN, or a run of 8 or more
// digits (account, routing, CLABE, document numbers) that is not part of an amount: digits
// with decimals (315000000.00, or 315000000,00 in a decimal-comma sheet) are money, not an account.
const MASKABLE =
  /\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b|\b[0-9a-f]{64}\b|\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b|(?<![\d.,])\d{8,}(?![.,]?\d)/g;
const LEFT_ALONE = /^[0-9A-Fa-f]{8}-|^[0-9a-f]{64}$/;

/** Masks account numbers, IBANs and other long digit runs in text, keeping their last 4. */
export function maskAccountNumbers(text: string): string {
  return text.replace(MASKABLE, (match) => (LEFT_ALONE.test(match) ? match : mask(match)));
}

/** Text as it may leave the process (a log line, the register): secrets redacted, accounts masked. */
export function scrub(text: string): string {
  return maskAccountNumbers(redactSecrets(text));
}

/**
 * A logged value, deeply, field by field: secret fields redacted, account fields masked, money
 * and count fields kept as they are, every other string scrubbed.
 */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubField(k, v, depth + 1);
  return out;
}

function scrubField(key: string, value: unknown, depth: number): unknown {
  if (SECRET_KEYS.includes(key)) return '[REDACTED]';
  if (MONEY_KEYS.has(key)) return value;
  if (ACCOUNT_KEYS.has(key) && (typeof value === 'string' || typeof value === 'number'))
    return mask(String(value));
  return scrubValue(value, depth);
}
