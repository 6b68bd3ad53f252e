/**
 * The one error family of payouts (STYLE.md "One error family with machine-readable codes").
 * Every error a user can meet is a PayoutsError with a code from a closed union; the top-level
 * handler in src/cli/main.ts maps the code to an exit code of PRODUCT.md.
 */
export type ErrorCode =
  | 'USAGE'
  | 'CONFIG'
  | 'SHEET'
  | 'AUTH'
  | 'GUARD'
  | 'RATE_LIMIT'
  | 'SERVICE'
  | 'NETWORK'
  | 'INTERRUPTED';

/** Exit codes of PRODUCT.md ("Exit codes"); 5 is ours for a run stopped by SIGINT/SIGTERM. */
export const EXIT = {
  ok: 0,
  rowsNotOk: 1,
  usage: 2,
  auth: 3,
  guard: 4,
  interrupted: 5,
} as const;

const exitCodeOf: Record<ErrorCode, number> = {
  USAGE: EXIT.usage,
  CONFIG: EXIT.usage,
  SHEET: EXIT.usage,
  AUTH: EXIT.auth,
  GUARD: EXIT.guard,
  RATE_LIMIT: EXIT.rowsNotOk,
  SERVICE: EXIT.rowsNotOk,
  NETWORK: EXIT.rowsNotOk,
  INTERRUPTED: EXIT.interrupted,
};

export interface PayoutsErrorOptions {
  cause?: unknown;
  /** HTTP status of the service's answer, where there was one. */
  status?: number;
  /** Request id the service's support asks for (SPEC.md 7.1, status 500). */
  requestId?: string;
}

export class PayoutsError extends Error {
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly requestId: string | undefined;

  constructor(code: ErrorCode, message: string, options: PayoutsErrorOptions = {}) {
    super(redactSecrets(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status;
    this.requestId = options.requestId;
  }

  get exitCode(): number {
    return exitCodeOf[this.code];
  }
}

/** Wrong flags or arguments. */
export class UsageError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('USAGE', message, options);
  }
}

/** A configuration that cannot work (missing credentials, plain http to a remote host). */
export class ConfigError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('CONFIG', message, options);
  }
}

/** The sheet cannot be read as a whole (unreadable file, bad headers). Names the file. */
export class SheetError extends PayoutsError {
  readonly file: string;
  constructor(file: string, message: string, options?: PayoutsErrorOptions) {
    super('SHEET', `${file}: ${message}`, options);
    this.file = file;
  }
}

/** A batch guard refused: control totals, approval digest, foreign checkpoint, lock. */
export class GuardError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('GUARD', message, options);
  }
}

/** The service refused the credentials (SPEC.md 5, 401 from the token endpoint). */
export class AuthError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('AUTH', message, options);
  }
}

const SECRET_PATTERNS: RegExp[] = [
  /(client_secret|password|access_token|refresh_token|secret|token)(["']?\s*[:=]\s*["']?)[^"'&\s,}]+/gi,
  /(Bearer\s+)[A-Za-z0-9\-_.~+/]+=*/g,
];

/** Replaces anything that looks like a credential or token with [REDACTED]. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, (_m, a: string, b?: string) => `${a}${b ?? ''}[REDACTED]`);
  return out;
}
