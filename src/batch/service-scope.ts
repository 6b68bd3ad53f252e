/**
 * Who this run is to the service, shared by `run` and `reconcile`: the connection, the
 * integrator the credentials belong to, and the register scope its payouts are kept under.
 */
import type { PayoutsClient } from '../api/client.js';
import { serviceFailureOf } from '../api/failure.js';
import type { Credentials } from '../api/token.js';
import { ConfigError, type NetworkError, ServiceError, UsageError } from '../errors.js';
import type { ScopeIdentity } from '../register/identity.js';
import type { OriginDeclaration, Register } from '../register/types.js';

/** Where the service is and who we are to it (README "Options": `--base-url`, `--auth-url`, env). */
export interface Connection {
  baseUrl: string;
  authUrl: string;
  credentials: Partial<Credentials>;
}

/**
 * The register scope of this run: the service as its URL is spelt, unless the operator
 * declared that spelling the same service as another (then the other's scope and keys, so
 * nothing paid under it is paid again). An integrator with payouts under another spelling and
 * no declaration stops the run before anything is sent (README "Never pay twice: the register": exit 2, both origins named).
 */
export async function scopeOf(
  register: Register,
  reached: ScopeIdentity,
  options: { origin?: OriginDeclaration | undefined },
): Promise<ScopeIdentity> {
  if (options.origin !== undefined) {
    if ('sameAs' in options.origin && options.origin.sameAs === reached.service) {
      throw new UsageError(
        `--same-service-as ${options.origin.sameAs} names the service this run reaches itself`,
      );
    }
    await register.declareOrigin(reached, options.origin);
  }
  const declared = await register.origin(reached);
  if (declared !== undefined) {
    return 'sameAs' in declared ? { service: declared.sameAs, integratorId: reached.integratorId } : reached;
  }
  const others: string[] = [];
  for (const scope of await register.scopes()) {
    if (scope.integratorId !== reached.integratorId || scope.service === reached.service) continue;
    const store = await register.scopeStore(scope);
    if ((await store.recentPayouts(1)).length > 0) others.push(scope.service);
  }
  if (others.length === 0) return reached;
  throw new ConfigError(
    `integrator ${reached.integratorId} already has payouts in the register under ${others.join(' and ')}, and this run reaches it as ${reached.service}: if that is the same service under another name (localhost for 127.0.0.1, a second DNS name, a proxy), run again with --same-service-as ${others[0]}, so every payout it paid counts and none is paid twice - if it is another service with the same integrator id (a staging copy), run again with --separate-service. Nothing was sent`,
  );
}

/**
 * The integrator id (GET /v1/integrators/me), after the token: refused credentials throw (exit
 * 3); undefined when the run was stopped, or the service stayed down past --max-outage, first.
 */
export async function whoAmI(
  client: PayoutsClient,
  signal: AbortSignal,
  connection: Pick<Connection, 'baseUrl' | 'authUrl'>,
): Promise<string | undefined> {
  const unreachable = (error: unknown, url: string, what: string): undefined => {
    if (signal.aborted || client.breaker.gaveUp) return undefined;
    const kind = serviceFailureOf(error);
    if (kind === 'certificate') {
      throw new ConfigError(
        `the certificate of ${new URL(url).origin} was refused (${(error as NetworkError).errorCode}): check the URL, or add the issuing authority with NODE_EXTRA_CA_CERTS. Nothing was sent`,
      );
    }
    // Any answer but refused credentials is one these two calls cannot act on: an outage too.
    if (kind === undefined && !(error instanceof ServiceError)) throw error;
    // Before the first row, an outage is one run error: every row `skipped` with it (exit 6).
    client.breaker.giveUp(`${what} (${(error as Error).message}) - run again later to resume`);
    return undefined;
  };
  try {
    await client.tokens.getToken(signal);
  } catch (error) {
    return unreachable(error, connection.authUrl, 'the identity endpoint could not issue a token');
  }
  try {
    return (await client.integrators.me({ signal })).id;
  } catch (error) {
    return unreachable(error, connection.baseUrl, 'the service could not be reached or understood');
  }
}
