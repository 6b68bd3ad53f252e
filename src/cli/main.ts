#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { BREAKER_DEFAULTS } from '../api/breaker.js';
import { parseExpectTotals, parseMaxAmounts } from '../batch/guards.js';
import { PayoutsError, UsageError } from '../errors.js';
import { serviceOf } from '../register/identity.js';
import { REGISTER_ENV, registerLocationText } from '../register/location.js';
import type { OriginDeclaration } from '../register/types.js';
import { CSV_ENCODINGS, type CsvEncoding } from '../sheet/csv-dialect.js';
import { checkResultsPath, formatByExtension, isSameFile, resultsPathFor } from '../sheet/results-path.js';
import { type CliIo, println, processIo } from './io.js';
import {
  createLogger,
  EXIT_INTERNAL,
  exitCodeOfError,
  fatalFields,
  fatalMessage,
  isLoggedOnStderr,
  type LogFormat,
  logFormatOf,
} from './logging.js';
import { sandboxFlags } from './sandbox-flags.js';
import { exitWhenIdle, tolerateClosedOutput } from './signals.js';
import { withSuggestions } from './suggest.js';

/** Options every sheet command shares (PRODUCT.md "Options that scripts rely on"). */
function sheetOptions<T>(y: Argv<T>) {
  return y
    .positional('file', { type: 'string', demandOption: true, describe: 'the payout sheet (.csv or .xlsx)' })
    .option('out', {
      type: 'string',
      describe: 'results file (default <sheet dir>/<sheet name>.results.<ext>)',
    })
    .option('json', { type: 'boolean', default: false, describe: 'print one JSON summary object on stdout' })
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
    .option('expect-count', {
      type: 'number',
      describe: 'control total: the number of rows the sheet must have',
    })
    .option('expect-total', {
      type: 'string',
      array: true,
      default: [] as string[],
      describe: 'control total CUR=AMOUNT, repeatable (e.g. --expect-total USD=1234.50)',
    })
    .option('max-amount', {
      type: 'string',
      array: true,
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
    });
}

/** `--concurrency N` and `--rate N` of run and reconcile: positive, the concurrency whole. */
function checkPace(concurrency: number, rate: number): void {
  for (const [name, value] of [
    ['--concurrency', concurrency],
    ['--rate', rate],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0)
      throw new UsageError(`${name} must be a positive number, got ${value}`);
  }
  if (!Number.isInteger(concurrency)) throw new UsageError('--concurrency must be a whole number');
}

