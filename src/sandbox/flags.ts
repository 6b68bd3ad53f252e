import { type Clock, systemClock } from '../clock.js';
import { UsageError } from '../errors.js';
import { callbackUrlProblem } from '../webhooks/callback-url.js';
import { randomSeed } from './prng.js';
import { RECENT_RECORDS } from './table.js';

/**
 * Which form of the token response the token endpoint gives (docs/service.md "Signing in and
 * tokens").
 */
export type TokenResponseForm = 'short' | 'long';
export const TOKEN_RESPONSE_FORMS: readonly TokenResponseForm[] = ['short', 'long'];

/**
 * Options of startSandbox; every one but `clock`, `onInternalError` and `recentRecords` is also a
 * flag.
 */
export interface SandboxOptions {
  /** TCP port; 0 (the default here) picks a free one. */
  port?: number;
  /** Interface to listen on; 127.0.0.1 unless said otherwise. */
  host?: string;
  /** Seed of the one PRNG stream behind every random choice; random (and reported) when absent. */
  seed?: number;
  /** Added to every answer except /_sandbox/*, in milliseconds. */
  latencyMs?: number;
  /** Uniform extra latency in [0, jitterMs] milliseconds. */
  jitterMs?: number;
  /** Probability that a /v1 request fails with 500, 502 or 503 before it takes effect. */
  errorRate?: number;
  /** Requests per second across all requests (token bucket); 0 is no limit. */
  rateLimit?: number;
  /** Probability that a /v1 request takes effect and then the connection is cut without an answer. */
  resetRate?: number;
  /** Access token lifetime in seconds (`expires_in`). */
  tokenTtl?: number;
  /** Simulation (quote) lifetime in seconds. */
  simulationTtl?: number;
  /** Time from PENDING to COMPLETED or FAILED, in milliseconds. */
  settleDelayMs?: number;
  /** Probability that a webhook event is delivered twice. */
  duplicateRate?: number;
  /** Webhook secret both integrators start with; random when absent. */
  webhookSecret?: string;
  /** Callback URL the primary integrator starts with; none when absent. */
  webhookUrl?: string;
  /** Form of the token response. */
  tokenResponse?: TokenResponseForm;
  /** Delivery attempts per webhook event, the first included. */
  webhookMaxAttempts?: number;
  /** Delay before the first webhook retry; doubles with every further attempt. */
  webhookBackoffMs?: number;
  /** Time a receiver has to answer one delivery attempt. */
  webhookTimeoutMs?: number;
  /** The clock of tokens, quotes and timestamps; the wall clock by default. */
  clock?: Clock;
  /** Called with an unexpected error inside a route (a bug); writes to stderr by default. */
  onInternalError?: (error: unknown) => void;
  /**
   * Records of each kind held as objects, per generation (table.ts); the rest are read back
   * from the store. Tests make it small to reach the store with a few records.
   */
  recentRecords?: number;
}

/** SandboxOptions with every default filled in. */
export interface SandboxConfig {
  port: number;
  host: string;
  seed: number;
  latencyMs: number;
  jitterMs: number;
  errorRate: number;
  rateLimit: number;
  resetRate: number;
  tokenTtl: number;
  simulationTtl: number;
  settleDelayMs: number;
  duplicateRate: number;
  webhookSecret: string | undefined;
  webhookUrl: string | undefined;
  tokenResponse: TokenResponseForm;
  webhookMaxAttempts: number;
  webhookBackoffMs: number;
  webhookTimeoutMs: number;
  clock: Clock;
  onInternalError: (error: unknown) => void;
  recentRecords: number;
}

type FlagOption = Exclude<keyof SandboxOptions, 'clock' | 'onInternalError' | 'recentRecords'>;

/** One command-line flag of `payouts sandbox`, for the CLI to turn into a yargs option. */
export interface SandboxFlag {
  /** Long flag name without the dashes, e.g. `error-rate`. */
  name: string;
  /** The SandboxOptions property it sets. */
  option: FlagOption;
  type: 'number' | 'string';
  /** Default on the command line; undefined means "not set" (see the help text). */
  default: number | string | undefined;
  choices?: readonly string[];
  /** Accepted range of a number flag, bounds included. */
  min?: number;
  max?: number;
  integer?: boolean;
  help: string;
}

/** The port `payouts sandbox` listens on when --port is not given. */
export const DEFAULT_CLI_PORT = 8787;

