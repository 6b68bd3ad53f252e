/**
 * `payouts approve` in-process, offline (docs/approval.md "Signing an approval"): the service URL
 * it is checked against as run checks it, an `--out` that cannot be written said in words
 * before anything is recorded, and "Already recorded" reporting what the register holds.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { writeSignatureOut } from '../../src/approvals/record.js';
import { ConfigError } from '../../src/errors.js';
import { openRegister } from '../../src/register/open.js';
import { runCli } from '../helpers/cli.js';
import { initTestRegister } from '../helpers/register.js';
import { CLEAN_SAMPLE } from '../helpers/sheets.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE } from './ssh-keygen.js';

const keys = new KeyFolder();
afterAll(() => keys.cleanup());

const SERVICE = 'https://pay.example';

/** A folder with the clean sample as payouts.csv, removed after the test. */
async function folder(): Promise<{ dir: string; sheet: string; register: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-approve-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const sheet = path.join(dir, 'payouts.csv');
  await copyFile(CLEAN_SAMPLE, sheet);
  return { dir, sheet, register: initTestRegister(path.join(dir, 'register.db')) };
}

/** The approvals the register holds of any digest (none when it was never created). */
async function approvalsIn(register: string, digest: string) {
  const opened = await openRegister(register);
  try {
    return await opened.approvals({ digest });
  } finally {
    await opened.close();
  }
}

