/**
 * The options several commands share (README "Options"), declared once: the sheet's, the
 * register's and the service's, and how their values become a command's typed options. The
 * logging options are `logOptions` in logging.ts. Nothing here loads the HTTP client, the
 * sandbox or exceljs: every command's builder may use it.
 */
import path from 'node:path';
import type { Argv } from 'yargs';
import { DEFAULT_APPROVAL_MAX_AGE_DAYS } from '../approvals/gate.js';
import { parseExpectTotals, parseMaxAmounts } from '../batch/guards.js';
import type { CronTargets } from '../cron/send.js';
import { fromEnvironment } from '../environment.js';
import { UsageError } from '../errors.js';
import { serviceOf } from '../register/identity.js';
import { REGISTER_ENV, registerLocationText, registerSourceOf } from '../register/location.js';
import type { OriginDeclaration } from '../register/types.js';
import { CSV_ENCODINGS, type CsvEncoding } from '../sheet/csv-dialect.js';
import { checkResultsPath, formatByExtension, isSameFile, resultsPathFor } from '../sheet/results-path.js';
import type { CliIo } from './io.js';

/** Options every sheet command shares (README "Options"). */
export function sheetOptions<T>(y: Argv<T>) {
  return (
    y
      .positional('file', {
        type: 'string',
        demandOption: true,
        describe: 'the payout sheet (.csv or .xlsx)',
      })
      .option('out', {
        type: 'string',
        describe: 'results file (default <sheet dir>/<sheet name>.results.<ext>)',
      })
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'print one JSON summary object on stdout',
      })
      .option('sheet', {
        type: 'string',
        describe: 'XLSX worksheet name (default: the first visible one with the required headers)',
      })
      .option('delimiter', {
        type: 'string',
        describe: 'CSV delimiter - detected (comma or semicolon) when omitted',
      })
      .option('encoding', {
        choices: CSV_ENCODINGS,
        describe:
          'CSV encoding (latin1 is windows-1252, macroman is the classic Mac Excel CSV) - UTF-8 or UTF-16 with BOM are detected',
      })
      .option('columns', {
        type: 'string',
        describe: 'JSON or CSV file mapping your headers to canonical columns',
      })
      // The guards require their value: one left without it (a commented-out line in a job's
      // arguments, an empty variable) would otherwise run the batch unguarded.
      .option('expect-count', {
        type: 'string',
        requiresArg: true,
        describe: 'control total: the number of rows the sheet must have',
      })
      .option('expect-total', {
        type: 'string',
        array: true,
        requiresArg: true,
        default: [] as string[],
        describe: 'control total CUR=AMOUNT, repeatable (e.g. --expect-total USD=1234.50)',
      })
      .option('max-amount', {
        type: 'string',
        array: true,
        requiresArg: true,
        default: [] as string[],
        describe: 'largest amount one row may pay, CUR=AMOUNT, repeatable (e.g. --max-amount USD=25000)',
      })
      .option('hold-changed-payees', {
        type: 'boolean',
        default: false,
        describe:
          'do not send rows whose payee has other bank details than when last paid (skipped, reason on the row)',
      })
      .option('report', {
        type: 'string',
        describe:
          "the approver's HTML report (validate: <sheet name>.report.html beside the results by default, --no-report to skip - run: only when given)",
      })
      .option('compare-with', {
        type: 'string',
        requiresArg: true,
        describe:
          'the earlier batch "since the previous batch" compares with: a sheet file or name (its latest batch), or a batch digest (default: the latest of a sheet of this name, digits aside, else the latest)',
      })
  );
}

/**
 * How a sheet is read, for the commands that compute its digest without validating it for a
 * run (approve, status --approvals): the same reading gives the same digest as validate's.
 */
export function sheetReadingOptions<T>(y: Argv<T>) {
  return y
    .option('sheet', { type: 'string', describe: 'XLSX worksheet name, as validate reads it' })
    .option('delimiter', { type: 'string', describe: 'CSV delimiter, as validate reads it' })
    .option('encoding', { choices: CSV_ENCODINGS, describe: 'CSV encoding, as validate reads it' })
    .option('columns', {
      type: 'string',
      describe: 'JSON or CSV file mapping your headers to canonical columns, as validate reads it',
    });
}

