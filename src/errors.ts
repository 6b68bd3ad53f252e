/**
 * The one error family of payouts (docs/architecture.md "Errors").
 * Every error a user can meet is a PayoutsError with a code from a closed union. Its kind's
 * exit code (`exitCode`) is what it means when nothing was sent; the code a command ends with
 * is decided in one place, runExitCode in src/cli/exit-code.ts (README "Exit codes").
 */
import { redactSecrets } from './redact.js';

export type ErrorCode =
  | 'USAGE'
  | 'CONFIG'
  | 'SHEET'
  | 'AUTH'
  | 'GUARD'
  | 'RATE_LIMIT'
  | 'SERVICE'
  | 'NETWORK'
  | 'INTERRUPTED'
  | 'UNAVAILABLE'
  | 'CLAIM_LOST'
  | 'STORAGE';

/** Exit codes of the README ("Exit codes"). 70 (a bug) is the top-level handler's alone. */
export const EXIT = {
  ok: 0,
  rowsNotOk: 1,
  usage: 2,
  auth: 3,
  guard: 4,
  interrupted: 5,
  /** The service stayed unavailable, or local storage failed after sending began: retry later. */
  unavailable: 6,
} as const;

/** Exit code for a bug in payouts itself (BSD EX_SOFTWARE); never used for bad input. */
export const EXIT_INTERNAL = 70;

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
  UNAVAILABLE: EXIT.unavailable,
  CLAIM_LOST: EXIT.unavailable,
  // StorageError overrides exitCode: 2 before anything was sent, 6 after.
  STORAGE: EXIT.unavailable,
};

export interface PayoutsErrorOptions {
  cause?: unknown;
  /** HTTP status of the service's answer, where there was one. */
  status?: number;
  /** Request id the service's support asks for (docs/service.md "Errors", status 500). */
  requestId?: string;
  /**
   * Why an earlier attempt of the same request may have taken effect (ECONNRESET, 503, ...),
   * although this error's own attempt did not: the outcome of a request is its most severe
   * attempt's.
   */
  inDoubt?: string;
}

export class PayoutsError extends Error {
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly inDoubt: string | undefined;

  constructor(code: ErrorCode, message: string, options: PayoutsErrorOptions = {}) {
    super(redactSecrets(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status;
    this.requestId = options.requestId;
    this.inDoubt = options.inDoubt;
  }

  /** The exit code of this kind of error before anything was sent (runExitCode decides after). */
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

/** A batch guard refused: control totals, approval digest. */
export class GuardError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('GUARD', message, options);
  }
}

/** The service refused the credentials (docs/service.md "Signing in", 401 from the token endpoint). */
export class AuthError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('AUTH', message, options);
  }
}

/** Where a service call went: method and request path (never the query, headers or body). */
export interface RequestContext {
  method: string;
  path: string;
  /** How many attempts were made before giving up. */
  attempts?: number;
}

export interface ServiceErrorOptions extends PayoutsErrorOptions, RequestContext {
  status: number;
  /** The service's `message` (docs/service.md "Errors"), word for word: results files show it as is. */
  serviceMessage: string;
  /** Each validation message of a 400 on its own (contract.ts ErrorBody.errors), when given. */
  serviceErrors?: string[];
  /** The service's `error` (reason phrase), when it gave one. */
  reason?: string;
}

/**
 * The service answered with a status we do not treat as success (docs/service.md "Errors"): 4xx refused the
 * request, 5xx after retries gave up. A 2xx with a body we cannot read also lands here with its
 * 2xx status, which tells the caller the request did take effect.
 */
export class ServiceError extends PayoutsError {
  declare readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly serviceMessage: string;
  /** Every message of the answer: the 400's `errors`, or else `[serviceMessage]`. */
  readonly serviceErrors: string[];
  readonly reason: string | undefined;
  readonly attempts: number;

  constructor(options: ServiceErrorOptions) {
    const reason = options.reason ? ` ${options.reason}` : '';
    const rid = options.requestId ? ` (request id ${options.requestId})` : '';
    super(
      'SERVICE',
      `${options.method} ${options.path} answered ${options.status}${reason}: ${options.serviceMessage}${rid}`,
      options,
    );
    this.method = options.method;
    this.path = options.path;
    this.serviceMessage = redactSecrets(options.serviceMessage);
    this.serviceErrors = options.serviceErrors?.length
      ? options.serviceErrors.map(redactSecrets)
      : [this.serviceMessage];
    this.reason = options.reason;
    this.attempts = options.attempts ?? 1;
  }
}

