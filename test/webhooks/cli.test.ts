import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'libsql';
import { describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { PATHS } from '../../src/api/contract.js';
import type { CliIo } from '../../src/cli/io.js';
import { openCommandLog } from '../../src/cli/logging.js';
import { reportError } from '../../src/cli/main.js';
import { WEBHOOKS_DESCRIPTION, webhooksCommands, webhooksListenCommand } from '../../src/cli/webhooks.js';
import { UsageError } from '../../src/errors.js';
import { SANDBOX_CREDENTIALS, type SandboxHandle } from '../../src/sandbox/index.js';
import type { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { secretFingerprint } from '../../src/webhooks/secret.js';
import { initTestRegister, testRegisterPath } from '../helpers/register.js';
import { call, quoteFor, sandbox, token } from '../sandbox/helpers.js';
import { jsonLines, payload, SECRET, sign, tempDir } from './helpers.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function capture(env: NodeJS.ProcessEnv, cwd: string, tty = false) {
  const stdout = new PassThrough();
  const stderr = Object.assign(new PassThrough(), { isTTY: tty });
  const out = { stdout: '', stderr: '' };
  stdout.on('data', (d: Buffer) => {
    out.stdout += d.toString('utf8');
  });
  stderr.on('data', (d: Buffer) => {
    out.stderr += d.toString('utf8');
  });
  const io: CliIo = { stdout, stderr, env, cwd };
  return { io, out };
}

/** `payouts <args>` in-process, wired the way main.ts registers the webhooks command. */
async function payouts(args: string[], env: NodeJS.ProcessEnv = {}, cwd = process.cwd()): Promise<Run> {
  const { io, out } = capture(env, cwd);
  let code = 0;
  const parser = yargs(args)
    .scriptName('payouts')
    .command('webhooks', WEBHOOKS_DESCRIPTION, (y) =>
      webhooksCommands(y, io, (c) => {
        code = c;
      }),
    )
    .demandCommand(1)
    .strict()
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message);
    });
  try {
    await parser.parseAsync();
  } catch (error) {
    code = reportError(error, io);
  }
  return { code, ...out };
}

const CREDENTIALS_ENV = {
  PAYOUTS_CLIENT_ID: SANDBOX_CREDENTIALS.clientId,
  PAYOUTS_CLIENT_SECRET: SANDBOX_CREDENTIALS.clientSecret,
  PAYOUTS_USERNAME: SANDBOX_CREDENTIALS.username,
  PAYOUTS_PASSWORD: SANDBOX_CREDENTIALS.password,
};

/** Runs a webhooks subcommand against the sandbox with its credentials in the environment. */
function against(sb: SandboxHandle, cwd?: string) {
  return (command: string, ...rest: string[]) =>
    payouts(['webhooks', command, '--base-url', sb.url, ...rest], CREDENTIALS_ENV, cwd);
}