/** Defaults of startSandbox (one object; the flags below repeat them for --help). */
export const SANDBOX_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  latencyMs: 0,
  jitterMs: 0,
  errorRate: 0,
  rateLimit: 0,
  resetRate: 0,
  /** The shorter token response's lifetime, as the service shows it; the longer one's is LONG_TOKEN_TTL. */
  tokenTtl: 3600,
  simulationTtl: 300,
  settleDelayMs: 200,
  duplicateRate: 0,
  tokenResponse: 'short' as TokenResponseForm,
  webhookMaxAttempts: 6,
  webhookBackoffMs: 500,
  webhookTimeoutMs: 5000,
} as const;

const D = SANDBOX_DEFAULTS;

/** The access token's lifetime in the longer token response, as the service shows it. */
export const LONG_TOKEN_TTL = 86_400;

/** Every flag of `payouts sandbox` (docs/sandbox.md "Flags"). */
export const SANDBOX_FLAGS: readonly SandboxFlag[] = [
  {
    name: 'port',
    option: 'port',
    type: 'number',
    default: DEFAULT_CLI_PORT,
    min: 0,
    max: 65535,
    integer: true,
    help: 'TCP port to listen on - 0 picks a free one (the URL is printed)',
  },
  {
    name: 'host',
    option: 'host',
    type: 'string',
    default: D.host,
    help: 'interface to listen on - anything but loopback exposes the sandbox to the network',
  },
  {
    name: 'seed',
    option: 'seed',
    type: 'number',
    default: undefined,
    min: 0,
    max: 2 ** 32 - 1,
    integer: true,
    help: 'seed of the random faults, quotes and duplicates - the same seed and requests replay the same run (random when omitted, and printed)',
  },
  {
    name: 'latency',
    option: 'latencyMs',
    type: 'number',
    default: D.latencyMs,
    min: 0,
    max: 600_000,
    help: 'milliseconds added to every answer',
  },
  {
    name: 'jitter',
    option: 'jitterMs',
    type: 'number',
    default: D.jitterMs,
    min: 0,
    max: 600_000,
    help: 'up to this many more milliseconds, uniformly drawn per request',
  },
  {
    name: 'error-rate',
    option: 'errorRate',
    type: 'number',
    default: D.errorRate,
    min: 0,
    max: 1,
    help: 'probability (0-1) that a /v1 request fails with 500, 502 or 503 before it takes effect',
  },
  {
    name: 'rate-limit',
    option: 'rateLimit',
    type: 'number',
    default: D.rateLimit,
    min: 0,
    max: 1_000_000,
    help: 'requests per second across all endpoints, above which the answer is 429 with Retry-After - 0 is no limit',
  },
  {
    name: 'reset-rate',
    option: 'resetRate',
    type: 'number',
    default: D.resetRate,
    min: 0,
    max: 1,
    help: 'probability (0-1) that a /v1 request takes effect and the connection is then cut without an answer',
  },
  {
    name: 'token-ttl',
    option: 'tokenTtl',
    type: 'number',
    // Unset, it follows the token response's form (resolveSandboxConfig).
    default: undefined,
    min: 1,
    max: 31_536_000,
    integer: true,
    help: `access token lifetime in seconds (expires_in): default ${D.tokenTtl}, ${LONG_TOKEN_TTL} with --token-response long`,
  },
  {
    name: 'simulation-ttl',
    option: 'simulationTtl',
    type: 'number',
    default: D.simulationTtl,
    min: 1,
    max: 31_536_000,
    integer: true,
    help: 'seconds a simulation (quote) can be turned into a transaction - later the answer is 422',
  },
  {
    name: 'settle-delay',
    option: 'settleDelayMs',
    type: 'number',
    default: D.settleDelayMs,
    min: 0,
    max: 86_400_000,
    integer: true,
    help: 'milliseconds from PENDING to COMPLETED or FAILED (a recipient named FAIL... fails)',
  },
  {
    name: 'duplicate-rate',
    option: 'duplicateRate',
    type: 'number',
    default: D.duplicateRate,
    min: 0,
    max: 1,
    help: 'probability (0-1) that a webhook event is delivered twice',
  },
  {
    name: 'webhook-secret',
    option: 'webhookSecret',
    type: 'string',
    default: undefined,
    help: 'webhook secret the integrators start with (random when omitted)',
  },
  {
    name: 'webhook-url',
    option: 'webhookUrl',
    type: 'string',
    default: undefined,
    help: 'callback URL the integrator starts with (https, or http to a loopback host)',
  },
  {
    name: 'token-response',
    option: 'tokenResponse',
    type: 'string',
    default: D.tokenResponse,
    choices: TOKEN_RESPONSE_FORMS,
    help: 'form of the token response: short (scope "read write") or long (adds refresh_token, refresh_expires_in 1800, session_state)',
  },
  {
    name: 'webhook-attempts',
    option: 'webhookMaxAttempts',
    type: 'number',
    default: D.webhookMaxAttempts,
    min: 1,
    max: 100,
    integer: true,
    help: 'delivery attempts per webhook event while the receiver fails, the first included',
  },
  {
    name: 'webhook-backoff',
    option: 'webhookBackoffMs',
    type: 'number',
    default: D.webhookBackoffMs,
    min: 0,
    max: 3_600_000,
    integer: true,
    help: 'milliseconds before the first webhook retry - doubles with each further attempt',
  },
  {
    name: 'webhook-timeout',
    option: 'webhookTimeoutMs',
    type: 'number',
    default: D.webhookTimeoutMs,
    min: 1,
    max: 600_000,
    integer: true,
    help: 'milliseconds a receiver has to answer one delivery attempt',
  },
];