export interface RateLimitErrorOptions extends PayoutsErrorOptions, RequestContext {
  /** What the last Retry-After asked for, in milliseconds. */
  retryAfterMs?: number;
  /** How many 429 answers came (one that asked too long a wait is a single answer). */
  throttled?: number;
}

/** The service kept answering 429 (or asked for a longer wait than we accept): nothing was done. */
export class RateLimitError extends PayoutsError {
  readonly method: string;
  readonly path: string;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number;
  readonly throttled: number;

  constructor(message: string, options: RateLimitErrorOptions) {
    super('RATE_LIMIT', message, { status: 429, ...options });
    this.method = options.method;
    this.path = options.path;
    this.retryAfterMs = options.retryAfterMs;
    this.attempts = options.attempts ?? 1;
    this.throttled = options.throttled ?? this.attempts;
  }

  /** The 429s in words: "kept answering" only when more than one came. */
  get inWords(): string {
    if (this.throttled > 1) return 'the service kept answering 429 Too Many Requests';
    const wait =
      this.retryAfterMs === undefined ? '' : ` asking to wait ${Math.ceil(this.retryAfterMs / 1000)} s`;
    return `the service answered 429 Too Many Requests${wait}`;
  }
}

export interface NetworkErrorOptions extends PayoutsErrorOptions, RequestContext {
  /** The socket or undici error code (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, ...). */
  errorCode: string;
  /**
   * True when the request may have reached the service before the connection broke (reset,
   * closed socket, timeout waiting for the answer): a transaction in that state is `unknown`.
   * False only when it certainly was not sent (connection refused, connect timeout, DNS).
   */
  mayHaveTakenEffect: boolean;
}

/** The connection failed: no answer from the service. */
export class NetworkError extends PayoutsError {
  readonly method: string;
  readonly path: string;
  readonly errorCode: string;
  readonly mayHaveTakenEffect: boolean;
  readonly attempts: number;

  constructor(message: string, options: NetworkErrorOptions) {
    super('NETWORK', message, options);
    this.method = options.method;
    this.path = options.path;
    this.errorCode = options.errorCode;
    this.mayHaveTakenEffect = options.mayHaveTakenEffect;
    this.attempts = options.attempts ?? 1;
  }
}

/** Work stopped by an abort signal (SIGINT/SIGTERM) before the request left. */
export class InterruptedError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('INTERRUPTED', message, options);
  }
}

/**
 * The service stayed unreachable or unavailable (5xx, 429) past the outage budget, so the run
 * stopped taking rows (README "Exit codes", 6: what was sent is recorded; run again later).
 */
export class ServiceUnavailableError extends PayoutsError {
  /** What kept the service away, in words for the rows it stopped ("not sent: <reason>"). */
  readonly reason: string;

  constructor(message: string, options: PayoutsErrorOptions & { reason?: string } = {}) {
    super('UNAVAILABLE', message, options);
    this.reason = redactSecrets(options.reason ?? message);
  }
}

/**
 * The register handed a payout this run held to another run (this run's lease ran out): the
 * run stops sending; what it sent is recorded, the rest is the other run's (exit 6, run again).
 */
export class ClaimLostError extends PayoutsError {
  readonly reference: string;
  constructor(reference: string, message: string) {
    super('CLAIM_LOST', message);
    this.reference = reference;
  }
}

export interface StorageErrorOptions extends PayoutsErrorOptions {
  /** The file or directory that could not be used. */
  path: string;
  /** The system's error code (ENOSPC, EACCES, EROFS, SQLITE_BUSY, ...), where there is one. */
  errno?: string;
  /** True once any request that may move money has left: exit 6 instead of 2. */
  afterSending?: boolean;
}

/**
 * Local storage failed: the register, the results file, a log or events file (README "Exit
 * codes": 2 when nothing was sent, 6 after sending began). The message names the path and says
 * the errno in words; never a bug (exit 70).
 */
export class StorageError extends PayoutsError {
  readonly path: string;
  readonly errno: string | undefined;
  readonly afterSending: boolean;

