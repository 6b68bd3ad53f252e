/**
 * Local storage that fails (disk full, a read-only or missing folder) gives exit 2
 * when nothing was sent and 6 once anything was, with the path and the errno in words: never
 * exit 70, never a stack trace, never a results file half written.
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { StorageError } from '../../src/errors.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { AtomicFile } from '../../src/sheet/atomic-file.js';
import { type CliResult, runCli } from '../helpers/cli.js';
import { paymentsOf, runAgainst, SANDBOX_ENV, spawnCli, testDir, testSandbox } from '../helpers/payouts.js';
import { reachableProgram } from '../helpers/reachable.js';
import { initTestRegister } from '../helpers/register.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../samples/payouts-clean.csv');
const SAMPLE_ROWS = 12;
/** The advice of a results file that cannot be written, by what went wrong. */
const RESULTS_ADVICE = {
  missing: '(its folder does not exist: create it, or write elsewhere with --out PATH, then run again)',
  denied:
    '(its folder cannot be written: fix its permissions, or write elsewhere with --out PATH, then run again)',
  full: '(free some space, or write elsewhere with --out PATH, then run again)',
};

/** Mounts a tmpfs on `dir` (root only); false where the test cannot mount one. */
function mountTmpfs(dir: string, options: string): boolean {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return false;
  }
  // Lazy: detached at once even if a file on it is still open, so no mount outlives the test.
  onTestFinished(() => {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  });
  return true;
}

/** A 64 KB tmpfs filled to the last byte: a file can still be created, not written. */
async function fullDisk(dir: string): Promise<boolean> {
  if (!mountTmpfs(dir, 'size=64k')) return false;
  try {
    await writeFile(path.join(dir, 'filler'), Buffer.alloc(128 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  return true;
}

const canMount = process.getuid?.() === 0 && process.platform === 'linux';

async function sheetIn(dir: string): Promise<string> {
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(SAMPLE, sheet);
  return sheet;
}

/** The one `payouts: ...` line of a text-mode failure, checked for one line and no stack. */
function errorLine(result: CliResult): string {
  const lines = result.stderr.split('\n').filter((l) => l.startsWith('payouts: '));
  expect(lines).toHaveLength(1);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).not.toContain('internal error');
  return lines[0]!;
}

/** The JSON log records a run wrote on stderr (the human summary lines are not records). */
function records(result: CliResult): Record<string, unknown>[] {
  return result.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('payouts validate: an unusable results path is exit 2 with the path and the errno', () => {
  it('a missing folder', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const out = path.join(dir, 'missing', 'results.csv');
    const result = await runCli(['validate', sheet, '--out', out, '--json', '--log-format', 'text']);
    expect(result.code).toBe(2);
    expect(errorLine(result)).toBe(
      `payouts: cannot write the results file ${out} ${RESULTS_ADVICE.missing}: no such file or directory (ENOENT)`,
    );
    expect(JSON.parse(result.stdout)).toEqual({
      command: 'validate',
      exitCode: 2,
      error: {
        code: 'STORAGE',
        path: out,
        errno: 'ENOENT',
        message: `cannot write the results file ${out} ${RESULTS_ADVICE.missing}: no such file or directory (ENOENT)`,
      },
    });
  });

  it('a read-only folder', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const readOnly = path.join(dir, 'ro');
    await mkdir(readOnly);
    // Root ignores folder permissions: a read-only mount is what it cannot write.
    const mounted = mountTmpfs(readOnly, 'ro,size=64k');
    if (!mounted) execFileSync('chmod', ['555', readOnly]);
    const out = path.join(readOnly, 'results.csv');
    const result = await runCli(['validate', sheet, '--out', out, '--log-format', 'text']);
    expect(result.code).toBe(2);
    expect(errorLine(result)).toBe(
      mounted
        ? `payouts: cannot write the results file ${out} ${RESULTS_ADVICE.denied}: the file system is read-only (EROFS)`
        : `payouts: cannot write the results file ${out} ${RESULTS_ADVICE.denied}: permission denied (EACCES)`,
    );
    expect(await readdir(readOnly)).toEqual([]);
  });

  it.skipIf(!canMount)('a full disk, leaving no partial results file', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const full = path.join(dir, 'full');
    await mkdir(full);
    expect(await fullDisk(full)).toBe(true);
    const out = path.join(full, 'results.csv');
    const result = await runCli(['validate', sheet, '--out', out, '--log-format', 'text']);
    expect(result.code).toBe(2);
    expect(errorLine(result)).toBe(
      `payouts: cannot write the results file ${out} ${RESULTS_ADVICE.full}: no space left on the device (the disk is full) (ENOSPC)`,
    );
    expect(await readdir(full)).toEqual(['filler']);
  });
});