describe('payouts webhooks set-url / show-url', () => {
  it('sets the callback URL, shows it, and removes it with --clear', async () => {
    const sb = await sandbox();
    const run = against(sb);
    expect(await run('show-url', '--log-format', 'text')).toEqual({
      code: 0,
      stdout: '',
      stderr: 'no webhook callback URL is set\n',
    });
    // Where stderr is no terminal, it holds JSON lines only: the note is one summary record.
    const shown = await run('show-url');
    expect(shown).toMatchObject({ code: 0, stdout: '' });
    expect(JSON.parse(shown.stderr)).toMatchObject({
      msg: 'summary',
      lines: ['no webhook callback URL is set'],
    });

    const set = await run('set-url', 'https://hooks.example.com/payouts');
    expect(set).toEqual({ code: 0, stdout: 'https://hooks.example.com/payouts\n', stderr: '' });
    expect(await run('show-url')).toMatchObject({ code: 0, stdout: 'https://hooks.example.com/payouts\n' });
    expect(await run('show-url', '--json')).toMatchObject({
      stdout: `${JSON.stringify({ url: 'https://hooks.example.com/payouts' })}\n`,
    });

    expect(await run('set-url', '--clear', '--json')).toMatchObject({ code: 0, stdout: '{"url":null}\n' });
    expect((await run('show-url', '--json')).stdout).toBe('{"url":null}\n');
  });

  it('takes the logging options of every command that talks to the service: its requests in --log-file', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const run = against(sb, dir);
    for (const command of ['show-url', 'secret', 'fetch-secret', 'rotate-secret']) {
      const logFile = path.join(dir, `${command}.log`);
      const result = await run(command, '--json', '--log-level', 'debug', '--log-file', logFile);
      expect(result.code, result.stderr).toBe(0);
      const records = (await readFile(logFile, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg: string; path?: string });
      expect(records.map((r) => r.msg)).toContain('service answered');
      expect(records.some((r) => r.path?.startsWith('/v1/integrators/'))).toBe(true);
    }
    const set = await run(
      'set-url',
      'https://hooks.example.com/p',
      '--log-format',
      'json',
      '--log-level',
      'debug',
    );
    expect(set.stdout).toBe('https://hooks.example.com/p\n');
    for (const line of set.stderr.trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('level');
  });

  it('refuses a plain-http callback URL beyond loopback, and a URL with --clear, before calling the service', async () => {
    const sb = await sandbox();
    const run = against(sb);
    const plain = await run('set-url', 'http://hooks.example.com/payouts');
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/must use https/);
    expect((await run('set-url', 'https://a.example/h', '--clear')).code).toBe(2);
    expect((await run('set-url')).code).toBe(2);
    expect(sb.ledger().requests.total).toBe(0);
    expect((await run('set-url', 'http://127.0.0.1:9999/webhooks')).code).toBe(0);
  });
});

describe('payouts webhooks: connection and credentials', () => {
  it('exits 2 naming the missing variables, never their values', async () => {
    const sb = await sandbox();
    const { PAYOUTS_CLIENT_SECRET: _s, PAYOUTS_PASSWORD: _p, ...partial } = CREDENTIALS_ENV;
    const result = await payouts(['webhooks', 'show-url', '--base-url', sb.url], partial);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYOUTS_CLIENT_SECRET');
    expect(result.stderr).toContain('PAYOUTS_PASSWORD');
    expect(result.stderr).not.toContain(SANDBOX_CREDENTIALS.clientId);
  });

  it('exits 2 without a base URL, and for plain http:// to a remote host', async () => {
    const none = await payouts(['webhooks', 'show-url'], CREDENTIALS_ENV);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--base-url');
    const remote = await payouts(
      ['webhooks', 'show-url', '--base-url', 'http://payments.example.com'],
      CREDENTIALS_ENV,
    );
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/plain http:\/\/, which is refused except to loopback/);
    const auth = await payouts(
      [
        'webhooks',
        'show-url',
        '--base-url',
        'https://payments.example.com',
        '--auth-url',
        'http://id.example.com',
      ],
      CREDENTIALS_ENV,
    );
    expect(auth.code).toBe(2);
    expect(auth.stderr).toContain('--auth-url');
  });

  it('exits 3 when the service refuses the credentials', async () => {
    const sb = await sandbox();
    const result = await payouts(['webhooks', 'show-url', '--base-url', sb.url], {
      ...CREDENTIALS_ENV,
      PAYOUTS_PASSWORD: 'wrong-password-value',
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/refused the credentials/);
    expect(result.stderr).not.toContain('wrong-password-value');
  });

  it('takes the URL from PAYOUTS_BASE_URL and the client id and user from flags', async () => {
    const sb = await sandbox();
    const { PAYOUTS_CLIENT_ID: _c, PAYOUTS_USERNAME: _u, ...secretsOnly } = CREDENTIALS_ENV;
    const result = await payouts(
      [
        'webhooks',
        'show-url',
        '--client-id',
        SANDBOX_CREDENTIALS.clientId,
        '--username',
        SANDBOX_CREDENTIALS.username,
      ],
      { ...secretsOnly, PAYOUTS_BASE_URL: sb.url },
    );
    expect(result.code).toBe(0);
    // No flag for the secrets: they come from the environment only.
    const flag = await payouts(
      ['webhooks', 'show-url', '--base-url', sb.url, '--password', 'x'],
      CREDENTIALS_ENV,
    );
    expect(flag.code).toBe(2);
  });
});