  constructor(
    /** The message without the errno in words (what crosses threads). */
    readonly plainMessage: string,
    private readonly options: StorageErrorOptions,
  ) {
    const errno = options.errno ?? errnoOf(options.cause);
    super('STORAGE', errno ? `${plainMessage}: ${errnoInWords(errno)} (${errno})` : plainMessage, options);
    this.path = options.path;
    this.errno = errno;
    this.afterSending = options.afterSending ?? false;
  }

  override get exitCode(): number {
    return this.afterSending ? EXIT.unavailable : EXIT.usage;
  }

  /** The same failure, known to have happened after sending began (exit 6). */
  sent(): StorageError {
    if (this.afterSending) return this;
    const Kind = this.constructor as new (message: string, options: StorageErrorOptions) => StorageError;
    return new Kind(this.plainMessage, { ...this.options, afterSending: true });
  }
}

/** The register (README "Never pay twice: the register") cannot be opened, read or written. */
export class RegisterError extends StorageError {}

/**
 * The run's scratch space (TMPDIR: the sheet's snapshot, the rows' warnings and results) is
 * missing, read-only, full or too small: exit 2 before sending, 6 after (docs/container.md
 * "Scratch space").
 */
export class ScratchError extends StorageError {}

/** The `code` of a Node.js system error (or an SQLite error code), if it has one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

const ERRNO_WORDS: Record<string, string> = {
  ENOSPC: 'no space left on the device (the disk is full)',
  EDQUOT: 'the disk quota is used up',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EEXIST: 'it already exists',
  EMFILE: 'too many open files',
  EIO: 'an input/output error of the device',
  EBUSY: 'the file is busy',
  SQLITE_BUSY: 'it is locked by another payouts process (waited past the busy timeout)',
  SQLITE_FULL: 'no space left on the device (the disk is full)',
  SQLITE_READONLY: 'it is read-only for this process',
  SQLITE_CANTOPEN: 'it cannot be opened',
  SQLITE_IOERR: 'an input/output error of the device',
  SQLITE_CORRUPT: 'the database file is damaged',
  SQLITE_NOTADB: 'the file is not a payouts register (not an SQLite database)',
  SQLITE_READONLY_DIRECTORY: 'its folder is read-only for this user (SQLite needs to write beside it)',
  UNKNOWN_SQLITE_ERROR_1544: 'its folder is read-only for this user (SQLite needs to write beside it)',
  ECONNREFUSED: 'the connection was refused (is the database server running there?)',
  ENOTFOUND: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out',
  PG_28P01: 'the database refused the user name or password',
  PG_28000: 'the database refused this user',
  PG_3D000: 'the database does not exist',
  PG_42501: 'the database user lacks a permission it needs (create the schema payouts, or grant it)',
  PG_53100: 'the database server has no space left on its disk',
  PG_25006: 'the database connection is read-only',
  PG_55P03: 'it is locked by another payouts process (waited past the lock timeout)',
  PG_57P01: 'the database server is shutting down',
  PG_08006: 'the connection to the database broke',
};

/** A file's system error as the messages say it: "no such file or directory (ENOENT)". */
export function systemErrorInWords(error: unknown): string {
  const errno = errnoOf(error);
  if (errno === undefined) return error instanceof Error ? error.message : String(error);
  return `${errnoInWords(errno)} (${errno})`;
}

/** An errno (or SQLite code) in words a finance person can act on. */
export function errnoInWords(errno: string): string {
  return ERRNO_WORDS[errno] ?? ERRNO_WORDS[errno.replace(/_.*$/, '')] ?? `system error ${errno}`;
}

// Errors that ended a command after something was sent: a run that stopped on refused
// credentials mid-run still leaves rows to run again, which is exit 6, not 3.
const sentBeforeThrown = new WeakSet<object>();

/**
 * Marks an error as thrown after a request that may move money left, so that the one exit
 * path gives 0, 1, 5 or 6 for it; a storage error becomes its after-sending self (exit 6).
 */
export function afterSending(error: unknown): unknown {
  if (error instanceof StorageError) return error.sent();
  if (typeof error === 'object' && error !== null) sentBeforeThrown.add(error);
  return error;
}

/** Whether `afterSending` marked this error: a request that may move money had left. */
export function thrownAfterSending(error: unknown): boolean {
  return typeof error === 'object' && error !== null && sentBeforeThrown.has(error);
}
