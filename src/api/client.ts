/**
 * The payments service client: one function per endpoint payouts uses, over one request path per
 * base URL (the service and the identity endpoint), sharing one connection Agent, one rate
 * limiter and one breaker, so `--rate` counts every request, token requests included, and an
 * outage stops them all.
 *
 * The request path is composed here, once (`requestPath`), from layers that each know only the
 * one below (as octokit's `hook.wrap` and undici's `Dispatcher.compose`): retry, rate, token,
 * outage, deadline, then the transport. docs/architecture.md "The request path" says what each
 * decides.
 */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { type Clock, realSleep, type Sleep, systemClock, type Timers } from '../clock.js';
import { ConfigError } from '../errors.js';
import { deadlineWithin } from '../outage-budget.js';
import { LinkedAbort } from './abort.js';
import { type BeneficiariesApi, beneficiariesApi } from './beneficiaries.js';
import { BREAKER_DEFAULTS, type BreakerSettings, CircuitBreaker } from './breaker.js';
import {
  type Answer,
  type ApiLogger,
  type ApiResponse,
  type Call,
  createDispatcher,
  type Handler,
  parseBody,
  parseServiceUrl,
  type Requester,
  type RequestOptions,
  type RetryPolicy,
  responseOf,
  startCall,
  TIMEOUT_DEFAULTS,
  type Timeouts,
  type TokenSource,
  transport,
} from './http.js';
import { type IntegratorsApi, integratorsApi } from './integrators.js';
import { deadlineLayer } from './layers/deadline.js';
import { outageLayer } from './layers/outage.js';
import { rateLayer } from './layers/rate.js';
import { type RetrySettings, retryLayer } from './layers/retry.js';
import { tokenLayer } from './layers/token.js';
import { RateLimiter } from './rate.js';
import { type RecipientsApi, recipientsApi } from './recipients.js';
import { RETRY_DEFAULTS } from './retry.js';
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
  const breaker = breakerOf(options);
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

/** The breaker every client of the service shares; its changes go to the log. */
function breakerOf(options: ClientOptions): CircuitBreaker {
  return new CircuitBreaker({
    ...options.breaker,
    clock: options.clock,
    sleep: options.sleep,
    onChange: (state, facts) =>
      options.logger?.warn(
        { breaker: state, failures: facts.failures, outageMs: facts.outageMs },
        BREAKER_LOG[state],
      ),
  });
}

/** One client's parts: where it sends, and the policies its request path applies. */
export interface HttpClientOptions {
  /** Service root; requests' paths are appended to its path (which may carry a prefix). */
  baseUrl: string;
  /** Name of the option the URL came from, for error messages. */
  urlOption?: string;
  /** Shared between clients; when omitted the client makes and owns one. */
  dispatcher?: Dispatcher;
  limiter?: RateLimiter;
  /** Shared by every client of one service: an outage stops them all (breaker.ts). */
  breaker?: CircuitBreaker;
  /**
   * The run's stop signal (SIGTERM): ends every wait (rate limiter, backoff, Retry-After,
   * breaker, token), but never cuts a request already sent, whose answer the run records.
   */
  stopSignal?: AbortSignal;
  /**
   * Aborted when a stopped run's grace is over: every request still under way is cut, and
   * counts as one that may have taken effect.
   */
  abandonSignal?: AbortSignal;
  tokens?: TokenSource;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  logger?: ApiLogger;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
  /**
   * The deadline's timers: Node's, even under a fake clock, since a deadline on a real socket
   * must fire in real time while fake time moves only when someone sleeps.
   */
  timers?: Timers;
  userAgent?: string;
  /** Answers larger than this are not read (tests lower it). */
  maxResponseBytes?: number;
}

/**
 * One base URL's client: each request goes down the path composed by `requestPath` once and
 * comes back up once. Resolves with a 2xx answer; rejects with ServiceError, RateLimitError,
 * NetworkError, AuthError, ServiceUnavailableError or InterruptedError.
 */
export class HttpClient implements Requester {
  readonly baseUrl: URL;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly stopSignal: AbortSignal | undefined;
  private readonly tokens: TokenSource | undefined;
  private readonly logger: ApiLogger | undefined;
  private readonly path: (call: Call) => Promise<Answer>;

  constructor(options: HttpClientOptions) {
    this.baseUrl = parseServiceUrl(options.baseUrl, options.urlOption ?? '--base-url');
    const timeouts = { ...TIMEOUT_DEFAULTS, ...options.timeouts };
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? createDispatcher(timeouts);
    this.stopSignal = options.stopSignal;
    this.tokens = options.tokens;
    this.logger = options.logger;
    this.path = requestPath(options, { baseUrl: this.baseUrl, dispatcher: this.dispatcher, timeouts });
  }

  async request(options: RequestOptions): Promise<ApiResponse> {
    const { method, path } = options;
    if (options.auth && !this.tokens) throw new ConfigError(`${method} ${path} needs a token source`);
    // Waits end on the caller's signal or the run's; a request once sent is cut by the caller's only.
    const waits = new LinkedAbort([options.signal, this.stopSignal]);
    try {
      const call = startCall(options, waits.signal);
      return responseOf(call, await this.path(call), this.logger);
    } finally {
      waits.dispose();
    }
  }

  /** `request` then `parseBody`: the answer's body checked against a contract.ts schema. */
  async requestAs<T>(schema: z.ZodType<Partial<T>>, options: RequestOptions): Promise<T> {
    return parseBody<T>(schema, await this.request(options), options);
  }

  /** Closes the connection pools this client made (a shared dispatcher is its owner's to close). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/**
 * The request path, composed once: retry, rate, token, outage and deadline, then the transport.
 * The order is the order of the decisions for each attempt: whether to try (again), when it
 * may go under `--rate`, with which token, whether the breaker lets it, and how long it may
 * take. A layer a client has no use for (no token source, no breaker) is left out.
 */
function requestPath(
  options: HttpClientOptions,
  where: { baseUrl: URL; dispatcher: Dispatcher; timeouts: Timeouts },
): (call: Call) => Promise<Answer> {
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? realSleep;
  const logger = options.logger;
  const retry: RetrySettings = {
    policy: { ...RETRY_DEFAULTS, ...options.retry },
    clock,
    sleep,
    random: options.random ?? Math.random,
    logger,
  };
  const { tokens, breaker } = options;
  const layers = [
    rateLayer({ limiter: options.limiter, clock, sleep, logger }),
    ...(tokens ? [tokenLayer({ tokens, breaker, logger })] : []),
    ...(breaker ? [outageLayer({ breaker, clock })] : []),
    deadlineLayer({
      deadlineMs: where.timeouts.deadlineMs,
      abandonSignal: options.abandonSignal,
      timers: options.timers,
    }),
  ];
  const bottom = transport({
    ...where,
    userAgent: options.userAgent ?? 'payouts',
    maxResponseBytes: options.maxResponseBytes,
  });
  const below: Handler = layers.reduceRight((next, layer) => layer(next), bottom);
  return retryLayer(retry)(below);
}

const BREAKER_LOG = {
  open: 'the service is failing every request: pausing all sending, then probing',
  'half-open': 'probing the service',
  closed: 'the service answers again, sending resumes',
  'gave-up': 'the service stayed unavailable past --max-outage: no more rows are sent',
} as const;
