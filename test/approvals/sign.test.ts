import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../src/approvals/allowed-signers.js';
import { SigningError } from '../../src/approvals/errors.js';
import { signStatement } from '../../src/approvals/sign.js';
import { approvalStatement } from '../../src/approvals/statement.js';
import { verifyApproval } from '../../src/approvals/verify.js';
import { HAS_SSH_KEYGEN, KeyFolder, type KeySpec, SSH_KEYGEN_NOTE } from './ssh-keygen.js';

const STATEMENT = approvalStatement({
  digest: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  origin: 'https://payments.example.com',
  sheet: 'payouts-2026-11.csv',
  validRows: 2,
  validTotals: new Map([
    ['EUR', 10_000n],
    ['MXN', 2_500_050n],
  ]),
  day: '2026-11-26',
});

/** Collects what signStatement passes on from ssh-keygen. */
function collector(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** An SSH_ASKPASS program that answers `answer`, forced so no terminal is ever asked. */
function askpass(folder: KeyFolder, answer: string): NodeJS.ProcessEnv {
  const script = folder.file(`#!/bin/sh\necho '${answer}'\n`, `askpass-${answer}`);
  chmodSync(script, 0o700);
  return { ...process.env, SSH_ASKPASS: script, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: '' };
}

const SPECS: [string, KeySpec][] = [
  ['Ed25519', { type: 'ed25519' }],
  ['ECDSA P-256', { type: 'ecdsa', bits: 256 }],
  ['ECDSA P-384', { type: 'ecdsa', bits: 384 }],
  ['ECDSA P-521', { type: 'ecdsa', bits: 521 }],
  ['RSA 2048', { type: 'rsa', bits: 2048 }],
];

describe.skipIf(!HAS_SSH_KEYGEN)(`signStatement through ssh-keygen${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;

  beforeAll(() => {
    folder = new KeyFolder();
  });
  afterAll(() => folder?.cleanup());

  for (const [label, spec] of SPECS) {
    it(`signs with a ${label} key: ssh-keygen -Y verify and verifyApproval both accept it`, async () => {
      const key = folder.key(label.replace(/\W/g, ''), spec);
      const messages = collector();
      const armored = await signStatement({
        statement: STATEMENT,
        keyPath: key.path,
        interactive: false,
        messages: messages.stream,
      });
      expect(armored.startsWith('-----BEGIN SSH SIGNATURE-----\n')).toBe(true);
      const signers = `approver@example.com ${key.publicKey}\n`;
      const byOpenSsh = folder.verify(signers, 'approver@example.com', armored, STATEMENT);
      expect(byOpenSsh.output).toContain('Good "payouts-approval" signature for approver@example.com');
      expect(byOpenSsh.status).toBe(0);
      const verdict = verifyApproval({
        statementText: STATEMENT,
        armoredSignature: armored,
        allowedSigners: parseAllowedSigners(signers, 'allowed_signers'),
        now: Date.parse('2026-11-26T12:00:00Z'),
      });
      expect(verdict).toMatchObject({
        ok: true,
        principals: ['approver@example.com'],
        fingerprint: key.fingerprint,
      });
      // ssh-keygen's "Signing file /tmp/..." and "Write signature to ..." are not passed on.
      expect(messages.text()).toBe('');
    });
  }

  it('signs with a key that has a passphrase, asked through SSH_ASKPASS', async () => {
    const key = folder.key('locked', { type: 'ed25519' }, 'correct horse');
    const armored = await signStatement({
      statement: STATEMENT,
      keyPath: key.path,
      interactive: false,
      messages: collector().stream,
      env: askpass(folder, 'correct horse'),
    });
    const signers = `approver@example.com ${key.publicKey}\n`;
    expect(folder.verify(signers, 'approver@example.com', armored, STATEMENT).status).toBe(0);
  });

  it('says ssh-keygen refused a wrong passphrase, in its words, and passes them on', async () => {
    const key = folder.key('locked2', { type: 'ed25519' }, 'correct horse');
    const messages = collector();
    const signing = signStatement({
      statement: STATEMENT,
      keyPath: key.path,
      interactive: false,
      messages: messages.stream,
      env: askpass(folder, 'battery staple'),
    });
    await expect(signing).rejects.toBeInstanceOf(SigningError);
    await expect(signing).rejects.toThrow(
      /^ssh-keygen could not sign with .*locked2 \(exit 255\): .*passphrase/s,
    );
    expect(messages.text()).toMatch(/passphrase/);
    expect(messages.text()).not.toMatch(/Signing file/);
  });

  it('signs through ssh-agent, given only the public key', async () => {
    const key = folder.key('agent', { type: 'ecdsa', bits: 256 });
    const agent = spawnSync('ssh-agent', ['-s', '-a', `${folder.dir}/agent.sock`], { encoding: 'utf8' });
    const pid = /SSH_AGENT_PID=(\d+)/.exec(agent.stdout)?.[1];
    expect(pid, agent.stderr).toBeDefined();
    const env = { ...process.env, SSH_AUTH_SOCK: `${folder.dir}/agent.sock` };
    try {
      expect(spawnSync('ssh-add', ['-q', key.path], { env, encoding: 'utf8' }).status).toBe(0);
      const armored = await signStatement({
        statement: STATEMENT,
        keyPath: `${key.path}.pub`,
        interactive: false,
        messages: collector().stream,
        env,
      });
      const signers = `approver@example.com ${key.publicKey}\n`;
      expect(folder.verify(signers, 'approver@example.com', armored, STATEMENT).status).toBe(0);
    } finally {
      if (pid !== undefined) process.kill(Number(pid), 'SIGTERM');
    }
  });

  it('says which key file is missing', async () => {
    const signing = signStatement({
      statement: STATEMENT,
      keyPath: `${folder.dir}/no-such-key`,
      interactive: false,
      messages: collector().stream,
    });
    await expect(signing).rejects.toThrow(/ssh-keygen could not sign with .*no-such-key \(exit 255\)/);
  });
});

describe('signStatement without ssh-keygen', () => {
  it('says ssh-keygen was not found and how to sign instead', async () => {
    const signing = signStatement({
      statement: STATEMENT,
      keyPath: '/nonexistent/key',
      sshKeygen: '/nonexistent/bin/ssh-keygen',
      interactive: false,
    });
    await expect(signing).rejects.toBeInstanceOf(SigningError);
    await expect(signing).rejects.toThrow(
      "/nonexistent/bin/ssh-keygen was not found: install OpenSSH's client (openssh-client), or sign the statement elsewhere with ssh-keygen -Y sign -n payouts-approval and record the .sig file",
    );
  });

  it('refuses what a program that is not ssh-keygen wrote', async () => {
    // `true` exits 0 and writes no signature.
    const signing = signStatement({
      statement: STATEMENT,
      keyPath: '/nonexistent/key',
      sshKeygen: 'true',
      interactive: false,
    });
    await expect(signing).rejects.toThrow(/reported success but wrote no signature/);
  });
});