describe('payouts webhooks secret / rotate-secret / fetch-secret', () => {
  it('shows the secret masked with a fingerprint, and itself only with --reveal', async () => {
    const sb = await sandbox({ webhookSecret: SECRET });
    const run = against(sb);
    const masked = await run('secret');
    expect(masked.code).toBe(0);
    expect(masked.stdout).toMatch(/^\*{8}ghij sha256:[0-9a-f]{4}(-[0-9a-f]{4}){3}\n$/);
    expect(masked.stdout + masked.stderr).not.toContain(SECRET);
    expect(masked.stderr).toMatch(/--reveal/);

    const json = JSON.parse((await run('secret', '--json')).stdout);
    expect(json).toEqual({
      masked: '********ghij',
      fingerprint: expect.stringMatching(/^sha256:/),
      secretFile: null,
    });

    const revealed = await run('secret', '--reveal');
    expect(revealed).toEqual({ code: 0, stdout: `${SECRET}\n`, stderr: '' });
    expect((await run('secret', '--reveal', '--json')).stdout).toBe(
      `${JSON.stringify({ secret: SECRET, fingerprint: json.fingerprint, secretFile: null })}\n`,
    );
  });

  it('rotate-secret writes the new secret to --secret-file (0600); fetch-secret then gives the same one', async () => {
    const sb = await sandbox({ webhookSecret: SECRET });
    const dir = await tempDir();
    const run = against(sb, dir);
    await writeFile(path.join(dir, 'new.secret'), 'an older file, readable by all\n', { mode: 0o644 });

    const rotated = await run('rotate-secret', '--secret-file', 'new.secret');
    expect(rotated.code).toBe(0);
    const newSecret = (await readFile(path.join(dir, 'new.secret'), 'utf8')).trim();
    expect(newSecret).not.toBe(SECRET);
    expect(newSecret.length).toBeGreaterThanOrEqual(32);
    if (process.platform !== 'win32')
      expect((await stat(path.join(dir, 'new.secret'))).mode & 0o777).toBe(0o600);
    expect(rotated.stdout + rotated.stderr).not.toContain(newSecret);
    expect(rotated.stderr).toContain(`written to ${path.join(dir, 'new.secret')} (mode 0600)`);

    const fetched = await run('fetch-secret', '--reveal');
    expect(fetched).toMatchObject({ code: 0, stdout: `${newSecret}\n` });
    expect((await run('fetch-secret', '--secret-file', 'fetched.secret')).code).toBe(0);
    expect(await readFile(path.join(dir, 'fetched.secret'), 'utf8')).toBe(`${newSecret}\n`);
    // `secret` saves it the way its own hint says.
    const saved = await run('secret', '--secret-file', 'current.secret');
    expect(saved.code, saved.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'current.secret'), 'utf8')).toBe(`${newSecret}\n`);
    expect(saved.stdout + saved.stderr).not.toContain(newSecret);
    // The same fingerprint for the same secret, whichever command shows it.
    expect((await run('secret')).stdout.split(' ')[1]).toBe(rotated.stdout.split(' ')[1]);
  });

  it('rotate-secret --reveal prints the new secret, and the sandbox signs with it from then on', async () => {
    const sb = await sandbox({ webhookSecret: SECRET });
    const run = against(sb);
    const rotated = await run('rotate-secret', '--reveal');
    const newSecret = rotated.stdout.trim();
    expect(newSecret).not.toBe(SECRET);
    expect((await run('fetch-secret', '--reveal')).stdout.trim()).toBe(newSecret);
  });

  it('exits 3 when the client secret is refused, without printing it', async () => {
    const sb = await sandbox();
    const result = await payouts(['webhooks', 'fetch-secret', '--base-url', sb.url], {
      ...CREDENTIALS_ENV,
      PAYOUTS_CLIENT_SECRET: 'not-the-client-secret',
    });
    expect(result.code).toBe(3);
    expect(result.stderr).not.toContain('not-the-client-secret');
  });
});

