#!/usr/bin/env node
/**
 * The payouts command line: a table of commands, one module each under src/cli/commands/,
 * parsed by yargs, and the one top-level handler that turns what ended a command into its exit
 * code (cli/exit-code.ts) and reports an error as the command's logs would.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { hideBin, Parser } from 'yargs/helpers';
import { checkEnvironment, switchedOn } from '../environment.js';
import { PayoutsError, UsageError } from '../errors.js';
import type { CommandModule } from './command.js';
import { exitCodeOfError, outcomeCode } from './exit-code.js';
import { type CliIo, println, processIo } from './io.js';
import {
  createLogger,
  errorJson,
  fatalFields,
  fatalMessage,
  isLoggedOnStderr,
  type LogArgs,
  logSettingsOf,
  jsonOnStderr as logsAreJsonOnStderr,
} from './logging.js';
import { checkOptionValues, type OptionKinds } from './option-values.js';
import {
  routeProcessWarnings,
  type WarningSink,
  warningFields,
  warningsFallback,
} from './process-warnings.js';
import { exitWhenIdle, tolerateClosedOutput } from './signals.js';
import { withSuggestions } from './suggest.js';
import { type Needs, usageInWords } from './usage-words.js';

/** One line of the command table: what `payouts --help` shows, and where the command lives. */
interface CommandEntry {
  name: string;
  /** yargs' command text: the name and its positionals. */
  command: string;
  describe: string;
  /** The command's module, loaded when the command is parsed (validate never loads the HTTP client). */
  load: () => Promise<CommandModule>;
  /** What a missing positional is, for "payouts validate needs the payout sheet: ...". */
  needs?: { what: string; usage: string };
  /** It takes the logging options (README "Options"): without a terminal its errors are JSON lines. */
  logs?: boolean;
}

const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'validate',
    command: 'validate <file>',
    describe: 'dry run: read, map and pre-validate every row (no network) - write the results file',
    load: () => import('./commands/validate.js') as Promise<CommandModule>,
    needs: { what: 'the payout sheet', usage: 'payouts validate <sheet.csv|sheet.xlsx> [options]' },
    logs: true,
  },
  {
    name: 'run',
    command: 'run <file>',
    describe:
      'validate, then pay every valid row: beneficiary, recipient, simulation, transaction (resumable)',
    load: () => import('./commands/run.js') as Promise<CommandModule>,
    needs: { what: 'the payout sheet', usage: 'payouts run <sheet.csv|sheet.xlsx> [options]' },
    logs: true,
  },
  {
    name: 'approve',
    command: 'approve <file>',
    describe:
      "sign the sheet's approval statement with an SSH key (or record a signature made elsewhere) - the register keeps it",
    load: () => import('./commands/approve.js') as Promise<CommandModule>,
    needs: {
      what: 'the payout sheet',
      usage:
        'payouts approve <sheet.csv|sheet.xlsx> --statement | --key PATH | --signature FILE.sig [options]',
    },
    logs: true,
  },
  {
    name: 'policy',
    command: 'policy <action> [file]',
    describe:
      'the approval policy the register holds for a service: show it, or propose, sign and put in force a new one (set)',
    load: () => import('./commands/policy.js') as Promise<CommandModule>,
    needs: {
      what: 'an action',
      usage:
        'payouts policy show [--json] | payouts policy set FILE [--key PATH | --signature SIG | --statement]',
    },
    logs: true,
  },
  {
    name: 'reconcile',
    command: 'reconcile [references..]',
    describe:
      'ask the service what became of every payout sent (submitted) or in doubt (unknown), and record it',
    load: () => import('./commands/reconcile.js') as Promise<CommandModule>,
    logs: true,
  },
  {
    name: 'status',
    command: 'status [references..]',
    describe: 'what the register knows: each reference, or the recent runs (no network)',
    load: () => import('./commands/status.js') as Promise<CommandModule>,
  },
  {
    name: 'template',
    command: 'template [rails..]',
    describe: 'write blank sheet templates (CSV and XLSX) for one, several or all rails',
    load: () => import('./commands/template.js') as Promise<CommandModule>,
  },
  {
    name: 'sandbox',
    command: 'sandbox',
    describe:
      'run the local simulator of the payments service (its whole interface: docs/service.md) on 127.0.0.1',
    load: () => import('./commands/sandbox.js') as Promise<CommandModule>,
  },
  {
    name: 'register',
    command: 'register <action> [location]',
    describe:
      'manage registers: create one on purpose (init), copy one (SQLite file or PostgreSQL URL) into another',
    load: () => import('./commands/register.js') as Promise<CommandModule>,
    needs: {
      what: 'an action',
      usage: 'payouts register init [PATH|URL] | payouts register copy --from A --to B [options]',
    },
    logs: true,
  },
  {
    name: 'webhooks',
    command: 'webhooks',
    describe:
      'receive and verify webhook events - set the callback URL - show, rotate and fetch the webhook secret',
    load: () => import('./commands/webhooks.js') as Promise<CommandModule>,
  },
];

