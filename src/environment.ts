/**
 * The environment variables payouts reads, in one table (docs/configuration.md): the commands'
 * option parsers read them through `fromEnvironment`, every command checks them all first with
 * `checkEnvironment`, and the docs' table is held to this one by a test. Configuration fails
 * closed (README "Configuration fails closed"): a variable set but empty or malformed, or a
 * `PAYOUTS_*` name one typo away from one payouts reads, is an error said in words (exit 2),
 * never a default that lowers a guard.
 */

import { editDistance } from './edit-distance.js';
import { ConfigError } from './errors.js';

/** What a variable's value must be, checked before any command starts. */
type Kind =
  /** A URL of the service: http(s), parsed. */
  | 'url'
  /** Any text but blank (a name, a path, a register location). */
  | 'text'
  /** Like text, and never repeated back. */
  | 'secret'
  /** A whole number of one or more. */
  | 'count'
  /** On or off. */
  | 'switch'
  /** Blank counts as unset (as the XDG Base Directory specification says of its variables). */
  | 'blank-is-unset';

export interface Variable {
  name: string;
  kind: Kind;
  /** What it sets, as the docs' table says it. */
  means: string;
}

/** Every variable payouts reads. */
export const VARIABLES = [
  {
    name: 'PAYOUTS_REGISTER',
    kind: 'text',
    means: 'the register: a file path or a postgres:// URL (as --register)',
  },
  { name: 'PAYOUTS_BASE_URL', kind: 'url', means: "the service's root URL (as --base-url)" },
  {
    name: 'PAYOUTS_AUTH_URL',
    kind: 'url',
    means: 'the identity endpoint host (as --auth-url, default: the base URL)',
  },
  { name: 'PAYOUTS_CLIENT_ID', kind: 'text', means: 'API client id (as --client-id)' },
  { name: 'PAYOUTS_CLIENT_SECRET', kind: 'secret', means: 'API client secret (environment only)' },
  { name: 'PAYOUTS_USERNAME', kind: 'text', means: 'dashboard user (as --username)' },
  { name: 'PAYOUTS_PASSWORD', kind: 'secret', means: "dashboard user's password (environment only)" },
  {
    name: 'PAYOUTS_REQUIRE_APPROVALS',
    kind: 'count',
    means: 'run: signed approvals required, 1 or more (as --require-approvals)',
  },
  {
    name: 'PAYOUTS_ALLOWED_SIGNERS',
    kind: 'text',
    means: 'run and approve: the allowed-signers file (as --allowed-signers)',
  },
  {
    name: 'PAYOUTS_WEBHOOK_SECRET',
    kind: 'secret',
    means: 'webhooks listen and verify: the webhook secret (else --secret-file)',
  },
  {
    name: 'PAYOUTS_WEBHOOK_PREVIOUS_SECRET',
    kind: 'secret',
    means: 'webhooks listen and verify: the secret before the last rotation',
  },
  {
    name: 'PAYOUTS_METRICS_FILE',
    kind: 'text',
    means: "run and reconcile: write the metrics in Prometheus' text format to this file (as --metrics-file)",
  },
  {
    name: 'PAYOUTS_PUSH_METRICS',
    kind: 'url',
    means: 'run and reconcile: push the metrics to this Prometheus Pushgateway (as --push-metrics)',
  },
  {
    name: 'PAYOUTS_NOTIFY',
    kind: 'secret',
    means:
      'run and reconcile: POST the summary to this incoming webhook at the end, never shown (as --notify)',
  },
  { name: 'PAYOUTS_DEBUG', kind: 'switch', means: 'errors that are bugs show their stack trace: 1 or 0' },
  {
    name: 'XDG_STATE_HOME',
    kind: 'blank-is-unset',
    means: 'the default register is $XDG_STATE_HOME/payouts/register.db (else ~/.local/state/...)',
  },
  { name: 'PGSSLMODE', kind: 'text', means: "a PostgreSQL register's sslmode when its URL names none" },
  {
    name: 'PGSSLROOTCERT',
    kind: 'text',
    means: "a PostgreSQL register's sslrootcert when its URL names none",
  },
  { name: 'PGSSLCERT', kind: 'text', means: "a PostgreSQL register's sslcert when its URL names none" },
  { name: 'PGSSLKEY', kind: 'text', means: "a PostgreSQL register's sslkey when its URL names none" },
] as const satisfies readonly Variable[];