describe('payouts webhooks verify', () => {
  it('exits 0 for a valid signature, 1 for an invalid one, 2 without a secret', async () => {
    const dir = await tempDir();
    const body = JSON.stringify(payload());
    await writeFile(path.join(dir, 'body.json'), body);
    const env = { PAYOUTS_WEBHOOK_SECRET: SECRET };
    const ok = await payouts(['webhooks', 'verify', 'body.json', '--signature', sign(body)], env, dir);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/^signature valid/);
    const bad = await payouts(['webhooks', 'verify', 'body.json', '--signature', sign(`${body} `)], env, dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/does not match/);
    // A secret on the command line shows in ps; it is refused, never echoed.
    const flag = await payouts(
      [
        'webhooks',
        'verify',
        'body.json',
        '--signature',
        sign(body, 'other'),
        '--secret',
        'other-secret-value',
      ],
      env,
      dir,
    );
    expect(flag.code).toBe(2);
    expect(flag.stderr.split('\n')[0]).toBe(
      'payouts: --secret is refused because a secret on the command line is visible to every user in ps and stays in shell history: put it in a file readable only by you and pass --secret-file PATH (payouts webhooks fetch-secret --secret-file PATH writes one), or set PAYOUTS_WEBHOOK_SECRET (and PAYOUTS_WEBHOOK_PREVIOUS_SECRET during a rotation)',
    );
    expect(flag.stdout + flag.stderr).not.toContain('other-secret-value');
    const none = await payouts(['webhooks', 'verify', 'body.json', '--signature', sign(body)], {}, dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('PAYOUTS_WEBHOOK_SECRET');
    const missing = await payouts(['webhooks', 'verify', 'nope.json', '--signature', 'x'], env, dir);
    expect(missing.code).toBe(2);
    for (const run of [ok, bad, flag, none, missing]) expect(run.stdout + run.stderr).not.toContain(SECRET);
  });

  it('reads secrets from --secret-file, current and previous', async () => {
    const dir = await tempDir();
    const body = JSON.stringify(payload());
    await writeFile(path.join(dir, 'body.json'), body);
    await writeFile(path.join(dir, 'current.secret'), 'current-secret\n');
    await writeFile(path.join(dir, 'previous.secret'), `${SECRET}\n`);
    const args = ['--secret-file', 'current.secret', '--secret-file', 'previous.secret'];
    const result = await payouts(
      ['webhooks', 'verify', 'body.json', '--signature', sign(body), ...args],
      {},
      dir,
    );
    expect(result.code).toBe(0);
  });
});

