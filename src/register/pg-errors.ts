/**
 * What a failure of a PostgreSQL register means, in words a person can act on (never a bare
 * SQLSTATE), and whether it is an outage: something a restart, a failover, a cut connection
 * or a stall causes and that goes away by itself, which a run waits through for up to
 * --max-outage, as opposed to a refusal (a wrong password, a missing database, an untrusted
 * certificate) that waiting does not mend (docs/register.md, "When the register fails").
 */

/** A register failure: its words, with the code in parentheses, and whether it is an outage. */
export interface PgFailure {
  words: string;
  outage: boolean;
}

/** SQLSTATEs by code: words, and whether the failure passes by itself. */
const SQLSTATES: Record<string, [string, boolean]> = {
  '57P01': ['the PostgreSQL server is shutting down', true],
  '57P02': ['the PostgreSQL server is restarting after a crash', true],
  '57P03': ['the PostgreSQL server is restarting', true],
  '57P05': ['the PostgreSQL server closed an idle connection', true],
  '57014': ['a statement ran past its deadline and was cancelled', true],
  '25P03': ['the PostgreSQL server closed a connection left idle inside a transaction', true],
  '25006': ['the database is read-only here (a standby, as during a failover)', true],
  '53300': ['the PostgreSQL server has no free connection', true],
  '53100': ['the database server has no space left on its disk', true],
  '53200': ['the database server is out of memory', true],
  '55P03': ['it is locked by another payouts process (waited past the lock timeout)', true],
  '40001': ['a transaction met another one at the same moment (serialization failure)', true],
  '40P01': ['a transaction met another one in a deadlock', true],
  '28P01': ['the database refused the user name or password', false],
  '28000': ['the database refused this user', false],
  '3D000': ['the database does not exist', false],
  '42501': ['the database user lacks a permission it needs (create the schema payouts, or grant it)', false],
  '57P04': ['the database was dropped', false],
};

/** SQLSTATE classes, for codes not listed above. */
const CLASSES: Record<string, [string, boolean]> = {
  '08': ['the connection to the database broke', true],
  '53': ['the database server ran out of a resource', true],
  '57': ['the PostgreSQL server stopped the operation', true],
  '58': ['the database server met a system error', true],
  '28': ['the database refused the login', false],
};

/** Socket and resolver errors of the way to the server. */
const SOCKET: Record<string, [string, boolean]> = {
  ECONNREFUSED: ['the connection was refused (is the database server running there?)', true],
  ECONNRESET: ['the connection was reset', true],
  ECONNABORTED: ['the connection was aborted', true],
  EPIPE: ['the connection broke while writing', true],
  ETIMEDOUT: ['the connection timed out', true],
  EHOSTUNREACH: ['the host cannot be reached', true],
  ENETUNREACH: ['the network cannot be reached', true],
  ENETDOWN: ['the network is down', true],
  // A resolver may answer "no such name" during its own restart: both are waited through.
  ENOTFOUND: ['the host name does not resolve', true],
  EAI_AGAIN: ['the host name could not be resolved (the resolver did not answer)', true],
};

/** TLS verification codes of node:tls: the server's certificate was not trusted. */
const CERTIFICATE = /CERT|UNABLE_TO_VERIFY|SELF_SIGNED|ERR_TLS_CERT_ALTNAME/;

/** Messages of node-postgres that carry no code. */
const MESSAGES: [RegExp, (sslmode: string) => string, boolean][] = [
  [
    /server does not support SSL/i,
    (mode) => `the server does not support TLS, and sslmode=${mode} asks for it`,
    false,
  ],
  [/terminated unexpectedly|Connection terminated$/i, () => 'the connection to the database broke', true],
  [
    /connection timeout|timeout exceeded when trying to connect/i,
    () => 'no connection within the deadline',
    true,
  ],
  [/Query read timeout/i, () => 'the server did not answer within the deadline', true],
  [/Client has encountered a connection error/i, () => 'the connection to the database broke', true],
];

/**
 * A driver or server error in words, with its code in parentheses, and whether it is an outage.
 * `sslmode` is the one the register was opened with, for the words of a TLS refusal.
 */
export function pgFailureOf(error: unknown, sslmode = 'require'): PgFailure {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const [words, outage] = SQLSTATES[code] ??
      CLASSES[code.slice(0, 2)] ?? [`the database answered with an error`, false];
    return { words: `${words} (${code})`, outage };
  }
  if (typeof code === 'string' && SOCKET[code] !== undefined) {
    const [words, outage] = SOCKET[code];
    return { words: `${words} (${code})`, outage };
  }
  if (typeof code === 'string' && CERTIFICATE.test(code)) {
    return {
      words: `the server's certificate is not trusted (${code}): name its authority with sslrootcert=FILE in the URL (or PGSSLROOTCERT), or use sslmode=require to encrypt without verifying`,
      outage: false,
    };
  }
  for (const [pattern, words, outage] of MESSAGES) {
    if (pattern.test(message)) return { words: words(sslmode), outage };
  }
  return {
    words:
      typeof code === 'string' ? `a system error (${code})` : 'an unexpected error of the database driver',
    outage: false,
  };
}