export type VariableName = (typeof VARIABLES)[number]['name'];

const BY_NAME: ReadonlyMap<string, Variable> = new Map(VARIABLES.map((v) => [v.name, v]));

/**
 * Names Kubernetes gives the variables of a Service called `payouts` (`PAYOUTS_SERVICE_HOST`,
 * `PAYOUTS_PORT_80_TCP`...): a pod gets them whether or not payouts wants them.
 */
const KUBERNETES_SERVICE = /^PAYOUTS_(SERVICE_|PORT($|_))/;

/** How far a name may be from a known one to be taken for a typo of it. */
const TYPO_EDITS = 2;

/**
 * Throws ConfigError (exit 2) for the first problem of `env`: a variable payouts reads that is
 * set but blank or malformed, or a `PAYOUTS_*` name within two edits of one it reads.
 */
export function checkEnvironment(env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const variable = BY_NAME.get(name);
    if (variable !== undefined) {
      checkValue(variable, value);
      continue;
    }
    if (!name.startsWith('PAYOUTS_') || KUBERNETES_SERVICE.test(name)) continue;
    const meant = nearestVariable(name);
    if (meant !== undefined) {
      throw new ConfigError(
        `${name} is set, and payouts reads no variable of that name: did you mean ${meant}? Rename it (or unset it): a setting under a misspelt name would be ignored`,
      );
    }
  }
}

/**
 * The value of a variable payouts reads, or undefined when it is not set. Set but blank is a
 * ConfigError, as it is for `checkEnvironment`: the parser never takes blank for unset.
 */
export function fromEnvironment(env: NodeJS.ProcessEnv, name: VariableName): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const variable = BY_NAME.get(name)!;
  if (variable.kind === 'blank-is-unset') return value.trim() === '' ? undefined : value;
  checkValue(variable, value);
  return value;
}

/** Whether a switch variable is on (`PAYOUTS_DEBUG=1`). */
export function switchedOn(env: NodeJS.ProcessEnv, name: VariableName): boolean {
  const value = env[name];
  return value !== undefined && ON.includes(value.trim().toLowerCase());
}

const ON = ['1', 'true', 'yes', 'on'];
const OFF = ['0', 'false', 'no', 'off'];

function checkValue(variable: Variable, value: string): void {
  const { name, kind } = variable;
  if (kind === 'blank-is-unset') return;
  const text = value.trim();
  if (text === '') {
    throw new ConfigError(
      `${name} is set but empty: give it a value, or unset it (an empty variable, such as one a manifest fills from an unset one, is never taken for "not set")`,
    );
  }
  if (kind === 'count' && !/^\d{1,6}$/.test(text)) {
    throw new ConfigError(`${name} must be a whole number, such as ${name}=2, got ${shown(text)}`);
  }
  if (kind === 'count' && Number(text) === 0) {
    throw new ConfigError(
      `${name}=0 requires no approval at all, a guard that does nothing: give 1 or more, or unset ${name}`,
    );
  }
  if (kind === 'switch' && !ON.includes(text.toLowerCase()) && !OFF.includes(text.toLowerCase())) {
    throw new ConfigError(`${name} must be 1 or 0, got ${shown(text)}`);
  }
  if (kind === 'url' && !isHttpUrl(text)) {
    throw new ConfigError(
      `${name} must be a URL such as https://api.example.com, got ${shown(withoutUserInfo(text))}`,
    );
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A URL's user info may hold a password: never repeated back, with or without a scheme. */
function withoutUserInfo(text: string): string {
  const at = text.lastIndexOf('@');
  if (at < 0) return text;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? '';
  return `${scheme}***@${text.slice(at + 1)}`;
}

function shown(text: string): string {
  return `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`;
}

/** The `PAYOUTS_*` variable `name` is a typo of, if it is near enough to one. */
function nearestVariable(name: string): string | undefined {
  let best: { name: string; edits: number } | undefined;
  for (const known of BY_NAME.keys()) {
    if (!known.startsWith('PAYOUTS_')) continue;
    const edits = editDistance(name, known);
    if (edits <= TYPO_EDITS && (best === undefined || edits < best.edits)) best = { name: known, edits };
  }
  return best?.name;
}