describe('payouts webhooks listen', () => {
  async function listen(options: {
    secrets: string[];
    eventsFile?: string;
    tty?: boolean;
    /** A --log-file: the logs go there, as JSON. */
    logFile?: string;
  }): Promise<{ receiver: WebhookReceiver; stop: () => Promise<Run>; out: { stderr: string } }> {
    const { io, out } = capture({}, process.cwd(), options.tty);
    let stop!: () => void;
    const stopSignal = new Promise<void>((resolve) => {
      stop = resolve;
    });
    let started!: (r: WebhookReceiver) => void;
    const listening = new Promise<WebhookReceiver>((resolve) => {
      started = resolve;
    });
    const done = webhooksListenCommand(
      {
        host: '127.0.0.1',
        port: 0,
        path: '/webhooks',
        eventsFile: options.eventsFile,
        register: testRegisterPath(),
        secrets: options.secrets,
        stopSignal,
        onListening: started,
      },
      io,
      ...(options.logFile === undefined
        ? []
        : [openCommandLog({ format: 'json', file: options.logFile }, io)]),
    );
    const receiver = await Promise.race([
      listening,
      done.then(() => Promise.reject(new Error('stopped early'))),
    ]);
    return {
      receiver,
      out,
      stop: async () => {
        stop();
        const code = await done;
        return { code, ...out };
      },
    };
  }

  it('logs one JSON line per event on stderr (no TTY), records duplicates once, and stops cleanly', async () => {
    const dir = await tempDir();
    const eventsFile = path.join(dir, 'events.jsonl');
    const { receiver, stop } = await listen({ secrets: [SECRET], eventsFile });
    const sb = await sandbox({ webhookSecret: SECRET, webhookUrl: receiver.url, duplicateRate: 1 });
    const accessToken = await token(sb);
    const ids = await quoteFor(sb, accessToken, { name: 'FAIL 12345678901234' });
    await call(sb, 'POST', PATHS.transactions, {
      token: accessToken,
      body: { simulationId: ids.simulationId, reference: 'INV-7' },
    });
    await sb.whenIdle();
    await receiver.idle();
    const result = await stop();

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'webhook receiver listening',
      url: receiver.url,
      events: eventsFile,
      secretFingerprints: [secretFingerprint(SECRET)],
    });
    const events = lines.filter((l) => l['msg'] === 'webhook event');
    expect(events.map((l) => l['operation']).sort()).toEqual([
      'BENEFICIARY_CREATED',
      'TRANSACTION_CREATED',
      'TRANSACTION_FAILED',
    ]);
    expect(events.find((l) => l['operation'] === 'TRANSACTION_FAILED')).toMatchObject({
      success: false,
      status: 'FAILED',
      reference: 'INV-7',
      message: expect.stringContaining('****1234'),
    });
    expect(lines.filter((l) => l['msg'] === 'duplicate delivery ignored')).toHaveLength(3);
    expect(lines.at(-1)).toMatchObject({ msg: 'webhook receiver stopped', accepted: 3, duplicates: 3 });
    // The secret never, and the long digit run of the recipient name never in full.
    expect(result.stderr).not.toContain(SECRET);
    expect(result.stderr).not.toContain('12345678901234');
    expect(await jsonLines(eventsFile)).toHaveLength(3);
  });

  it('logs readable lines on a terminal and records the event in the register without --events', async () => {
    const { receiver, stop } = await listen({ secrets: [SECRET], tty: true });
    const body = JSON.stringify(payload());
    const answer = await fetch(receiver.url, {
      method: 'POST',
      headers: { 'x-service-webhook-signature': sign(body) },
      body,
    });
    expect(answer.status).toBe(200);
    await receiver.idle();
    const result = await stop();
    const register = new Database(testRegisterPath(), { readonly: true });
    const events = register.prepare('SELECT resource_id, operation FROM events').all() as Record<
      string,
      unknown
    >[];
    register.close();
    expect(events.map((e) => [e['resource_id'], e['operation']])).toEqual([
      ['tx-1', 'TRANSACTION_COMPLETED'],
    ]);
    expect(result.stderr).toMatch(
      /^\d\d:\d\d:\d\d info +webhook event operation=TRANSACTION_COMPLETED resourceId=tx-1 success=true/m,
    );
    expect(result.stderr).not.toContain(SECRET);
  });

  it.skipIf(!existsSync('/dev/full'))(
    'goes on recording events when its log file fails, says so at once, and ends with exit 2 naming the file',
    async () => {
      const { receiver, stop, out } = await listen({ secrets: [SECRET], logFile: '/dev/full' });
      const send = async (id: string) => {
        const body = JSON.stringify(
          payload({ resourceId: id, data: { transactionId: id, status: 'COMPLETED' } }),
        );
        return (
          await fetch(receiver.url, {
            method: 'POST',
            headers: { 'x-service-webhook-signature': sign(body) },
            body,
          })
        ).status;
      };
      expect(await send('tx-1')).toBe(200);
      await receiver.idle();
      // The "listening" line and the first event's already failed to be written.
      await vi.waitFor(() => expect(out.stderr).toContain('cannot write the log file /dev/full'), {
        timeout: 5000,
      });
      expect(await send('tx-2')).toBe(200);
      await receiver.idle();
      const result = await stop();

      expect(result.code).toBe(2);
      const message =
        'payouts: cannot write the log file /dev/full (free some space or fix the folder, or choose another --log-file PATH): no space left on the device (the disk is full) (ENOSPC)';
      expect(result.stderr.split('\n').filter((line) => line !== '')).toEqual([
        `${message}. Events are still verified and recorded in the register, without log lines`,
        message,
      ]);
      const register = new Database(testRegisterPath(), { readonly: true });
      const events = register.prepare('SELECT resource_id FROM events ORDER BY resource_id').all() as {
        resource_id: string;
      }[];
      register.close();
      expect(events.map((e) => e.resource_id)).toEqual(['tx-1', 'tx-2']);
    },
  );

  it('refuses to start without a secret (exit 2) through the command line', async () => {
    const result = await payouts(['webhooks', 'listen', '--port', '0'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYOUTS_WEBHOOK_SECRET');
    expect(
      (await payouts(['webhooks', 'listen', '--port', '70000'], { PAYOUTS_WEBHOOK_SECRET: SECRET })).code,
    ).toBe(2);
  });
});

