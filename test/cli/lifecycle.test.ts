/**
 * The one command lifecycle (src/cli/lifecycle.ts): the runner ends the log, tells the person
 * and the script, and picks the exit code; a log file that cannot be written is exit 2, or 6
 * once anything was sent, said after the summary; an error is the log's one fatal record and is
 * rethrown; a command's cleanups run last, whatever happened.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type Ending, runLifecycle } from '../../src/cli/lifecycle.js';
import type { CronSignals } from '../../src/cron/send.js';
import { GuardError } from '../../src/errors.js';
import { withTempDir } from '../helpers/cli.js';

/** Streams and what was written to them. */
function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const seen = { out: '', err: '' };
  stdout.on('data', (d: Buffer) => {
    seen.out += d.toString('utf8');
  });
  stderr.on('data', (d: Buffer) => {
    seen.err += d.toString('utf8');
  });
  return { io: { stdout, stderr, env: {}, cwd: process.cwd() }, seen };
}

/** What each ending printed for a script, in order. */
const printed: { exitCode: number; failed: string | undefined }[] = [];

const ENDING: Ending = {
  exitCode: 1,
  finished: { msg: 'thing finished', fields: { rows: 3 } },
  tell: ({ exitCode }) => ['Did the thing: 3 rows', `code ${exitCode}`],
  print: ({ exitCode, logFailure }) => {
    printed.push({ exitCode, failed: logFailure?.message });
  },
};

describe('the command lifecycle', () => {
  it('with a --log-file: the finished record ends the file, the summary goes to stderr, the code is the ending’s', async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, 'log.jsonl');
      const { io, seen } = capture();
      printed.length = 0;
      const code = await runLifecycle({ 'log-file': file, 'log-format': 'json' }, io, async () => ENDING);
      expect(code).toBe(1);
      const records = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(records.at(-1)).toMatchObject({ msg: 'thing finished', rows: 3 });
      expect(seen.err).toBe('Did the thing: 3 rows\ncode 1\n');
      expect(printed).toEqual([{ exitCode: 1, failed: undefined }]);
    });
  });

  it('with JSON logs on stderr: the summary is one record before the finished one', async () => {
    const { io, seen } = capture();
    printed.length = 0;
    expect(await runLifecycle({ 'log-format': 'json' }, io, async () => ENDING)).toBe(1);
    const records = seen.err
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r['msg'])).toEqual(['summary', 'thing finished']);
    expect(records[0]).toMatchObject({ lines: ['Did the thing: 3 rows', 'code 1'] });
  });

  it.skipIf(!existsSync('/dev/full'))(
    'a log file that cannot be written: exit 2, or 6 once something was sent, said after the summary',
    async () => {
      for (const [sent, expected] of [
        [false, 2],
        [true, 6],
      ] as const) {
        const { io, seen } = capture();
        printed.length = 0;
        const code = await runLifecycle({ 'log-file': '/dev/full', 'log-format': 'json' }, io, async () => ({
          ...ENDING,
          exitCode: 0,
          sent,
        }));
        expect(code).toBe(expected);
        const lines = seen.err.trim().split('\n');
        expect(lines.slice(0, 2)).toEqual(['Did the thing: 3 rows', `code ${expected}`]);
        expect(lines.at(-1)).toMatch(/^payouts: cannot write the log file \/dev\/full/);
        expect(printed[0]).toMatchObject({
          exitCode: expected,
          failed: expect.stringContaining('/dev/full'),
        });
      }
    },
  );

  it('an error is the one fatal record, then onError, then the cleanups; it is rethrown', async () => {
    const { io, seen } = capture();
    const order: string[] = [];
    const refused = new GuardError('the control totals do not match');
    await expect(
      runLifecycle(
        { 'log-format': 'json' },
        io,
        async (log, atEnd) => {
          atEnd(() => order.push('cleanup'));
          log.logger.info('working');
          throw refused;
        },
        async (error, log, exitCode) => {
          order.push(`onError ${exitCode}`);
          expect(error).toBe(refused);
          log.logger.info({ exitCode }, 'thing finished');
        },
      ),
    ).rejects.toBe(refused);
    expect(order).toEqual(['onError 4', 'cleanup']);
    const records = seen.err
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r['msg'])).toEqual([
      'working',
      'the control totals do not match',
      'thing finished',
    ]);
    expect(records[1]).toMatchObject({ level: 60, exitCode: 4, code: 'GUARD' });
  });
});

describe('the signals for cron at the end of a command', () => {
  /** Signals that record what they were asked to send, instead of sending it. */
  function recordingSignals() {
    const sent: { exitCode: number; summary: string; leftMs: number | undefined; error?: string }[] = [];
    const signals: CronSignals = {
      command: 'run',
      async send(end, logger, leftMs) {
        const out = new PassThrough();
        let summary = '';
        out.on('data', (d: Buffer) => {
          summary += d.toString('utf8');
        });
        await end.writeSummary(out, { text: 'a line' });
        logger.warn({ cron: 'test' }, 'a signal failed');
        sent.push({
          exitCode: end.exitCode,
          summary,
          leftMs,
          ...(end.error ? { error: end.error } : {}),
        });
      },
    };
    return { signals, sent };
  }

  it('sends them once, with the summary and the code, before the log’s last record', async () => {
    const { io, seen } = capture();
    const { signals, sent } = recordingSignals();
    const ending: Ending = {
      ...ENDING,
      cron: () => ({
        rows: new Map([['submitted', 3]]),
        writeSummary: async (out, extra) => {
          out.write(JSON.stringify({ rows: 3, ...extra }));
        },
      }),
    };
    const code = await runLifecycle(
      { 'log-format': 'json' },
      io,
      async () => ending,
      undefined,
      () => signals,
    );
    expect(code).toBe(1);
    // No stop signal came: the signals keep their own deadline.
    expect(sent).toEqual([{ exitCode: 1, summary: '{"rows":3,"text":"a line"}', leftMs: undefined }]);
    const records = seen.err
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r['msg'])).toEqual(['a signal failed', 'summary', 'thing finished']);
  });

  it('sends them for a command that threw, with the error object --json prints', async () => {
    const { io } = capture();
    const { signals, sent } = recordingSignals();
    const refused = new GuardError('the control totals do not match');
    await expect(
      runLifecycle(
        { 'log-format': 'json' },
        io,
        async () => Promise.reject(refused),
        undefined,
        () => signals,
      ),
    ).rejects.toBe(refused);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.exitCode).toBe(4);
    expect(sent[0]!.error).toBe('the control totals do not match');
    expect(JSON.parse(sent[0]!.summary)).toEqual({
      command: 'run',
      exitCode: 4,
      error: { code: 'GUARD', message: 'the control totals do not match' },
      text: 'a line',
    });
  });

  it('sends none when the signals’ own options cannot be read, and says why', async () => {
    const { io } = capture();
    let worked = false;
    const bad = new GuardError('--notify must use https://');
    await expect(
      runLifecycle(
        { 'log-format': 'json' },
        io,
        async () => {
          worked = true;
          return ENDING;
        },
        undefined,
        () => {
          throw bad;
        },
      ),
    ).rejects.toBe(bad);
    expect(worked).toBe(false);
  });
});
