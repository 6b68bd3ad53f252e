/**
 * The sandbox: a local simulator of the payments service of docs/service.md, built on the
 * assumptions of src/api/contract.ts. `payouts sandbox` and `payouts run --sandbox` start it
 * through startSandbox; tests start it on port 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import { TokenService } from './auth.js';
import { SANDBOX_CREDENTIALS, SANDBOX_INTEGRATOR_IDS, SANDBOX_USERS } from './credentials.js';
import { resolveSandboxConfig, type SandboxConfig, type SandboxOptions } from './flags.js';
import { IdempotencyStore } from './idempotency.js';
import type { Sandbox } from './router.js';
import { newWebhookSecret } from './routes/integrators.js';
import { ledgerView } from './routes/ledger.js';
import { Scheduler, WorkTracker } from './scheduler.js';
import { RequestPipeline } from './server.js';
import { type SandboxLedger, SandboxState } from './state.js';
import { isoWithOffset } from './time.js';
import { WebhookDispatcher } from './webhooks.js';

export { SANDBOX_CREDENTIALS, SANDBOX_INTEGRATOR_IDS } from './credentials.js';
export {
  DEFAULT_CLI_PORT,
  resolveSandboxConfig,
  SANDBOX_DEFAULTS,
  SANDBOX_FLAGS,
  type SandboxConfig,
  type SandboxFlag,
  type SandboxOptions,
  sandboxOptionsFromFlags,
  type TokenResponseForm,
} from './flags.js';
export { FAILURE_TRIGGER } from './routes/transactions.js';
export type { LedgerTransaction, RequestCounts, SandboxLedger } from './state.js';
export type { WebhookDelivery } from './webhooks.js';
export { signWebhook } from './webhooks.js';

/** A running sandbox. */
export interface SandboxHandle {
  /** Base URL, also the auth URL: `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  host: string;
  /** The seed in use (the one given, or the random one drawn): pass it as --seed to replay. */
  seed: number;
  /** The resolved options. */
  config: Readonly<Omit<SandboxConfig, 'clock' | 'onInternalError'>>;
  credentials: typeof SANDBOX_CREDENTIALS;
  integratorIds: typeof SANDBOX_INTEGRATOR_IDS;
  /** A snapshot of everything the sandbox holds (what GET /_sandbox/ledger answers). */
  ledger(): SandboxLedger;
  /** Resolves once no settlement or webhook delivery (retries included) is pending. */
  whenIdle(): Promise<void>;
  /** Stops listening, cuts open connections, cancels timers and deliveries. Idempotent. */
  close(): Promise<void>;
}

/** Starts a sandbox; rejects with a ConfigError when it cannot listen, UsageError for bad options. */
export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const config = resolveSandboxConfig(options);
  const state = new SandboxState(config.recentRecords);
  const createdAt = isoWithOffset(config.clock.now());
  for (const user of SANDBOX_USERS) {
    state.integrators.set(user.integratorId, {
      id: user.integratorId,
      name: user.name,
      email: user.username,
      webhookUrl: user.integratorId === SANDBOX_INTEGRATOR_IDS.primary ? (config.webhookUrl ?? null) : null,
      termsAcceptedAt: null,
      createdAt,
      webhookSecret: config.webhookSecret ?? newWebhookSecret(),
    });
  }
  const scheduler = new Scheduler();
  const work = new WorkTracker();
  const sandbox: Sandbox = {
    config,
    state,
    tokens: new TokenService(state, {
      tokenTtl: config.tokenTtl,
      form: config.tokenResponse,
      clock: config.clock,
    }),
    webhooks: new WebhookDispatcher({
      maxAttempts: config.webhookMaxAttempts,
      backoffMs: config.webhookBackoffMs,
      timeoutMs: config.webhookTimeoutMs,
      clock: config.clock,
      scheduler,
      work,
      secretOf: (integratorId) => state.integrators.get(integratorId)?.webhookSecret ?? '',
    }),
    idempotency: new IdempotencyStore(state.db, config.recentRecords),
    scheduler,
    work,
  };
  const server = createServer(new RequestPipeline(sandbox).listener);
  const port = await listen(server, config.port, config.host);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  sandbox.tokens.issuer = `${url}/auth/realms/service`;

  let closing: Promise<void> | undefined;
  const { clock: _clock, onInternalError: _report, ...publicConfig } = config;
  return {
    url,
    port,
    host: config.host,
    seed: config.seed,
    config: { ...publicConfig, port },
    credentials: SANDBOX_CREDENTIALS,
    integratorIds: SANDBOX_INTEGRATOR_IDS,
    ledger: () => structuredClone(ledgerView(sandbox)),
    whenIdle: () => work.whenIdle(),
    close: () => {
      closing ??= (async () => {
        scheduler.close();
        work.clear();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await Promise.all([stopped, sandbox.webhooks.close()]);
      })();
      return closing;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new ConfigError(`The sandbox cannot listen on ${host}:${port}: ${error.code ?? error.message}`, {
          cause: error,
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