/** The reading options of `sheetReadingOptions` for the sheet at `file`, checked (exit 2). */
export function sheetReadingOf(
  file: string,
  args: {
    sheet?: string | undefined;
    delimiter?: string | undefined;
    encoding?: unknown;
    columns?: string | undefined;
  },
  io: CliIo,
) {
  const sheetPath = resolveFrom(io.cwd, file);
  if (args.sheet !== undefined && formatByExtension(sheetPath) === 'csv') {
    throw new UsageError(`--sheet names an XLSX worksheet, and ${file} is a CSV sheet, which has none`);
  }
  if (args.delimiter !== undefined && [...args.delimiter.replace('\\t', '\t')].length !== 1) {
    throw new UsageError(`--delimiter must be one character (use "\\t" for tab), got "${args.delimiter}"`);
  }
  return {
    sheetPath,
    sheetName: args.sheet,
    delimiter: args.delimiter?.replace('\\t', '\t'),
    encoding: args.encoding as CsvEncoding | undefined,
    columnsFile: args.columns ? resolveFrom(io.cwd, args.columns) : undefined,
  };
}

/** The sheet options as yargs hands them over. */
export interface SheetArgs {
  file: string;
  sheet?: string;
  out?: string;
  json: boolean;
  delimiter?: string;
  encoding?: CsvEncoding;
  columns?: string;
  'expect-count'?: string;
  'expect-total': string[];
  'max-amount': string[];
  'hold-changed-payees': boolean;
  /** A path, false for --no-report, undefined when not given. */
  report?: string | false;
  'compare-with'?: string;
}

/** The sheet options of validate and run, checked before anything is read or sent. */
export function sheetOptionsOf(args: SheetArgs, io: CliIo, rehearsal = false) {
  const expectCount = expectCountOf(args['expect-count']);
  if (args.delimiter !== undefined && [...args.delimiter.replace('\\t', '\t')].length !== 1) {
    throw new UsageError(`--delimiter must be one character (use "\\t" for tab), got "${args.delimiter}"`);
  }
  const sheetPath = resolveFrom(io.cwd, args.file);
  const format = formatByExtension(sheetPath);
  // A worksheet name means nothing to a CSV sheet: ignoring it would hide a mistaken file.
  if (args.sheet !== undefined && format === 'csv') {
    throw new UsageError(
      `--sheet names an XLSX worksheet, and ${args.file} is a CSV sheet, which has none: leave --sheet out, or give the .xlsx workbook`,
    );
  }
  const outPath = args.out ? resolveFrom(io.cwd, args.out) : undefined;
  // Before anything is read or sent: a wrong --out is a usage error (exit 2).
  if (outPath !== undefined) checkResultsPath(sheetPath, outPath, format);
  const real = resultsPathFor(sheetPath, format);
  if (rehearsal && outPath !== undefined && isSameFile(outPath, real)) {
    throw new UsageError(
      `--out ${outPath} is where a real run writes its results: a rehearsal (--sandbox) never writes over them - leave --out out for ${resultsPathFor(sheetPath, format, true)}`,
    );
  }
  return {
    sheetPath,
    sheetName: args.sheet,
    delimiter: args.delimiter?.replace('\\t', '\t'),
    encoding: args.encoding,
    columnsFile: args.columns ? resolveFrom(io.cwd, args.columns) : undefined,
    outPath,
    json: args.json,
    holdChangedPayees: args['hold-changed-payees'],
    report: reportOption(args.report, io),
    ...(args['compare-with'] === undefined ? {} : { compareWith: args['compare-with'] }),
    controls: {
      expectCount,
      expectTotals: parseExpectTotals(args['expect-total']),
      maxAmounts: parseMaxAmounts(args['max-amount']),
    },
  };
}

/**
 * `--expect-count N` as a whole number of rows, read as written: digits only, so that neither
 * "abc", "" nor a number in another notation ("0x0c", "1e1") becomes a count nobody typed.
 */
function expectCountOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^\d{1,15}$/.test(text)) {
    const got = text === '' ? 'nothing' : text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw new UsageError(
      `--expect-count must be a whole number of rows, such as --expect-count 120, got ${got}`,
    );
  }
  return Number(text);
}

