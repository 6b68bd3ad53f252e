/**
 * Where the payments service is and who we are to it (README "Options"): `--base-url`,
 * `--auth-url` and the four credentials, shared by every command that calls the service (the
 * options are declared in options.ts, which loads no HTTP client). Secrets come from the
 * environment only: a flag would show in `ps` and in shell history.
 */
import { type ClientOptions, createClient, type PayoutsClient } from '../api/client.js';
import { parseServiceUrl } from '../api/service-url.js';
import { type Credentials, checkCredentials } from '../api/token.js';
import { fromEnvironment } from '../environment.js';
import { ConfigError } from '../errors.js';
import { CONNECTION_ENV, type ConnectionArgs } from './options.js';

export { CONNECTION_ENV, type ConnectionArgs, connectionOptions } from './options.js';

/** Everything needed to build the API client. */
export interface Connection {
  /** {base_url}, checked: https, or http to loopback only. */
  baseUrl: string;
  /** {auth_url}; the base URL unless given. */
  authUrl: string;
  credentials: Credentials;
}

/**
 * The connection from flags, then the environment. Throws ConfigError (exit 2) for a missing
 * or refused URL and for missing credentials, naming the variables to set, never a value.
 */
export function connectionFromArgs(args: ConnectionArgs, env: NodeJS.ProcessEnv): Connection {
  const baseUrl = pick(args['base-url'], fromEnvironment(env, CONNECTION_ENV.baseUrl));
  if (baseUrl === undefined) {
    throw new ConfigError(
      `no service URL: pass --base-url https://... or set ${CONNECTION_ENV.baseUrl} (for a local sandbox: --base-url http://127.0.0.1:8787)`,
    );
  }
  const authUrl = pick(args['auth-url'], fromEnvironment(env, CONNECTION_ENV.authUrl)) ?? baseUrl;
  // Checked here, before anything is sent, so a refused URL is a configuration error up front.
  parseServiceUrl(baseUrl, '--base-url');
  parseServiceUrl(authUrl, '--auth-url');
  const credentials = checkCredentials({
    clientId: pick(args['client-id'], fromEnvironment(env, CONNECTION_ENV.clientId)),
    clientSecret: pick(undefined, fromEnvironment(env, CONNECTION_ENV.clientSecret)),
    username: pick(args.username, fromEnvironment(env, CONNECTION_ENV.username)),
    password: pick(undefined, fromEnvironment(env, CONNECTION_ENV.password)),
  });
  return { baseUrl, authUrl, credentials };
}

/** The API client for a connection; the caller closes it. */
export function clientFor(connection: Connection, options: Partial<ClientOptions> = {}): PayoutsClient {
  return createClient({ ...options, ...connection });
}

/**
 * The flag, else the variable (a blank variable never gets here: fromEnvironment refuses it); a
 * blank flag counts as unset. Values are kept as given (a password may end in a space).
 */
function pick(flag: string | undefined, fromEnv: string | undefined): string | undefined {
  const value = flag ?? fromEnv;
  return value === undefined || value.trim() === '' ? undefined : value;
}