/** Which commands log: `webhooks listen` is the one subcommand of webhooks that does. */
function takesLogOptions(words: readonly unknown[]): boolean {
  const [first, second] = words.map(String);
  return COMMANDS.some((c) => c.name === first && c.logs) || (first === 'webhooks' && second === 'listen');
}

/**
 * Runs the payouts command line and resolves to its exit code. Each command's module is loaded
 * when yargs parses that command (builders may be async), so `--help` and `validate` load
 * neither the HTTP client, the sandbox nor exceljs.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number | undefined;
  const setExit = (code: number) => {
    exitCode = code;
  };
  // How an error is reported, from yargs' parsed options as soon as there are some.
  let context: ErrorContext | undefined;
  let parser: Argv;
  parser = COMMANDS.reduce(
    (y, entry) =>
      y.command(
        entry.command,
        entry.describe,
        async (c) => (await entry.load()).builder(c, io, setExit),
        async (args) => {
          const handler = (await entry.load()).handler;
          if (handler) exitCode = await handler(args as Record<string, unknown>, io);
        },
      ),
    yargs(argv)
      .scriptName('payouts')
      .usage('$0 <command> [options]\n\nValidate and pay CSV/XLSX payout sheets.'),
  )
    .middleware((args) => {
      context = errorContextOf(args, io);
      warningsFallback(warningSink(io, context));
      // The command's options are known only now, once its builder ran.
      checkOptionValues(argv, optionKinds(parser));
      // Before any command reads a setting: none is taken for unset, none misspelt is ignored.
      checkEnvironment(io.env);
    }, true)
    .demandCommand(
      1,
      `name a command: ${COMMANDS.map((c) => c.name)
        .join(', ')
        .replace(/, (\w+)$/, ' or $1')}`,
    )
    .strict()
    .help()
    .alias('help', 'h')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 110))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(usageMessage(message, argv, parser));
    });
  try {
    await parser.parseAsync();
    // A command's handler sets the code; --help and --version end here with none: 0.
    return exitCode ?? outcomeCode(true);
  } catch (error) {
    // yargs throws its parser's complaints (an option left without its value) as a YError:
    // the user's mistake, a usage error, not a bug in payouts.
    const failure =
      error instanceof Error && error.name === 'YError'
        ? new UsageError(usageMessage(error.message, argv, parser))
        : error;
    return reportError(failure, io, context ?? fallbackContext(argv, io));
  }
}

/** What the subcommands' positionals are, as `needs` is for the commands. */
const SUBCOMMAND_NEEDS: Readonly<Record<string, Needs>> = {
  'webhooks verify': {
    what: 'the file holding the raw request body',
    usage: 'payouts webhooks verify <body-file> --signature SIGNATURE [options]',
  },
};

/** The subcommands a command's second word may name. */
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  webhooks: ['listen', 'set-url', 'show-url', 'secret', 'rotate-secret', 'fetch-secret', 'verify'],
  register: ['copy', 'init'],
};

