/**
 * A PostgreSQL register's URL, read once: node-postgres' own parser (`pg-connection-string`)
 * gives host, user, password and database; TLS is decided here with libpq's meanings of
 * `sslmode`, so that `require` means encrypted without verification, as `psql` users expect,
 * and a register of payments never falls back to plain text silently (`allow` and `prefer`
 * are refused by name). The URL is shown only with its password replaced, and one that does
 * not parse only as `postgres://***` with the reason (docs/register.md, "A PostgreSQL register").
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { parse } from 'pg-connection-string';
import { fromEnvironment } from '../environment.js';
import { ConfigError } from '../errors.js';
import { isLoopbackHost } from '../webhooks/callback-url.js';
import { nonBlank, withoutPassword } from './location.js';

/** libpq's sslmode values payouts accepts. */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** What node-postgres needs to connect, and how the register may be shown. */
export interface PostgresConnection {
  /** Host, port, user, password, database and ssl, as pg.Pool takes them (PG* environment fills what is missing). */
  config: {
    host?: string;
    port?: number;
    user?: string;
    password?: string;
    database?: string;
    ssl: false | ConnectionOptions;
  };
  /** The URL as people may see it: its password replaced by `***`. */
  shown: string;
  /** The host the register is reached at (for the plain-text warning and messages). */
  host: string;
  sslmode: SslMode;
  /** Said to the operator once (a database off this machine reached without TLS). */
  warnings: string[];
}

// Parameters payouts reads itself, so that the parser neither reads files nor warns.
const TLS_PARAMETERS = [
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'ssl',
  'uselibpqcompat',
  'sslnegotiation',
];

/** Reads a `postgres://` or `postgresql://` URL; throws ConfigError (exit 2) in words, never echoing it. */
export function postgresConnection(url: string, env: NodeJS.ProcessEnv = process.env): PostgresConnection {
  const query = queryOf(url);
  const sslmode = sslModeOf(
    query.get('sslmode') ?? fromEnvironment(env, 'PGSSLMODE') ?? legacySsl(query.get('ssl')),
  );
  const bare = url.replace(/^postgres(?:ql)?:\/\//i, '') === '';
  let parsed: Partial<ReturnType<typeof parse>>;
  try {
    parsed = bare ? {} : parse(withoutParameters(url, TLS_PARAMETERS));
  } catch (error) {
    throw new ConfigError(
      `the register postgres://*** cannot be read as a URL (${reasonOf(error)}): characters such as # / ? @ % : or a space in the password must be percent-encoded (# as %23, / as %2F, ? as %3F, @ as %40, % as %25, : as %3A, a space as %20), and the URL is best passed in PAYOUTS_REGISTER`,
    );
  }
  const shown = withoutPassword(url);
  const host = parsed.host || nonBlank(env['PGHOST']) || 'localhost';
  const config: PostgresConnection['config'] = { ssl: tlsOptions(sslmode, query, env, shown) };
  if (parsed.host) config.host = parsed.host;
  if (parsed.port) config.port = Number(parsed.port);
  if (parsed.user) config.user = parsed.user;
  if (parsed.password) config.password = parsed.password;
  if (parsed.database) config.database = parsed.database;
  const warnings: string[] = [];
  if (sslmode === 'disable' && !host.startsWith('/') && !isLoopbackHost(host.replace(/^\[|\]$/g, ''))) {
    warnings.push(
      `the register's database at ${host} is reached without TLS: its traffic (payouts, and the password) can be read on the way: add sslmode=verify-full to the URL`,
    );
  }
  return { config, shown, host, sslmode, warnings };
}

/** `sslmode` as given, checked: absent is `disable`, as libpq's `prefer` without its silent fallback. */
function sslModeOf(given: string | undefined): SslMode {
  if (given === undefined || given === '') return 'disable';
  if ((SSL_MODES as readonly string[]).includes(given)) return given as SslMode;
  if (given === 'allow' || given === 'prefer') {
    throw new ConfigError(
      `sslmode=${given} is not accepted for the register: it falls back to plain text without saying so, and a register of payments must not: use sslmode=require (encrypted), verify-ca or verify-full (encrypted and verified), or disable (plain text, on this machine or a network you trust)`,
    );
  }
  throw new ConfigError(
    `sslmode=${given} is not a TLS mode payouts knows: use one of ${SSL_MODES.join(', ')}`,
  );
}

/** The old `ssl=true` parameter asks for TLS; read as `require`. */
function legacySsl(value: string | null): string | undefined {
  return value === 'true' || value === '1' ? 'require' : undefined;
}

/** node:tls options for `sslmode` with libpq's meanings. */
function tlsOptions(
  mode: SslMode,
  query: URLSearchParams,
  env: NodeJS.ProcessEnv,
  shown: string,
): false | ConnectionOptions {
  if (mode === 'disable') return false;
  const rootcert = query.get('sslrootcert') ?? fromEnvironment(env, 'PGSSLROOTCERT');
  const options: ConnectionOptions = {};
  // `system` is libpq's word for the system's trusted authorities, Node's default.
  if (rootcert !== undefined && rootcert !== 'system')
    options.ca = readTlsFile(rootcert, 'sslrootcert', shown);
  const cert = query.get('sslcert') ?? fromEnvironment(env, 'PGSSLCERT');
  const key = query.get('sslkey') ?? fromEnvironment(env, 'PGSSLKEY');
  if (cert !== undefined) options.cert = readTlsFile(cert, 'sslcert', shown);
  if (key !== undefined) options.key = readTlsFile(key, 'sslkey', shown);
  if (mode === 'require' && options.ca === undefined) {
    // Encrypted, not verified: libpq's require without a root certificate.
    options.rejectUnauthorized = false;
  } else if (mode === 'require' || mode === 'verify-ca') {
    // The chain is verified against the authorities; the host name is not (libpq's verify-ca,
    // and require given a root certificate).
    options.checkServerIdentity = () => undefined;
  }
  return options;
}

function readTlsFile(file: string, parameter: string, shown: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `the ${parameter} file ${file} of the register ${shown} cannot be read (${reasonOf(error)})`,
    );
  }
}

/** The URL's query parameters, read leniently (a URL that does not parse has none). */
function queryOf(url: string): URLSearchParams {
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1).replace(/#.*$/, ''));
}

/** The URL without the named query parameters. */
function withoutParameters(url: string, names: readonly string[]): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  for (const name of names) query.delete(name);
  const rest = query.toString();
  return rest === '' ? url.slice(0, at) : `${url.slice(0, at)}?${rest}`;
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_INVALID_URL') return 'it is not a well-formed URL';
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error
    ? error.message.replace(/postgres(?:ql)?:\/\/\S*/gi, 'postgres://***')
    : String(error);
}
