/**
 * The run's logger: pino, JSON lines when stderr is not a terminal (cron, containers), short
 * text lines when it is, or as `--log-format` says; `--log-file` sends them to a file instead.
 * Secrets are redacted by key and account-like digit runs are masked in every string.
 */
import { createWriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { redactSecrets } from '../errors.js';

export type LogFormat = 'json' | 'text';

export interface LoggerOptions {
  format?: LogFormat;
  level?: string;
  file?: string;
  /** Where logs go without --log-file. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

const SECRET_KEYS = [
  'password',
  'client_secret',
  'clientSecret',
  'access_token',
  'refresh_token',
  'accessToken',
  'refreshToken',
  'authorization',
  'Authorization',
  'secret',
  'webhookSecret',
  'credentials',
];

// A UUID (left alone: ids of the service are not account data), an IBAN, or a run of 8 or
// more digits (account, routing, CLABE, document numbers).
const MASKABLE =
  /\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b|\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b|\d{8,}/g;
const UUID = /^[0-9A-Fa-f]{8}-/;

/** Masks account numbers, IBANs and other long digit runs in log text, keeping their last 4. */
export function maskAccountNumbers(text: string): string {
  return text.replace(MASKABLE, (match) =>
    UUID.test(match) ? match : `${'*'.repeat(match.length - 4)}${match.slice(-4)}`,
  );
}

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskAccountNumbers(redactSecrets(value));
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEYS.includes(k) ? '[REDACTED]' : scrub(v, depth + 1);
  return out;
}

/** Builds the logger of a command. */
export function createLogger(options: LoggerOptions): Logger {
  const format = options.format ?? (options.stderr.isTTY && !options.file ? 'text' : 'json');
  const target: NodeJS.WritableStream = options.file
    ? createWriteStream(options.file, { flags: 'a' })
    : options.stderr;
  const destination = format === 'json' ? target : textLines(target);
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`)], censor: '[REDACTED]' },
      formatters: { log: (object) => scrub(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const masked = args.map((a) => (typeof a === 'string' ? maskAccountNumbers(redactSecrets(a)) : a));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Turns pino's JSON lines into `HH:MM:SS level message key=value ...` for a person. */
function textLines(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          const { level, time, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const clock = new Date(Number(time)).toISOString().slice(11, 19);
          const fields = Object.entries(rest)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ');
          target.write(
            `${clock} ${(LEVELS[Number(level)] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`,
          );
        } catch {
          target.write(`${line}\n`);
        }
      }
      callback();
    },
  });
}