/** `--report PATH`, `--no-report` (false), or nothing (undefined): the command picks its default. */
function reportOption(value: unknown, io: CliIo): string | false | undefined {
  if (value === false) return false;
  if (value === undefined || value === true) return undefined;
  const text = String(value);
  if (text.trim() === '')
    throw new UsageError('--report needs a file path (--report PATH), or use --no-report');
  if (!text.toLowerCase().endsWith('.html') && !text.toLowerCase().endsWith('.htm')) {
    throw new UsageError(`--report ${text} must end in .html: the report is one HTML page`);
  }
  return resolveFrom(io.cwd, text);
}

/** `--register PATH|URL` (README "Options"), shared by every command that reads or writes it. */
export function registerOption<T>(y: Argv<T>, describe?: string) {
  return y.option('register', {
    type: 'string',
    describe:
      describe ??
      `the register of payouts (default ${REGISTER_ENV}, else $XDG_STATE_HOME/payouts/register.db, else ~/.local/state/payouts/register.db)`,
  });
}

/** The register and the scope hint of an offline command: `--base-url` or env, and the user. */
export function registerHint(
  args: { register?: string | undefined; 'base-url'?: string | undefined },
  io: CliIo,
) {
  const baseUrl = args['base-url'] ?? fromEnvironment(io.env, 'PAYOUTS_BASE_URL');
  const login = fromEnvironment(io.env, 'PAYOUTS_USERNAME');
  return {
    location: registerLocationText(args.register, io.env, io.cwd),
    from: registerSourceOf(args.register, io.env),
    ...(baseUrl !== undefined ? { service: serviceOf(baseUrl) } : {}),
    ...(login !== undefined ? { login } : {}),
  };
}

/** Environment variables of the approval gate: a CronJob sets them once (docs/container.md). */
export const APPROVAL_ENV = {
  required: 'PAYOUTS_REQUIRE_APPROVALS',
  allowedSigners: 'PAYOUTS_ALLOWED_SIGNERS',
} as const;

/** The approval gate's options as yargs hands them over. */
export interface ApprovalGateArgs {
  'require-approvals'?: number;
  'allowed-signers'?: string;
  'approval-max-age': number;
}

/** Declares run's approval gate: `--require-approvals N`, `--allowed-signers FILE`, `--approval-max-age DAYS`. */
export function approvalGateOptions<T>(y: Argv<T>) {
  return y
    .option('require-approvals', {
      type: 'number',
      requiresArg: true,
      describe: `refuse to send (exit 4) unless N distinct approvers of --allowed-signers signed this sheet's approval statement (or ${APPROVAL_ENV.required})`,
    })
    .option('allowed-signers', {
      type: 'string',
      requiresArg: true,
      describe: `who may approve: an OpenSSH allowed-signers file (or ${APPROVAL_ENV.allowedSigners})`,
    })
    .option('approval-max-age', {
      type: 'number',
      requiresArg: true,
      default: DEFAULT_APPROVAL_MAX_AGE_DAYS,
      describe: 'an approval statement made more days ago than this does not count',
    });
}

/**
 * The approval gate of run, from its options or the environment; undefined when no approval is
 * required. Checked before anything is read or sent (usage errors: exit 2). A gate that can
 * never pass or does nothing is refused, never run without (README "Configuration fails
 * closed"): signers named with no count, a count of 0, a maximum age of 0 days or less.
 */
export function approvalGateOf(
  args: ApprovalGateArgs,
  io: CliIo,
): { required: number; allowedSigners?: string; maxAgeDays: number } | undefined {
  const fromEnv = fromEnvironment(io.env, APPROVAL_ENV.required);
  const required = args['require-approvals'] ?? (fromEnv === undefined ? undefined : Number(fromEnv.trim()));
  const source = args['require-approvals'] === undefined ? APPROVAL_ENV.required : '--require-approvals';
  if (required !== undefined && (!Number.isInteger(required) || required < 0)) {
    throw new UsageError(
      `${source} must be a whole number of approvers, got ${String(args['require-approvals'] ?? fromEnv)}`,
    );
  }
  if (required === 0) {
    throw new UsageError(
      `${source} 0 requires no approval at all, a guard that does nothing: give 1 or more, or leave it out`,
    );
  }
  const maxAge = args['approval-max-age'];
  if (!Number.isInteger(maxAge) || maxAge <= 0) {
    throw new UsageError(
      `--approval-max-age must be a whole number of days, 1 or more (no approval could count otherwise), got ${String(maxAge)}`,
    );
  }
  const fileFromEnv = fromEnvironment(io.env, APPROVAL_ENV.allowedSigners);
  const file = args['allowed-signers'] ?? fileFromEnv;
  if (required === undefined) {
    if (file === undefined) return undefined;
    const named = args['allowed-signers'] !== undefined ? '--allowed-signers' : APPROVAL_ENV.allowedSigners;
    throw new UsageError(
      `${named} names who may approve, but nothing says how many approvals this run needs: add --require-approvals N (or set ${APPROVAL_ENV.required}), or leave out ${named} - a run never pays unchecked while signers are named`,
    );
  }
  // Without a file the register's approval policy names the signers; the run refuses (exit 2)
  // when it holds none, before anything is sent (batch/run/judge.ts policyGateOf).
  if (file === undefined) return { required, maxAgeDays: maxAge };
  return { required, allowedSigners: resolveFrom(io.cwd, file), maxAgeDays: maxAge };
}