describe('payouts webhooks: no secret in any output', () => {
  it('prints no webhook secret, client secret or password in any command without --reveal', async () => {
    const sb = await sandbox({ webhookSecret: SECRET });
    const dir = await tempDir();
    const run = against(sb, dir);
    const runs: Run[] = [];
    runs.push(await run('secret'));
    runs.push(await run('secret', '--json'));
    runs.push(await run('fetch-secret'));
    runs.push(await run('fetch-secret', '--secret-file', 'a.secret', '--json'));
    runs.push(await run('rotate-secret'));
    const reveal = async () => (await run('fetch-secret', '--reveal')).stdout.trim();
    const firstRotated = await reveal();
    runs.push(await run('rotate-secret', '--secret-file', 'b.secret'));
    runs.push(await run('set-url', 'https://hooks.example.com/x'));
    runs.push(await run('show-url', '--json'));
    runs.push(
      await payouts(['webhooks', 'show-url', '--base-url', sb.url], {
        ...CREDENTIALS_ENV,
        PAYOUTS_PASSWORD: 'bad-pass-123',
      }),
    );
    runs.push(
      await payouts(
        ['webhooks', 'verify', 'a.secret', '--signature', 'x'],
        { PAYOUTS_WEBHOOK_SECRET: SECRET },
        dir,
      ),
    );

    // Every secret this test has seen: the first webhook secret, both rotated ones, the credentials.
    const secondRotated = await reveal();
    expect((await readFile(path.join(dir, 'b.secret'), 'utf8')).trim()).toBe(secondRotated);
    expect((await readFile(path.join(dir, 'a.secret'), 'utf8')).trim()).toBe(SECRET);
    const secrets = [
      SECRET,
      firstRotated,
      secondRotated,
      SANDBOX_CREDENTIALS.clientSecret,
      SANDBOX_CREDENTIALS.password,
      'bad-pass-123',
    ];
    expect(new Set(secrets).size).toBe(secrets.length);
    const everything = runs.map((r) => r.stdout + r.stderr).join('\n');
    expect(runs.every((r) => r.code === 0 || r.code === 1 || r.code === 3)).toBe(true);
    for (const secret of secrets)
      expect(everything, `a secret leaked: ${secret.slice(0, 3)}...`).not.toContain(secret);
  });
  it('stops at once when stopped while another process holds the register locked', async () => {
    const dir = await tempDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    // The register exists and another process holds its write lock.
    const made = await listenOn(register);
    await made.stop();
    const holder = new Database(register);
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const started = Date.now();
      const { done, stop, out } = listenCommand(register);
      setTimeout(stop, 300);
      expect(await done).toBe(0);
      // Opening waits up to 15 s for a lock; the stop ends that wait.
      expect(Date.now() - started).toBeLessThan(5_000);
      const last = JSON.parse(out.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(last['msg']).toMatch(/^webhook receiver stopped: /);
      expect(out.stderr).not.toContain('webhook receiver listening');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  /** `payouts webhooks listen` on `register`, in-process, until `stop`. */
  function listenCommand(register: string, onListening?: () => void) {
    const { io, out } = capture({}, process.cwd());
    let stop!: () => void;
    const stopSignal = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const done = webhooksListenCommand(
      {
        host: '127.0.0.1',
        port: 0,
        path: '/webhooks',
        eventsFile: undefined,
        register,
        secrets: [SECRET],
        stopSignal,
        ...(onListening ? { onListening } : {}),
      },
      io,
    );
    return { done, stop, out };
  }

  /** A receiver on `register`, started and listening. */
  async function listenOn(register: string): Promise<{ stop: () => Promise<number> }> {
    let started!: () => void;
    const listening = new Promise<void>((resolve) => {
      started = resolve;
    });
    const command = listenCommand(register, () => started());
    await listening;
    return {
      stop: () => {
        command.stop();
        return command.done;
      },
    };
  }
});