/** `--since DATE` as an ISO 8601 time: a day is its start, UTC. */
function sinceOf(text: string): string {
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? `${text.trim()}T00:00:00.000Z` : text.trim();
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw new UsageError(`--since ${text} is not a date: use YYYY-MM-DD (or an ISO 8601 time)`);
  return new Date(time).toISOString();
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

interface SheetArgs {
  file: string;
  sheet?: string;
  _: (string | number)[];
  out?: string;
  json: boolean;
  delimiter?: string;
  encoding?: CsvEncoding;
  columns?: string;
  'expect-count'?: number;
  'expect-total': string[];
  'max-amount': string[];
  'hold-changed-payees': boolean;
  /** A path, false for --no-report, undefined when not given. */
  report?: string | false;
  [key: string]: unknown;
}

function commonSheetOptions(args: SheetArgs, io: CliIo, rehearsal = false) {
  const expectCount = args['expect-count'];
  if (expectCount !== undefined && (!Number.isInteger(expectCount) || expectCount < 0)) {
    throw new UsageError(`--expect-count must be a whole number of rows, got ${String(expectCount)}`);
  }
  if (args.delimiter !== undefined && [...args.delimiter.replace('\\t', '\t')].length !== 1) {
    throw new UsageError(`--delimiter must be one character (use "\\t" for tab), got "${args.delimiter}"`);
  }
  const sheetPath = resolveFrom(io.cwd, args.file);
  const outPath = args.out ? resolveFrom(io.cwd, args.out) : undefined;
  // Before anything is read or sent: a wrong --out is a usage error (exit 2).
  if (outPath !== undefined) checkResultsPath(sheetPath, outPath, formatByExtension(sheetPath));
  const real = resultsPathFor(sheetPath, formatByExtension(sheetPath));
  if (rehearsal && outPath !== undefined && isSameFile(outPath, real)) {
    throw new UsageError(
      `--out ${outPath} is where a real run writes its results: a rehearsal (--sandbox) never writes over them - leave --out out for ${resultsPathFor(sheetPath, formatByExtension(sheetPath), true)}`,
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
    controls: {
      expectCount,
      expectTotals: parseExpectTotals(args['expect-total']),
      maxAmounts: parseMaxAmounts(args['max-amount']),
    },
  };
}

/** `--register PATH` (PRODUCT.md), shared by run, validate and status. */
function registerOption<T>(y: Argv<T>) {
  return y.option('register', {
    type: 'string',
    describe: `the register of payouts (default ${REGISTER_ENV}, else $XDG_STATE_HOME/payouts/register.db, else ~/.local/state/payouts/register.db)`,
  });
}

/** The register and the scope hint of an offline command: `--base-url` or env, and the user. */
function registerHint(args: { register?: string; 'base-url'?: string }, io: CliIo) {
  const baseUrl = args['base-url'] ?? nonBlank(io.env['PAYOUTS_BASE_URL']);
  return {
    location: registerLocationText(args.register, io.env, io.cwd),
    ...(baseUrl !== undefined ? { service: serviceOf(baseUrl) } : {}),
    ...(nonBlank(io.env['PAYOUTS_USERNAME']) !== undefined ? { login: io.env['PAYOUTS_USERNAME'] } : {}),
  };
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Resolves against the injected cwd; keeps paths as typed when that is the process's own. */
function resolveFrom(cwd: string, file: string): string {
  return cwd === process.cwd() ? file : path.resolve(cwd, file);
}

/**
 * The long option names yargs knows in the command being parsed. `getOptions` is on yargs'
 * instance but not in its types; without it there is simply no option to suggest.
 */
function optionNames(parser: unknown): string[] {
  const instance = parser as { getOptions?: () => { key?: Record<string, unknown> } };
  const keys = Object.keys(instance.getOptions?.().key ?? {});
  return keys.filter((name) => name.length > 1 && !/[A-Z]/.test(name));
}

/** `--same-service-as ORIGIN` or `--separate-service` as a declaration of the run's origin. */
function originOf(sameAs: string | undefined, separate: boolean | undefined): { origin?: OriginDeclaration } {
  if (sameAs !== undefined) {
    if (sameAs.trim() === '')
      throw new UsageError('--same-service-as needs the URL the register knows the service by');
    return { origin: { sameAs: serviceOf(sameAs.trim()) } };
  }
  return separate ? { origin: { separate: true } } : {};
}

/** The command names, for "did you mean" (suggest.ts). */
const COMMANDS = ['validate', 'run', 'reconcile', 'status', 'register', 'template', 'sandbox', 'webhooks'];

/**
 * Runs the payouts command line and resolves to its exit code. The CLI layer only parses
 * (STYLE.md): every command is a plain async function of a typed options object.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode = 0;
  const setExit = (code: number) => {
    exitCode = code;
  };
  // Commands load their modules when they run (validate need not load the HTTP client, the
  // sandbox or exceljs). Builders run synchronously, so what a builder needs is loaded first.
  const command = argv.find((a) => !a.startsWith('-'));
  const connection =
    command === 'run' || command === 'reconcile' ? await import('./connection.js') : undefined;
  const webhooks = command === 'webhooks' ? await import('./webhooks.js') : undefined;
  const parser = yargs(argv)
    .scriptName('payouts')
    .usage('$0 <command> [options]\n\nValidate and pay CSV/XLSX payout sheets.')
    .command(
      'validate <file>',
      'dry run: read, map and pre-validate every row (no network) - write the results file',
      (y) =>
        registerOption(sheetOptions(y)).option('base-url', {
          type: 'string',
          describe: 'the service whose register scope to check against (default PAYOUTS_BASE_URL)',
        }),
      async (args) => {
        const { validateCommand } = await import('./validate.js');
        exitCode = await validateCommand(
          {
            ...commonSheetOptions(args as unknown as SheetArgs, io),
            register: registerHint(args, io),
          },
          io,
        );
      },
    )
    .command(
      'run <file>',
      'validate, then pay every valid row: beneficiary, recipient, simulation, transaction (resumable)',
      (y) =>
        connection!
          .connectionOptions(registerOption(sheetOptions(y)))
          .option('sandbox', {
            type: 'boolean',
            default: false,
            describe: 'start an embedded sandbox on a free loopback port and run against it',
          })
          .option('checkpoint', {
            type: 'string',
            hidden: true,
            describe: 'replaced by --register',
          })
          .option('approve', {
            type: 'string',
            describe: 'refuse to send unless the batch digest matches DIGEST',
          })
          .option('retry-unknown', {
            type: 'boolean',
            default: false,
            describe: 're-send rows whose earlier outcome is unknown, with the same Idempotency-Key',
          })
          .option('same-service-as', {
            type: 'string',
            describe:
              'declare the service this run reaches the same as ORIGIN, whose payouts the register holds (another spelling of its URL: localhost, a second name, a proxy), remembered',
          })
          .option('separate-service', {
            type: 'boolean',
            describe:
              'declare the service this run reaches another one than those the register holds for this integrator (a staging copy), remembered',
          })
          .conflicts('same-service-as', 'separate-service')
          .option('concurrency', { type: 'number', default: 4, describe: 'rows in flight at once' })
          .option('rate', {
            type: 'number',
            default: 20,
            describe: 'requests per second, all endpoints together',
          })
          .option('wait', {
            type: 'number',
            default: 0,
            describe:
              'after sending, check transaction statuses for up to this many seconds (completed/failed)',
          })
          .option('max-outage', {
            type: 'number',
            default: BREAKER_DEFAULTS.maxOutageMs / 1000,
            describe:
              'seconds an outage of the service (no answer, 5xx, 429 on every request) is waited through before the run stops with exit 6',
          })
          .option('events', {
            type: 'string',
            describe:
              'webhook events file of "payouts webhooks listen --events": rows it confirms become completed or failed',
          })
          .option('log-format', {
            choices: ['json', 'text'] as const,
            describe: 'default: text on a terminal, else json',
          })
          .option('log-file', { type: 'string', describe: 'write logs to this file instead of stderr' })
          .option('log-level', {
            choices: ['debug', 'info', 'warn', 'error'] as const,
            default: 'info',
            describe: 'least important log level shown',
          }),
      async (args) => {
        if (args.sandbox) {
          const given = (['base-url', 'auth-url'] as const).filter((name) => args[name] !== undefined);
          if (given.length > 0) {
            throw new UsageError(
              `--sandbox runs against an embedded sandbox of its own, so it takes no ${given.map((n) => `--${n}`).join(' or ')}: leave ${given.length === 1 ? 'it' : 'them'} out to rehearse, or leave out --sandbox to run against that service`,
            );
          }
        }
        const sheet = commonSheetOptions(args as unknown as SheetArgs, io, args.sandbox);
        if (args.approve !== undefined && args.approve.trim() === '') {
          throw new UsageError(
            '--approve needs the batch digest that payouts validate printed for this sheet (--approve DIGEST)',
          );
        }
        if (args.checkpoint !== undefined) {
          throw new UsageError(
            '--checkpoint was replaced by the register, which knows every payout of every sheet: pass --register PATH (or set PAYOUTS_REGISTER), or leave it out to use the default',
          );
        }
        checkPace(args.concurrency, args.rate);
        if (!Number.isFinite(args.wait) || args.wait < 0)
          throw new UsageError('--wait must be 0 or more seconds');
        if (!Number.isFinite(args['max-outage']) || args['max-outage'] < 0)
          throw new UsageError(`--max-outage must be 0 or more seconds, got ${args['max-outage']}`);
        const { runCommand } = await import('./run.js');
        exitCode = await runCommand(
          {
            ...sheet,
            connection: () => connection!.connectionFromArgs(args, io.env),
            sandbox: args.sandbox,
            register: registerLocationText(args.register, io.env, io.cwd),
            approve: args.approve,
            retryUnknown: args['retry-unknown'],
            holdChangedPayees: args['hold-changed-payees'],
            ...originOf(args['same-service-as'], args['separate-service']),
            concurrency: args.concurrency,
            rate: args.rate,
            waitSeconds: args.wait,
            maxOutageSeconds: args['max-outage'],
            eventsFile: args.events ? resolveFrom(io.cwd, args.events) : undefined,
            logFormat: args['log-format'],
            logFile: args['log-file'] ? resolveFrom(io.cwd, args['log-file']) : undefined,
            logLevel: args['log-level'],
          },
          io,
        );
      },
    )
    .command(
      'reconcile [references..]',
      'ask the service what became of every payout sent (submitted) or in doubt (unknown), and record it',
      (y) =>
        connection!
          .connectionOptions(registerOption(y))
          .positional('references', {
            type: 'string',
            array: true,
            describe: 'payout references (default: all)',
          })
          .option('since', {
            type: 'string',
            describe: 'only payouts sent or changed since this date (YYYY-MM-DD, or an ISO 8601 time)',
          })
          .option('json', {
            type: 'boolean',
            default: false,
            describe: 'print one JSON summary object on stdout',
          })
          .option('concurrency', { type: 'number', default: 4, describe: 'look-ups in flight at once' })
          .option('rate', { type: 'number', default: 20, describe: 'requests per second' })
          .option('max-outage', {
            type: 'number',
            default: BREAKER_DEFAULTS.maxOutageMs / 1000,
            describe: 'seconds an outage of the service is waited through before reconcile stops with exit 6',
          }),
      async (args) => {
        checkPace(args.concurrency, args.rate);
        const since = args.since === undefined ? undefined : sinceOf(args.since);
        const { reconcileCommand } = await import('./reconcile.js');
        exitCode = await reconcileCommand(
          {
            connection: connection!.connectionFromArgs(args, io.env),
            register: registerLocationText(args.register, io.env, io.cwd),
            references: (args.references ?? []).map(String),
            ...(since ? { since } : {}),
            json: args.json,
            concurrency: args.concurrency,
            rate: args.rate,
            maxOutageSeconds: args['max-outage'],
          },
          io,
        );
      },
    )
    .command(
      'status [references..]',
      'what the register knows: each reference, or the recent runs (no network)',
      (y) =>
        registerOption(y)
          .positional('references', { type: 'string', array: true, describe: 'payout references' })
          .option('base-url', {
            type: 'string',
            describe: 'only the register scope of this service (default PAYOUTS_BASE_URL, else every scope)',
          })
          .option('limit', { type: 'number', default: 20, describe: 'how many recent runs to list' })
          // No defaults: yargs counts a default as given, and the two conflict.
          .option('json', { type: 'boolean', describe: 'print JSON on stdout' })
          .option('csv', { type: 'boolean', describe: 'print CSV on stdout' })
          .conflicts('json', 'csv'),
      async (args) => {
        if (!Number.isInteger(args.limit) || args.limit <= 0)
          throw new UsageError(`--limit must be a whole number of runs, got ${args.limit}`);
        const { statusCommand } = await import('./status.js');
        exitCode = await statusCommand(
          {
            ...registerHint(args, io),
            register: registerLocationText(args.register, io.env, io.cwd),
            references: (args.references ?? []).map(String),
            limit: args.limit,
            format: args.json ? 'json' : args.csv ? 'csv' : 'text',
          },
          io,
        );
      },
    )
    .command(
      'template [rails..]',
      'write blank sheet templates (CSV and XLSX) for one, several or all rails',
      (y) =>
        y
          .positional('rails', {
            type: 'string',
            array: true,
            describe: 'rails (default: all, plus one with every rail)',
          })
          .option('dir', { type: 'string', default: '.', describe: 'folder to write the templates to' })
          .option('force', {
            type: 'boolean',
            default: false,
            describe: 'overwrite templates that already exist in --dir',
          }),
      async (args) => {
        const { templateCommand } = await import('./template.js');
        exitCode = await templateCommand(
          { rails: args.rails ?? [], dir: resolveFrom(io.cwd, args.dir), force: args.force },
          io,
        );
      },
    )
    .command(
      'sandbox',
      'run the local simulator of the payments service (its whole interface: docs/service.md) on 127.0.0.1',
      (y) =>
        sandboxFlags(y).option('json', {
          type: 'boolean',
          default: false,
          describe: 'print {url, port, seed} as JSON on stdout',
        }),
      async (args) => {
        const { sandboxCommand } = await import('./sandbox.js');
        exitCode = await sandboxCommand(
          { flags: args as Record<string, unknown>, json: Boolean(args.json) },
          io,
        );
      },
    )
    .command(
      'register <action>',
      'manage registers: copy one (SQLite file or PostgreSQL URL) into another',
      (y) =>
        y
          .positional('action', {
            choices: ['copy'] as const,
            describe: 'copy: every record of --from into --to',
          })
          .option('from', {
            type: 'string',
            demandOption: true,
            describe: 'the register to copy (path or postgres:// URL)',
          })
          .option('to', {
            type: 'string',
            demandOption: true,
            describe: 'the register to copy into (created if need be)',
          })
          .option('json', {
            type: 'boolean',
            default: false,
            describe: 'print the counts and conflicts as JSON',
          }),
      async (args) => {
        const { registerCopyCommand } = await import('./register.js');
        exitCode = await registerCopyCommand(
          {
            from: registerLocationText(args.from, {}, io.cwd),
            to: registerLocationText(args.to, {}, io.cwd),
            json: args.json,
          },
          io,
        );
      },
    )
    .command(
      'webhooks',
      'receive and verify webhook events - set the callback URL - show, rotate and fetch the webhook secret',
      (y) => webhooks!.webhooksCommands(y, io, setExit),
    )
    .demandCommand(
      1,
      'name a command: validate, run, reconcile, status, register, template, sandbox or webhooks',
    )
    .strict()
    .help()
    .alias('help', 'h')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 110))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(withSuggestions(message, COMMANDS, optionNames(parser)));
    });
  try {
    await parser.parseAsync();
    return exitCode;
  } catch (error) {
    return reportError(error, io, errorContextOf(argv, command, io));
  }
}

/** How the top-level handler reports an error: as the command's logs and --json would. */
export interface ErrorContext {
  /** The command's logs are JSON lines on stderr: the error is one more record there. */
  jsonLogs?: boolean;
  /** `validate` or `run` with --json: stdout still gets one JSON object, with the exit code. */
  jsonSummaryOf?: 'validate' | 'run';
}

/**
 * Reads from the raw arguments what reportError needs, since an error may come before (or
 * from) parsing them: whether logs are JSON on stderr and whether --json was asked for.
 */
function errorContextOf(argv: string[], command: string | undefined, io: CliIo): ErrorContext {
  const logs = command === 'run' || (command === 'webhooks' && argv.includes('listen'));
  const format = flagValue(argv, '--log-format');
  const file = flagValue(argv, '--log-file');
  const jsonLogs =
    logs &&
    file === undefined &&
    logFormatOf({
      format: format === 'json' || format === 'text' ? (format as LogFormat) : undefined,
      stderr: io.stderr,
    }) === 'json';
  const json = argv.includes('--json') || argv.includes('--json=true');
  const jsonSummaryOf = json && (command === 'validate' || command === 'run') ? command : undefined;
  return { jsonLogs, ...(jsonSummaryOf ? { jsonSummaryOf } : {}) };
}

/** The value of `--name VALUE` or `--name=VALUE`, the last one given. */
function flagValue(argv: string[], name: string): string | undefined {
  let value: string | undefined;
  argv.forEach((arg, i) => {
    if (arg === name) value = argv[i + 1];
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
  });
  return value;
}

/**
 * The one top-level handler: maps the error family to exit codes, never prints a stack. With
 * JSON logs the error is one JSON record on stderr (unless the command already logged it); with
 * --json stdout gets `{command, exitCode, error}` so a script always has an object to read.
 */
export function reportError(error: unknown, io: CliIo, context: ErrorContext = {}): number {
  const exitCode = exitCodeOfError(error);
  if (context.jsonSummaryOf) {
    const { exitCode: _, ...fields } = fatalFields(error, exitCode);
    const described = { ...fields, message: fatalMessage(error) };
    println(io.stdout, JSON.stringify({ command: context.jsonSummaryOf, exitCode, error: described }));
  }
  if (isLoggedOnStderr(error)) {
    if (io.env['PAYOUTS_DEBUG'] && error instanceof Error && error.stack) println(io.stderr, error.stack);
    return exitCode;
  }
  if (context.jsonLogs) {
    const logger = createLogger({ format: 'json', stderr: io.stderr });
    logger.fatal(fatalFields(error, exitCode), fatalMessage(error));
    logger.flush();
    if (io.env['PAYOUTS_DEBUG'] && error instanceof Error && error.stack) println(io.stderr, error.stack);
    return exitCode;
  }
  if (error instanceof PayoutsError) {
    println(io.stderr, `payouts: ${error.message}`);
    if (error.code === 'USAGE') println(io.stderr, 'Run "payouts --help" for the commands and options.');
    return exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  println(io.stderr, `payouts: internal error: ${message}`);
  println(
    io.stderr,
    'This is a bug in payouts, not in your sheet. Set PAYOUTS_DEBUG=1 to see the stack trace.',
  );
  if (io.env['PAYOUTS_DEBUG'] && error instanceof Error && error.stack) println(io.stderr, error.stack);
  return EXIT_INTERNAL;
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  tolerateClosedOutput();
  main(hideBin(process.argv)).then(
    (code) => {
      process.exitCode = code;
      exitWhenIdle();
    },
    (error: unknown) => {
      process.exitCode = reportError(error, processIo());
      exitWhenIdle();
    },
  );
}