describe('the results file: a write error is a StorageError (injected, where no tmpfs can be mounted)', () => {
  it('ENOSPC from the stream names the file and says it in words; exit 2, or 6 once sent', async () => {
    const dir = await testDir();
    const target = path.join(dir, 'results.csv');
    const file = await AtomicFile.create(target);
    file.stream.emit(
      'error',
      Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    );
    const error = await file.commit().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    const storage = error as StorageError;
    expect(storage.message).toBe(
      `cannot write the results file ${target} ${RESULTS_ADVICE.full}: no space left on the device (the disk is full) (ENOSPC)`,
    );
    expect([storage.path, storage.errno, storage.exitCode, storage.sent().exitCode]).toEqual([
      target,
      'ENOSPC',
      2,
      6,
    ]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('payouts run: storage failures', () => {
  it('a missing results folder is found before anything is sent: exit 2, nothing paid', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const out = path.join(dir, 'missing', 'results.csv');
    const result = await runAgainst(sb, sheet, ['--out', out, '--json', '--log-format', 'json']);
    expect(result.code).toBe(2);
    expect(paymentsOf(sb)).toHaveLength(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'run',
      exitCode: 2,
      error: { code: 'STORAGE', errno: 'ENOENT', path: out },
    });
  });

  it('a results folder that is a file: exit 2 naming it, nothing paid, never exit 70', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    await writeFile(path.join(dir, 'afile'), 'x');
    const out = path.join(dir, 'afile', 'results.csv');
    for (const command of ['validate', 'run'] as const) {
      const result =
        command === 'run'
          ? await runAgainst(sb, sheet, ['--out', out, '--log-format', 'text'])
          : await runCli(['validate', sheet, '--out', out, '--no-report', '--log-format', 'text']);
      expect(result.code, `${command}: ${result.stderr}`).toBe(2);
      expect(errorLine(result)).toBe(
        `payouts: cannot write the results file ${out} (a part of its path is a file, not a folder: write elsewhere with --out PATH, then run again): a part of the path is not a directory (ENOTDIR)`,
      );
    }
    expect(paymentsOf(sb)).toHaveLength(0);
  });

  it.skipIf(process.platform !== 'linux')(
    'a register under /proc (its folder cannot be made): exit 2 at once, never a hang',
    async () => {
      const sb = await testSandbox();
      const dir = await testDir();
      const sheet = await sheetIn(dir);
      const register = '/proc/payouts-test/register.db';
      const started = Date.now();
      const run = await spawnCli(['run', sheet, '--base-url', sb.url, '--log-format', 'text'], {
        ...SANDBOX_ENV,
        PAYOUTS_REGISTER: register,
      }).exited;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(
        `payouts: there is no payouts register at ${register} (named by PAYOUTS_REGISTER)`,
      );
      expect(sb.ledger().requests.total).toBe(0);
      // Making one there is refused in words too, at once.
      const init = await spawnCli(['register', 'init', register, '--log-format', 'text'], {}).exited;
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(init.code, init.stderr).toBe(2);
      expect(init.stderr).toContain(
        `payouts: the register ${register} cannot be created: no such file or directory (ENOENT)`,
      );
    },
  );

  it('a log file that cannot be opened: exit 2, nothing paid, no crash', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const log = path.join(dir, 'missing', 'run.log');
    const result = await runAgainst(sb, sheet, ['--log-file', log]);
    expect(result.code).toBe(2);
    expect(paymentsOf(sb)).toHaveLength(0);
    expect(errorLine(result)).toBe(
      `payouts: cannot write the log file ${log} (free some space or fix the folder, or choose another --log-file PATH): no such file or directory (ENOENT)`,
    );
  });

  it.skipIf(!canMount)(
    'a disk that fills up after paying: exit 6, the --json summary and the log say so',
    async () => {
      const sb = await testSandbox();
      const dir = await testDir();
      const sheet = await sheetIn(dir);
      const full = path.join(dir, 'full');
      await mkdir(full);
      expect(await fullDisk(full)).toBe(true);
      const out = path.join(full, 'results.csv');
      const result = await runAgainst(sb, sheet, ['--out', out, '--json', '--log-format', 'json']);
      expect(result.code).toBe(6);
      expect(paymentsOf(sb)).toHaveLength(SAMPLE_ROWS);
      const message = `cannot write the results file ${out} ${RESULTS_ADVICE.full}: no space left on the device (the disk is full) (ENOSPC)`;
      expect(JSON.parse(result.stdout)).toEqual({
        command: 'run',
        exitCode: 6,
        error: { code: 'STORAGE', path: out, errno: 'ENOSPC', message },
      });
      // JSON logs: the error is one record, and the run's last record says how it ended.
      const logged = records(result);
      const fatal = logged.filter((r) => r['level'] === 60);
      expect(fatal).toEqual([
        expect.objectContaining({ msg: message, code: 'STORAGE', exitCode: 6, errno: 'ENOSPC', path: out }),
      ]);
      // The results file could not be written: the last record names none (it names only one that exists).
      expect(logged.at(-1)).toMatchObject({ msg: 'run finished', exitCode: 6, results: null });
      expect(await readdir(full)).toEqual(['filler']);
    },
  );
});

describe('payouts run --log-file on a disk that is full', () => {
  it.skipIf(!canMount)('pays, writes the results, and ends with exit 6 naming the log file', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const full = path.join(dir, 'full');
    await mkdir(full);
    expect(await fullDisk(full)).toBe(true);
    const log = path.join(full, 'run.log');
    const result = await runAgainst(sb, sheet, ['--json', '--log-file', log]);
    expect(result.code).toBe(6);
    expect(paymentsOf(sb)).toHaveLength(SAMPLE_ROWS);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    const message = `cannot write the log file ${log} (free some space or fix the folder, or choose another --log-file PATH): no space left on the device (the disk is full) (ENOSPC)`;
    expect(summary).toMatchObject({
      exitCode: 6,
      statuses: { submitted: SAMPLE_ROWS },
      error: { code: 'STORAGE', message },
    });
    expect(errorLine(result)).toBe(`payouts: ${message}`);
  });
});