/**
 * SandboxOptions from parsed command-line values keyed by flag name (`error-rate`) or by its
 * camelCase form (`errorRate`), as yargs gives both. Values are checked by resolveSandboxConfig.
 */
export function sandboxOptionsFromFlags(values: Record<string, unknown>): SandboxOptions {
  const options: Record<string, unknown> = {};
  for (const flag of SANDBOX_FLAGS) {
    const value = values[flag.name] ?? values[camelCase(flag.name)];
    if (value !== undefined) options[flag.option] = value;
  }
  return options as SandboxOptions;
}

/** Fills in the defaults and checks every value; a bad value is a UsageError naming the flag. */
export function resolveSandboxConfig(options: SandboxOptions): SandboxConfig {
  for (const flag of SANDBOX_FLAGS) checkFlagValue(flag, options[flag.option]);
  if (options.webhookUrl !== undefined) {
    const problem = callbackUrlProblem(options.webhookUrl);
    if (problem !== undefined) throw new UsageError(`--webhook-url: ${problem}`);
  }
  if (options.webhookSecret !== undefined && options.webhookSecret.length === 0) {
    throw new UsageError('--webhook-secret must not be empty');
  }
  const { recentRecords } = options;
  if (recentRecords !== undefined && !(Number.isInteger(recentRecords) && recentRecords >= 1)) {
    throw new UsageError(`recentRecords must be a whole number from 1, got ${String(recentRecords)}`);
  }
  return {
    port: options.port ?? D.port,
    host: options.host ?? D.host,
    seed: options.seed ?? randomSeed(),
    latencyMs: options.latencyMs ?? D.latencyMs,
    jitterMs: options.jitterMs ?? D.jitterMs,
    errorRate: options.errorRate ?? D.errorRate,
    rateLimit: options.rateLimit ?? D.rateLimit,
    resetRate: options.resetRate ?? D.resetRate,
    tokenTtl: options.tokenTtl ?? (options.tokenResponse === 'long' ? LONG_TOKEN_TTL : D.tokenTtl),
    simulationTtl: options.simulationTtl ?? D.simulationTtl,
    settleDelayMs: options.settleDelayMs ?? D.settleDelayMs,
    duplicateRate: options.duplicateRate ?? D.duplicateRate,
    webhookSecret: options.webhookSecret,
    webhookUrl: options.webhookUrl,
    tokenResponse: options.tokenResponse ?? D.tokenResponse,
    webhookMaxAttempts: options.webhookMaxAttempts ?? D.webhookMaxAttempts,
    webhookBackoffMs: options.webhookBackoffMs ?? D.webhookBackoffMs,
    webhookTimeoutMs: options.webhookTimeoutMs ?? D.webhookTimeoutMs,
    clock: options.clock ?? systemClock,
    onInternalError: options.onInternalError ?? reportInternalError,
    recentRecords: recentRecords ?? RECENT_RECORDS,
  };
}

function checkFlagValue(flag: SandboxFlag, value: unknown): void {
  if (value === undefined) return;
  if (flag.type === 'string') {
    if (typeof value !== 'string') throw new UsageError(`--${flag.name} must be text, got ${String(value)}`);
    if (flag.choices !== undefined && !flag.choices.includes(value)) {
      throw new UsageError(`--${flag.name} must be one of ${flag.choices.join(', ')}, got "${value}"`);
    }
    return;
  }
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (flag.integer !== true || Number.isInteger(value)) &&
    (flag.min === undefined || value >= flag.min) &&
    (flag.max === undefined || value <= flag.max);
  if (!ok) {
    const kind = flag.integer === true ? 'a whole number' : 'a number';
    throw new UsageError(
      `--${flag.name} must be ${kind} from ${flag.min} to ${flag.max}, got ${String(value)}`,
    );
  }
}

function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

function reportInternalError(error: unknown): void {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`sandbox: internal error: ${text}\n`);
}