/** Environment variables read for the connection. */
export const CONNECTION_ENV = {
  baseUrl: 'PAYOUTS_BASE_URL',
  authUrl: 'PAYOUTS_AUTH_URL',
  clientId: 'PAYOUTS_CLIENT_ID',
  clientSecret: 'PAYOUTS_CLIENT_SECRET',
  username: 'PAYOUTS_USERNAME',
  password: 'PAYOUTS_PASSWORD',
} as const;

/** The connection flags as yargs hands them over. */
export interface ConnectionArgs {
  'base-url'?: string;
  'auth-url'?: string;
  'client-id'?: string;
  username?: string;
}

/** Declares `--base-url`, `--auth-url`, `--client-id` and `--username`. */
export function connectionOptions<T>(y: Argv<T>): Argv<T & ConnectionArgs> {
  return y
    .option('base-url', {
      type: 'string',
      describe: `the payments service's root URL, such as https://api.example.com (plain http:// to loopback only) - or ${CONNECTION_ENV.baseUrl}`,
    })
    .option('auth-url', {
      type: 'string',
      describe: `the identity endpoint's host, where tokens come from (default: the base URL) - or ${CONNECTION_ENV.authUrl}`,
    })
    .option('client-id', {
      type: 'string',
      describe: `API client id (default ${CONNECTION_ENV.clientId}) - the secrets come from ${CONNECTION_ENV.clientSecret} and ${CONNECTION_ENV.password} only`,
    })
    .option('username', {
      type: 'string',
      describe: `dashboard user (default ${CONNECTION_ENV.username})`,
    }) as Argv<T & ConnectionArgs>;
}

/** `--concurrency N` and `--rate N` of run and reconcile: positive, the concurrency whole. */
export function checkPace(concurrency: number, rate: number): void {
  for (const [name, value] of [
    ['--concurrency', concurrency],
    ['--rate', rate],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0)
      throw new UsageError(
        `${name} must be a positive number, got ${Number.isNaN(value) ? 'something that is not a number' : value}`,
      );
  }
  if (!Number.isInteger(concurrency)) throw new UsageError('--concurrency must be a whole number');
}

/** `--max-outage S`: 0 or more seconds. */
export function checkMaxOutage(seconds: number): void {
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`--max-outage must be 0 or more seconds, got ${seconds}`);
}

/** `--same-service-as ORIGIN` or `--separate-service` as a declaration of the run's origin. */
export function originOf(
  sameAs: string | undefined,
  separate: boolean | undefined,
): { origin?: OriginDeclaration } {
  if (sameAs !== undefined) {
    if (sameAs.trim() === '')
      throw new UsageError('--same-service-as needs the URL the register knows the service by');
    return { origin: { sameAs: serviceOf(sameAs.trim()) } };
  }
  return separate ? { origin: { separate: true } } : {};
}

/** Resolves against the injected cwd; keeps paths as typed when that is the process's own. */
export function resolveFrom(cwd: string, file: string): string {
  return cwd === process.cwd() ? file : path.resolve(cwd, file);
}

/** The signals for cron's options as yargs hands them over. */
export interface CronArgs {
  'metrics-file'?: string;
  'push-metrics'?: string;
  notify?: string;
}

/**
 * Declares run's and reconcile's signals for cron (docs/container.md): `--metrics-file PATH`,
 * `--push-metrics URL`, `--notify URL`, each also from its environment variable.
 */