describe('payouts run --events: an events file that cannot be read', () => {
  it('is exit 2 naming the file, before anything is sent', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const events = path.join(dir, 'events');
    await mkdir(events); // a folder where the file should be: reading it fails with EISDIR
    const result = await runAgainst(sb, sheet, ['--events', events, '--json', '--log-format', 'json']);
    expect(result.code).toBe(2);
    expect(sb.ledger().requests.total).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'run',
      exitCode: 2,
      error: {
        code: 'STORAGE',
        errno: 'EISDIR',
        message: `cannot read the events file ${events} (fix the file or its folder, or give another --events PATH): it is a directory (EISDIR)`,
      },
    });
  });
});

describe('payouts webhooks listen: an events file it cannot open', () => {
  it('is exit 2 and one JSON record naming the file (logs are JSON off a terminal)', async () => {
    const dir = await testDir();
    const events = path.join(dir, 'missing', 'events.jsonl');
    const result = await runCli(['webhooks', 'listen', '--port', '0', '--events', events], {
      env: { PAYOUTS_WEBHOOK_SECRET: 'whsec-listen-storage-test' },
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(records(result)).toEqual([
      expect.objectContaining({
        level: 60,
        code: 'STORAGE',
        exitCode: 2,
        errno: 'ENOENT',
        path: events,
        msg: `cannot write the events file ${events} (fix the file or its folder, or give another --events PATH): no such file or directory (ENOENT)`,
      }),
    ]);
    expect(result.stderr).not.toContain('whsec-listen-storage-test');
  });
});

describe('payouts run: the operator surface of JSON logs', () => {
  it('ends with a "run finished" record: counts, totals, exit code, duration, paths', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const result = await runAgainst(sb, sheet, ['--json', '--log-format', 'json']);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    const last = records(result).at(-1)!;
    expect(last).toMatchObject({
      level: 30,
      msg: 'run finished',
      exitCode: 0,
      rows: SAMPLE_ROWS,
      statuses: { submitted: SAMPLE_ROWS, invalid: 0, failed: 0, unknown: 0, skipped: 0 },
      totals: summary['totals'] as Record<string, string>,
      results: summary['results'] as string,
      register: summary['register'] as string,
    });
    expect(last['totals']).toEqual({ BRL: '2490.90', COP: '3150000.00', MXN: '19200.00', USD: '24905.74' });
    expect(typeof last['durationMs']).toBe('number');
  });

  it('a fatal error is one JSON record on stderr when logs are JSON', async () => {
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const result = await runCli(['run', sheet, '--base-url', 'http://127.0.0.1:9', '--concurrency', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('payouts: ');
    expect(records(result)).toEqual([
      expect.objectContaining({
        level: 60,
        code: 'USAGE',
        exitCode: 2,
        msg: '--concurrency must be a positive number, got 0',
      }),
    ]);
  });
});

describe('files payouts writes are private (mode 0600)', () => {
  it('results and log file, whatever the sheet mode', async () => {
    const sb = await testSandbox();
    const dir = await testDir();
    const sheet = await sheetIn(dir);
    const log = path.join(dir, 'run.log');
    const result = await runAgainst(sb, sheet, ['--json', '--log-file', log]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { results: string };
    const modeOf = async (file: string) => (await stat(file)).mode & 0o777;
    // The umask can only take bits away: 0600 stays 0600 under the usual 022 or 077.
    expect(await modeOf(summary.results)).toBe(0o600);
    expect(await modeOf(log)).toBe(0o600);
  });
});

/**
 * A register that paid the sample, which this user can read but not write: status and
 * validate read it (every row already paid), run refuses it with `refusal` (exit 2) and sends
 * nothing.
 */
async function expectReadButNotWritten(
  cli: (
    args: string[],
    env: NodeJS.ProcessEnv,
  ) => Promise<{ code: number | null; stdout: string; stderr: string }>,
  facts: { sb: SandboxHandle; sheet: string; register: string; out: string; refusal: string },
): Promise<void> {
  const { sb, sheet, register, out, refusal } = facts;
  const status = await cli(['status', '--register', register, '--json'], {});
  expect(status.code, status.stderr).toBe(0);
  expect(JSON.parse(status.stdout).runs).toHaveLength(1);
  const validate = await cli(
    [
      'validate',
      sheet,
      '--register',
      register,
      '--base-url',
      sb.url,
      '--json',
      '--no-report',
      '--out',
      path.join(out, 'v.csv'),
    ],
    {},
  );
  expect(validate.code, validate.stderr).toBe(0);
  expect(JSON.parse(validate.stdout).statuses).toMatchObject({ skipped: SAMPLE_ROWS });
  const requests = sb.ledger().requests.total;
  const run = await cli(
    ['run', sheet, '--base-url', sb.url, '--log-format', 'text', '--out', path.join(out, 'r.csv')],
    { ...SANDBOX_ENV, PAYOUTS_REGISTER: register },
  );
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toContain(refusal);
  expect(sb.ledger().requests.total).toBe(requests);
  expect(paymentsOf(sb)).toHaveLength(SAMPLE_ROWS);
}

/** Runs the CLI as the unprivileged user nobody (root reads and writes past any mode bits). */
const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

describe('a register in a folder this user cannot write', () => {
  it.skipIf(process.getuid?.() !== 0 || process.platform !== 'linux')(
    'is read by status and validate; run says it cannot be written (exit 2), nothing sent',
    async () => {
      const sb = await testSandbox();
      const dir = await testDir();
      await chmod(dir, 0o755);
      const sheet = await sheetIn(dir);
      await chmod(sheet, 0o644);
      const folder = path.join(dir, 'state');
      await mkdir(folder);
      const register = initTestRegister(path.join(folder, 'register.db'));
      const paid = await spawnCli(['run', sheet, '--base-url', sb.url, '--json'], {
        ...SANDBOX_ENV,
        PAYOUTS_REGISTER: register,
      }).exited;
      expect(paid.code, paid.stderr).toBe(0);
      const out = path.join(dir, 'out');
      await mkdir(out);
      await chown(out, 65534, 65534);
      // The register is the user's own file, in a folder the user cannot write.
      await chown(register, 65534, 65534);
      await chmod(folder, 0o555);

      const program = reachableProgram();
      await expectReadButNotWritten((args, env) => spawnCli(args, env, asNobody, program).exited, {
        sb,
        sheet,
        register,
        out,
        refusal: `payouts: the register ${register} cannot be written: its folder is read-only for this user (SQLite needs to write beside it)`,
      });
    },
  );
});

describe('a register on a read-only file system', () => {
  it('is read by status and validate, and refused by run as one that cannot be written (exit 2)', async () => {
    const dir = await testDir();
    const mount = path.join(dir, 'mount');
    await mkdir(mount);
    if (!mountTmpfs(mount, 'size=8m')) return; // needs root: CI runs as root
    const register = initTestRegister(path.join(mount, 'register.db'));
    const sb = await testSandbox();
    const sheet = path.join(dir, 'payouts.csv');
    await copyFile(SAMPLE, sheet);
    // Paid by a child process: once it exits nothing holds a file of the mount open.
    const paid = await spawnCli(['run', sheet, '--base-url', sb.url, '--json'], {
      ...SANDBOX_ENV,
      PAYOUTS_REGISTER: register,
    }).exited;
    expect(paid.code, paid.stderr).toBe(0);
    execFileSync('mount', ['-o', 'remount,ro', mount], { stdio: 'pipe' });

    await expectReadButNotWritten((args, env) => runCli(args, { env }), {
      sb,
      sheet,
      register,
      out: dir,
      refusal: `the register ${register} cannot be written: the file system is read-only (EROFS)`,
    });
  });
});
