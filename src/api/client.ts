/**
 * The payments service client: one function per endpoint payouts uses, over one HTTP core per
 * base URL (the service and the identity endpoint), sharing one connection Agent and one rate
 * limiter, so `--rate` counts every request, token requests included.
 */
import type { Dispatcher } from 'undici';
import type { Clock, Sleep } from '../clock.js';
import { deadlineWithin } from '../outage-budget.js';
import { type BeneficiariesApi, beneficiariesApi } from './beneficiaries.js';
import { BREAKER_DEFAULTS, type BreakerSettings, CircuitBreaker } from './breaker.js';
import { type ApiLogger, createDispatcher, HttpClient, type RetryPolicy, type Timeouts } from './http.js';
import { type IntegratorsApi, integratorsApi } from './integrators.js';
import { RateLimiter } from './rate.js';
import { type RecipientsApi, recipientsApi } from './recipients.js';
import { type SimulationsApi, simulationsApi } from './simulations.js';
import { type TermsApi, termsApi } from './terms.js';
import { type Credentials, checkCredentials, TokenManager } from './token.js';
import { type TransactionsApi, transactionsApi } from './transactions.js';

export interface ClientOptions {
  /** {base_url}: the service root (`--base-url`). */
  baseUrl: string;
  /** {auth_url}: the identity endpoint host (`--auth-url`). */
  authUrl: string;
  credentials: Partial<Credentials>;
  /** Requests per second, all endpoints together (`--rate`); unlimited when omitted. */
  rate?: number;
  /** Rows in flight (`--concurrency`): sizes the connection pool per origin. */
  concurrency?: number;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  /** The circuit breaker's tuning (`--max-outage` sets `maxOutageMs`). */
  breaker?: Partial<BreakerSettings>;
  /** The run's stop signal: ends every wait, never a request already sent (http.ts). */
  stopSignal?: AbortSignal;
  /** Aborted when a stopped run's grace is over: requests still under way are cut. */
  abandonSignal?: AbortSignal;
  logger?: ApiLogger;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
  /** Replaces the undici Agent (tests, proxies); the caller then owns closing it. */
  dispatcher?: Dispatcher;
  userAgent?: string;
}

export interface PayoutsClient {
  integrators: IntegratorsApi;
  beneficiaries: BeneficiariesApi;
  recipients: RecipientsApi;
  simulations: SimulationsApi;
  transactions: TransactionsApi;
  terms: TermsApi;
  tokens: TokenManager;
  limiter: RateLimiter;
  /** Open while the service is down; `gaveUp` once an outage outlasted `--max-outage`. */
  breaker: CircuitBreaker;
  /** Closes the connection pools, waiting for requests under way. */
  close(): Promise<void>;
  /** Destroys the connection pools at once: requests under way are cut (a stop's grace is over). */
  destroy(): Promise<void>;
}

/** Builds the client; throws ConfigError for a refused URL or missing credentials. */
export function createClient(options: ClientOptions): PayoutsClient {
  const credentials = checkCredentials(options.credentials);
  const time = { clock: options.clock, sleep: options.sleep };
  const limiter = new RateLimiter({ rate: options.rate, ...time });
  const breaker = new CircuitBreaker({
    ...options.breaker,
    ...time,
    onChange: (state, facts) =>
      options.logger?.warn(
        { breaker: state, failures: facts.failures, outageMs: facts.outageMs },
        BREAKER_LOG[state],
      ),
  });
  // One worker holds one connection; a little headroom covers the token request.
  const connections = options.concurrency === undefined ? undefined : options.concurrency + 2;
  // Each attempt's deadline follows --max-outage, so that stalls too end within it.
  const maxOutageMs = options.breaker?.maxOutageMs ?? BREAKER_DEFAULTS.maxOutageMs;
  const timeouts = { deadlineMs: deadlineWithin(maxOutageMs), ...options.timeouts };
  const dispatcher = options.dispatcher ?? createDispatcher(timeouts, connections);
  const shared = {
    dispatcher,
    limiter,
    breaker,
    stopSignal: options.stopSignal,
    abandonSignal: options.abandonSignal,
    timeouts,
    retry: options.retry,
    logger: options.logger,
    random: options.random,
    userAgent: options.userAgent,
    ...time,
  };
  const authHttp = new HttpClient({ ...shared, baseUrl: options.authUrl, urlOption: '--auth-url' });
  const tokens = new TokenManager({
    http: authHttp,
    credentials,
    clock: options.clock,
    logger: options.logger,
  });
  const http = new HttpClient({ ...shared, baseUrl: options.baseUrl, urlOption: '--base-url', tokens });

  return {
    integrators: integratorsApi(http, credentials.clientSecret),
    beneficiaries: beneficiariesApi(http),
    recipients: recipientsApi(http),
    simulations: simulationsApi(http),
    transactions: transactionsApi(http),
    terms: termsApi(http),
    tokens,
    limiter,
    breaker,
    async close() {
      limiter.close();
      if (!options.dispatcher) await dispatcher.close();
    },
    async destroy() {
      limiter.close();
      if (!options.dispatcher) await dispatcher.destroy();
    },
  };
}

const BREAKER_LOG = {
  open: 'the service is failing every request: pausing all sending, then probing',
  'half-open': 'probing the service',
  closed: 'the service answers again, sending resumes',
  'gave-up': 'the service stayed unavailable past --max-outage: no more rows are sent',
} as const;