export function cronOptions<T>(y: Argv<T>): Argv<T & CronArgs> {
  return y
    .option('metrics-file', {
      type: 'string',
      requiresArg: true,
      describe:
        "write the run's metrics in Prometheus' text format to PATH, atomically, for node_exporter's textfile collector (or PAYOUTS_METRICS_FILE)",
    })
    .option('push-metrics', {
      type: 'string',
      requiresArg: true,
      describe:
        "push the run's metrics to the Prometheus Pushgateway at URL, job payouts, grouped by command and service origin (or PAYOUTS_PUSH_METRICS)",
    })
    .option('notify', {
      type: 'string',
      requiresArg: true,
      describe:
        'POST the JSON summary with a line for a chat channel (text) to the incoming webhook at URL at the end (or PAYOUTS_NOTIFY)',
    }) as Argv<T & CronArgs>;
}

/** Where the signals for cron go, from the options or the environment, checked (exit 2). */
export function cronTargetsOf(args: CronArgs, io: CliIo): CronTargets {
  const file = args['metrics-file'] ?? fromEnvironment(io.env, 'PAYOUTS_METRICS_FILE');
  const push = args['push-metrics'] ?? fromEnvironment(io.env, 'PAYOUTS_PUSH_METRICS');
  const notify = args.notify ?? fromEnvironment(io.env, 'PAYOUTS_NOTIFY');
  const named = (flag: string, variable: string, given: unknown) => (given !== undefined ? flag : variable);
  return {
    ...(file !== undefined ? { metricsFile: metricsFileOf(file, io) } : {}),
    ...(push !== undefined
      ? {
          pushUrl: signalUrlOf(push, named('--push-metrics', 'PAYOUTS_PUSH_METRICS', args['push-metrics']), {
            plainHttp: true,
          }),
        }
      : {}),
    ...(notify !== undefined
      ? { notifyUrl: signalUrlOf(notify, named('--notify', 'PAYOUTS_NOTIFY', args.notify)) }
      : {}),
  };
}

/**
 * The signals for cron of a command: where they go, and the service's origin the gateway groups
 * them by (`sandbox` for a rehearsal against the embedded one, '' when no service is named or
 * its URL does not parse: the command then fails, and says so, itself).
 */
export function cronSetupOf(
  args: CronArgs & { 'base-url'?: string | undefined },
  io: CliIo,
  sandbox = false,
): { targets: CronTargets; origin: string } {
  const targets = cronTargetsOf(args, io);
  if (sandbox) return { targets, origin: 'sandbox' };
  const baseUrl = args['base-url'] ?? io.env['PAYOUTS_BASE_URL'];
  let origin = '';
  try {
    if (baseUrl !== undefined) origin = new URL(baseUrl.trim()).origin;
  } catch {
    // Not a URL: the connection's own check says so (exit 2).
  }
  return { targets, origin: origin === 'null' ? '' : origin };
}

/** `--metrics-file PATH`: a file name in a folder (a folder itself cannot be renamed over). */
function metricsFileOf(text: string, io: CliIo): string {
  if (text.trim() === '' || /[/\\]$/.test(text))
    throw new UsageError(
      `--metrics-file needs a file path, such as /var/lib/node_exporter/payouts.prom, got "${text}"`,
    );
  return path.resolve(io.cwd, text);
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * A push or notification URL, without user info (a password in every place the URL is shown).
 * A notification leaves for a chat service with the run's summary: https, or plain http to a
 * loopback address only, as for the service. A Pushgateway usually answers plain http inside
 * the cluster that scrapes it, and the metrics carry nothing secret: `plainHttp` allows it.
 */
export function signalUrlOf(text: string, option: string, allow: { plainHttp?: boolean } = {}): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(
      `${option} must be a URL such as https://hooks.example.com/..., and this one does not parse`,
    );
  }
  if (url.username || url.password)
    throw new UsageError(
      `${option} must not carry credentials in the URL (user:password@): give a URL without them`,
    );
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && (allow.plainHttp || LOOPBACK.test(url.hostname))) return url;
  throw new UsageError(
    allow.plainHttp
      ? `${option} ${url.protocol}// is not a web address: give http:// or https://`
      : `${option} ${url.origin} must use https:// (plain http:// only to loopback: 127.0.0.1, ::1, localhost)`,
  );
}
