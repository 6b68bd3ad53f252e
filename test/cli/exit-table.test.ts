/**
 * One failure, one exit code, whatever the log format (README "Exit codes"): each command that
 * can meet a failure meets it once with text logs and once with JSON logs, through main() with
 * captured streams (no terminal). With JSON logs stderr holds JSON lines only.
 */
import { mkdtempSync } from 'node:fs';
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { SANDBOX_ENV } from '../helpers/payouts.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');

const dir = mkdtempSync(path.join(tmpdir(), 'payouts-exit-table-'));
const sheet = path.join(dir, 'payouts.csv');
// A register that cannot be opened: a file that is no database.
const notARegister = path.join(dir, 'register.db');
let closedUrl: string;

beforeAll(async () => {
  await copyFile(SAMPLE, sheet);
  await writeFile(notARegister, 'this is not an SQLite database, only text that looks like one\n'.repeat(64));
  // A port that was free a moment ago: nothing listens there, so connections are refused.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  closedUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Failure = 'unreachable service' | 'unusable register' | 'missing sheet' | 'bad option';

/** The arguments of a command meeting a failure, or undefined where it cannot meet it. */
const CASES: Record<string, (failure: Failure) => { args: string[]; env?: NodeJS.ProcessEnv } | undefined> = {
  run: (failure) => {
    const service = ['--base-url', closedUrl, '--max-outage', '0'];
    switch (failure) {
      case 'unreachable service':
        return { args: ['run', sheet, ...service] };
      case 'unusable register':
        return { args: ['run', sheet, ...service, '--register', notARegister] };
      case 'missing sheet':
        return { args: ['run', path.join(dir, 'none.csv'), ...service] };
      case 'bad option':
        return { args: ['run', sheet, ...service, '--concurency', '2'] };
    }
  },
  validate: (failure) => {
    switch (failure) {
      // validate never talks to the service.
      case 'unreachable service':
        return undefined;
      case 'unusable register':
        return { args: ['validate', sheet, '--no-report', '--register', notARegister] };
      case 'missing sheet':
        return { args: ['validate', path.join(dir, 'none.csv')] };
      case 'bad option':
        return { args: ['validate', sheet, '--expect-count', 'twelve'] };
    }
  },
  reconcile: (failure) => {
    const service = ['--base-url', closedUrl, '--max-outage', '0'];
    switch (failure) {
      case 'unreachable service':
        return { args: ['reconcile', ...service] };
      case 'unusable register':
        return { args: ['reconcile', ...service, '--register', notARegister] };
      // reconcile reads no sheet.
      case 'missing sheet':
        return undefined;
      case 'bad option':
        return { args: ['reconcile', ...service, '--since', 'last tuesday'] };
    }
  },
  status: (failure) => {
    switch (failure) {
      // status reads the register only: no service, no sheet.
      case 'unreachable service':
      case 'missing sheet':
        return undefined;
      case 'unusable register':
        return { args: ['status', '--register', notARegister] };
      case 'bad option':
        return { args: ['status', '--limit', '0'] };
    }
  },
  'webhooks listen': (failure) => {
    const env = { PAYOUTS_WEBHOOK_SECRET: 'whsec-exit-table-0123456789' };
    switch (failure) {
      // The receiver is the server here: no service to reach, no sheet.
      case 'unreachable service':
      case 'missing sheet':
        return undefined;
      case 'unusable register':
        return { args: ['webhooks', 'listen', '--port', '0', '--register', notARegister], env };
      case 'bad option':
        return { args: ['webhooks', 'listen', '--port', '70000'], env };
    }
  },
};

const EXPECTED: Record<Failure, number> = {
  'unreachable service': 6,
  'unusable register': 2,
  'missing sheet': 2,
  'bad option': 2,
};

/** status takes no logging options (it neither talks to the service nor writes): its JSON is --json. */
const formatArgs = (command: string, format: 'text' | 'json') =>
  command === 'status' ? (format === 'json' ? ['--json'] : []) : ['--log-format', format];

// Which combinations apply is known when the tests are collected; their arguments (the
// temporary folder, the closed port) once beforeAll made them.
const rows = Object.entries(CASES).flatMap(([command, caseOf]) =>
  (Object.keys(EXPECTED) as Failure[]).flatMap((failure) =>
    caseOf(failure) ? [{ command, failure, made: () => caseOf(failure)! }] : [],
  ),
);

describe('one failure, one exit code, whatever the format', () => {
  it('covers every command and failure that applies', () => {
    expect(rows.map((r) => `${r.command}: ${r.failure}`)).toHaveLength(14);
  });

  it.each(rows)('$command, $failure: exit the same with text and JSON logs', async (row) => {
    const made = row.made();
    const env = { ...SANDBOX_ENV, ...made.env };
    const text = await runCli([...made.args, ...formatArgs(row.command, 'text')], { env });
    const json = await runCli([...made.args, ...formatArgs(row.command, 'json')], { env });
    expect(text.code, text.stderr).toBe(EXPECTED[row.failure]);
    expect(json.code, json.stderr).toBe(text.code);
    // Text: one "payouts: ..." line says what is wrong; never a stack, never a bug.
    expect(text.stderr).toMatch(/^payouts: /m);
    expect(`${text.stderr}${json.stderr}`).not.toMatch(/internal error|\n\s+at /);
    if (row.command !== 'status') {
      const lines = json.stderr.split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(0);
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      // A record says how it ended, with the same code: the fatal error, or the command's last.
      expect(records.map((r) => r['exitCode'])).toContain(json.code);
      if (row.failure !== 'unreachable service') expect(records.some((r) => r['level'] === 60)).toBe(true);
    }
  });
});