describe('payouts approve --base-url', () => {
  it('refuses plain http:// to a host that is not loopback, as run does (exit 2)', async () => {
    const { sheet, register } = await folder();
    const remote = await runCli(
      ['approve', sheet, '--statement', '--base-url', 'http://example.com', '--register', register],
      { env: {} },
    );
    expect(remote.code).toBe(2);
    expect(remote.stdout).toBe('');
    expect(remote.stderr).toContain(
      '--base-url http://example.com uses plain http://, which is refused except to loopback addresses (127.0.0.1, ::1, localhost) - use https://',
    );
    const fromEnv = await runCli(['approve', sheet, '--statement', '--register', register], {
      env: { PAYOUTS_BASE_URL: 'http://pay.example:8080' },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('--base-url http://pay.example:8080 uses plain http://');
    const loopback = await runCli(
      ['approve', sheet, '--statement', '--base-url', 'http://127.0.0.1:8787', '--register', register],
      { env: {} },
    );
    expect(loopback.code, loopback.stderr).toBe(0);
    expect(loopback.stdout).toContain('\norigin: http://127.0.0.1:8787\n');
  });
});

describe.skipIf(!HAS_SSH_KEYGEN)(`payouts approve --key --out${SSH_KEYGEN_NOTE}`, () => {
  const alice = HAS_SSH_KEYGEN ? keys.key('out-alice', { type: 'ed25519' }) : undefined;
  /** Alice signs the sheet's statement, the signature written to `out`. */
  const signInto = (sheet: string, register: string, out: string) =>
    runCli(
      [
        'approve',
        sheet,
        '--key',
        alice!.path,
        '--out',
        out,
        '--base-url',
        SERVICE,
        '--register',
        register,
        '--log-format',
        'text',
      ],
      { env: {} },
    );

  it('says in words that an --out in a missing folder cannot be written, signs nothing and records nothing (exit 2)', async () => {
    const { dir, sheet, register } = await folder();
    const out = path.join(dir, 'no-such-folder', 'alice.sig');
    const result = await signInto(sheet, register, out);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('internal error');
    expect(result.stderr).toContain(
      `payouts: cannot write the signature to ${out}: no such file or directory (ENOENT) - its folder does not exist: create it, or give --out a file in a folder that exists. Nothing was signed, and nothing was recorded in the register`,
    );
    const statement = await runCli(
      ['approve', sheet, '--statement', '--base-url', SERVICE, '--register', register],
      { env: {} },
    );
    const digest = /^digest: (\S+)$/m.exec(statement.stdout)![1]!;
    expect(await approvalsIn(register, digest)).toEqual([]);
  });

  it('says that an --out naming a folder is a folder (EISDIR, exit 2), and leaves the folder as it was', async () => {
    const { dir, sheet, register } = await folder();
    const out = path.join(dir, 'signatures');
    await mkdir(out);
    const result = await signInto(sheet, register, out);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `payouts: cannot write the signature to ${out}: it is a directory (EISDIR) - give --out a file name, not a folder. Nothing was signed, and nothing was recorded in the register`,
    );
    expect(await readdir(out)).toEqual([]);
  });

  it('writes the signature to a writable --out, and leaves no temporary file beside it', async () => {
    const { dir, sheet, register } = await folder();
    const out = path.join(dir, 'alice.sig');
    const result = await signInto(sheet, register, out);
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toMatch(
      /^-----BEGIN SSH SIGNATURE-----\n[\s\S]+-----END SSH SIGNATURE-----\n$/,
    );
    expect((await readdir(dir)).filter((name) => name.includes('alice'))).toEqual(['alice.sig']);
  });
});

describe('the signature written to --out', () => {
  it('says, when it cannot be written after signing, that the signature was not recorded either', async () => {
    const { dir } = await folder();
    const out = path.join(dir, 'gone', 'alice.sig');
    const written = writeSignatureOut(out, '-----BEGIN SSH SIGNATURE-----\n');
    await expect(written).rejects.toThrow(ConfigError);
    await expect(written).rejects.toThrow(
      `cannot write the signature to ${out}: no such file or directory (ENOENT) - its folder does not exist: create it, or give --out a file in a folder that exists. The signature was made but not recorded in the register: sign again with an --out that can be written, or without --out`,
    );
    expect((await readdir(dir)).filter((name) => !name.startsWith('register.db'))).toEqual(['payouts.csv']);
  });
});

describe.skipIf(!HAS_SSH_KEYGEN)(`payouts approve, already recorded${SSH_KEYGEN_NOTE}`, () => {
  it("reports the stored record's time and principals, not this call's", async () => {
    const { dir, sheet, register } = await folder();
    const bob = keys.key('again-bob', { type: 'ed25519' });
    const allowed = keys.file(`bob@example.com ${bob.publicKey}\n`);
    const printed = await runCli(
      ['approve', sheet, '--statement', '--base-url', SERVICE, '--register', register],
      { env: {} },
    );
    expect(printed.code, printed.stderr).toBe(0);
    const signature = path.join(dir, 'statement.txt.sig');
    await writeFile(path.join(dir, 'statement.txt'), printed.stdout);
    await writeFile(signature, keys.sign(bob, printed.stdout));
    const record = (extra: string[]) =>
      runCli(
        [
          'approve',
          sheet,
          '--signature',
          signature,
          '--base-url',
          SERVICE,
          '--register',
          register,
          '--json',
          '--log-format',
          'text',
          ...extra,
        ],
        { env: {} },
      );
    // First without the allowed-signers file: no principal recorded.
    const first = await record([]);
    expect(first.code, first.stderr).toBe(0);
    const stored = JSON.parse(first.stdout) as {
      recordedAt: string;
      principals: string[];
      recorded: boolean;
    };
    expect(stored).toMatchObject({ recorded: true, principals: [] });
    const again = await record(['--allowed-signers', allowed]);
    expect(again.code, again.stderr).toBe(0);
    const said = JSON.parse(again.stdout) as Record<string, unknown>;
    const digest = /^digest: (\S+)$/m.exec(printed.stdout)![1]!;
    const held = await approvalsIn(register, digest);
    expect(held).toHaveLength(1);
    expect(said).toMatchObject({
      command: 'approve',
      exitCode: 0,
      recorded: false,
      fingerprint: bob.fingerprint,
      principals: held[0]!.principals,
      recordedAt: held[0]!.recordedAt,
    });
    expect(held[0]!.principals).toEqual([]);
    expect(said['recordedAt']).toBe(stored.recordedAt);
    expect(again.stderr).toContain(
      `Already recorded on ${stored.recordedAt}: the approval by the key ${bob.fingerprint}`,
    );
  });
});