/** yargs' complaint in the words a new user needs: what is missing, what was meant. */
function usageMessage(message: string, argv: readonly string[], parser: Argv): string {
  // An option declared to need its value (requiresArg) and given none, where the check of the
  // values typed (option-values.ts) did not see it first: the same words.
  const bare = /^Not enough arguments following: (\S+)$/.exec(message);
  if (bare) return `--${bare[1]} needs a value after it (--${bare[1]} VALUE), or leave the option out`;
  const words = Parser(argv as string[])._.map(String);
  const entry = COMMANDS.find((c) => c.name === words[0]);
  const sub = entry && words[1] !== undefined && SUBCOMMANDS[entry.name]?.includes(words[1]) ? words[1] : '';
  const command = entry ? `${entry.name}${sub ? ` ${sub}` : ''}` : '';
  const needs = sub ? SUBCOMMAND_NEEDS[command] : entry?.needs;
  return withSuggestions(
    entry ? usageInWords(message, argv, command, needs) : message,
    COMMANDS.map((c) => c.name),
    optionNames(parser),
    argv,
  );
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

/** Which of the command's options take a value; `getOptions` is on yargs' instance, not in its types. */
function optionKinds(instance: unknown): OptionKinds {
  const options = (instance as { getOptions?: () => OptionKinds }).getOptions?.();
  return options ?? {};
}

/** How the top-level handler reports an error: as the command's logs and --json would. */
export interface ErrorContext {
  /** The command's logs are JSON lines on stderr: the error is one more record there. */
  jsonLogs?: boolean;
  /** A command given --json: stdout still gets one JSON object, with the exit code. */
  jsonSummaryOf?: string;
}

/** The commands whose --json prints one object: on an error, `{command, exitCode, error}`. */
const JSON_COMMANDS = [
  'validate',
  'run',
  'reconcile',
  'approve',
  'register copy',
  'register init',
  'policy set',
  'policy show',
  'status',
] as const;

/**
 * The error context of parsed options: JSON logs when `--log-format json` was asked for, or by
 * default (no terminal) on a command that takes the logging options; a --log-file takes the
 * logs off stderr, which then holds text.
 */
function errorContextOf(args: { _: readonly unknown[]; [key: string]: unknown }, io: CliIo): ErrorContext {
  const asked = args['log-format'];
  const settings = logSettingsOf(
    {
      ...(asked === 'json' || asked === 'text' ? { 'log-format': asked } : {}),
      ...(typeof args['log-file'] === 'string' ? { 'log-file': args['log-file'] } : {}),
    } as LogArgs,
    io,
  );
  const jsonLogs = (asked !== undefined || takesLogOptions(args._)) && logsAreJsonOnStderr(settings);
  // `register copy`: the action is a positional of register, not in `_`.
  const command = [String(args._[0] ?? ''), String(args._[1] ?? args['action'] ?? '')];
  const jsonSummaryOf =
    args['json'] === true
      ? JSON_COMMANDS.find((c) => c === command.join(' ') || c === command[0])
      : undefined;
  return { jsonLogs, ...(jsonSummaryOf ? { jsonSummaryOf } : {}) };
}

/**
 * When yargs failed before its middleware saw the options (a missing positional), the same
 * context from yargs' own parser run over the arguments alone.
 */
function fallbackContext(argv: string[], io: CliIo): ErrorContext {
  const args = Parser(argv, {
    string: ['log-format', 'log-file'],
    boolean: ['json'],
  }) as unknown as { _: unknown[]; [key: string]: unknown };
  return errorContextOf(args, io);
}

/**
 * The one top-level handler: its exit code is `exitCodeOfError`'s, whatever the format; never
 * a stack. With JSON logs the error is one JSON record on stderr (unless the command already
 * logged it); with --json stdout gets `{command, exitCode, error}` so a script always has an
 * object to read.
 */
export function reportError(error: unknown, io: CliIo, context: ErrorContext = {}): number {
  const exitCode = exitCodeOfError(error);
  const stack = switchedOn(io.env, 'PAYOUTS_DEBUG') && error instanceof Error ? error.stack : undefined;
  if (context.jsonSummaryOf)
    println(io.stdout, JSON.stringify(errorJson(context.jsonSummaryOf, error, exitCode)));
  // The command's records are all stderr holds: a stack goes in a record, never as text.
  if (isLoggedOnStderr(error)) return exitCode;
  if (context.jsonLogs) {
    const logger = createLogger({ format: 'json', stderr: io.stderr });
    logger.fatal({ ...fatalFields(error, exitCode), ...(stack ? { stack } : {}) }, fatalMessage(error));
    logger.flush();
    return exitCode;
  }
  if (error instanceof PayoutsError) {
    println(io.stderr, `payouts: ${error.message}`);
    if (error.code === 'USAGE') println(io.stderr, 'Run "payouts --help" for the commands and options.');
  } else {
    const message = error instanceof Error ? error.message : String(error);
    println(io.stderr, `payouts: internal error: ${message}`);
    println(
      io.stderr,
      'This is a bug in payouts, not in your sheet. Set PAYOUTS_DEBUG=1 to see the stack trace.',
    );
  }
  if (stack) println(io.stderr, stack);
  return exitCode;
}

/**
 * Where a process warning goes while no command log is open: as the command's errors would go,
 * one JSON record when its logs are JSON lines on stderr, else a `payouts: warning:` line.
 */
export function warningSink(io: CliIo, context: ErrorContext = {}): WarningSink {
  return (warning) => {
    if (context.jsonLogs) {
      const logger = createLogger({ format: 'json', stderr: io.stderr });
      logger.warn(warningFields(warning), warning.message);
      logger.flush();
      return;
    }
    println(io.stderr, `payouts: warning: ${warning.message}`);
  };
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
  routeProcessWarnings(warningSink(processIo(), fallbackContext(hideBin(process.argv), processIo())));
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
