import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../src/approvals/allowed-signers.js';
import { fingerprintOf } from '../../src/approvals/keys.js';
import { type ApprovalStatement, approvalStatement } from '../../src/approvals/statement.js';
import { countApprovals, type SignedApproval, verifyApproval } from '../../src/approvals/verify.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from './ssh-keygen.js';
import { type HandKey, handKey, handSign, publicKeyLine } from './vectors.js';

const DIGEST = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';
const EARLIER = 'bead0000bead0000bead0000bead0000bead0000bead0000bead0000bead0000';
const ORIGIN = 'https://payments.example.com';
const NOW = Date.parse('2026-11-26T10:00:00Z');

function statement(overrides: Partial<ApprovalStatement> = {}): string {
  return approvalStatement({
    digest: DIGEST,
    origin: ORIGIN,
    sheet: 'payouts-2026-11.csv',
    validRows: 3,
    validTotals: new Map([['USD', 125_050n]]),
    day: '2026-11-26',
    ...overrides,
  });
}

describe.skipIf(!HAS_SSH_KEYGEN)(`verifyApproval with keys made by ssh-keygen${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;
  let alice: TestKey;
  let bob: TestKey;
  let stranger: TestKey;
  const text = statement();

  beforeAll(() => {
    folder = new KeyFolder();
    alice = folder.key('alice', { type: 'ed25519' });
    bob = folder.key('bob', { type: 'ecdsa', bits: 256 });
    stranger = folder.key('stranger', { type: 'ed25519' });
  });
  afterAll(() => folder?.cleanup());

  const signersText = () =>
    [
      `alice@example.com,treasury@example.com ${alice.publicKey}`,
      `bob@example.com namespaces="payouts-approval" ${bob.publicKey}`,
    ].join('\n');

  /** verifyApproval of a signature, by default over the statement with the two approvers' file. */
  const verdictOf = (armoredSignature: string, statementText = text, signers = signersText(), now = NOW) =>
    verifyApproval({
      statementText,
      armoredSignature,
      allowedSigners: parseAllowedSigners(signers, 'allowed_signers'),
      now,
    });

  it('says who signed: the principals of the key, its fingerprint, the statement (ssh-keygen agrees)', () => {
    const armored = folder.sign(alice, text);
    const verdict = verdictOf(armored);
    expect(verdict).toMatchObject({
      ok: true,
      principals: ['alice@example.com', 'treasury@example.com'],
      fingerprint: alice.fingerprint,
      keyType: 'ssh-ed25519',
      statement: {
        digest: DIGEST,
        origin: ORIGIN,
        sheet: 'payouts-2026-11.csv',
        validRows: 3,
        day: '2026-11-26',
      },
    });
    expect(folder.verify(signersText(), 'treasury@example.com', armored, text).status).toBe(0);
  });

  it('refuses a key that is not in the allowed-signers file (ssh-keygen refuses it too)', () => {
    const armored = folder.sign(stranger, text);
    const verdict = verdictOf(armored);
    expect(verdict).toEqual({
      ok: false,
      reason: 'unknown-key',
      message: `the key ${stranger.fingerprint} that signed is not in allowed_signers: add the approver's public key to it`,
      fingerprint: stranger.fingerprint,
    });
    expect(folder.verify(signersText(), 'alice@example.com', armored, text).status).not.toBe(0);
  });

  it('refuses a signature made for another namespace (ssh-keygen refuses it too)', () => {
    const armored = folder.sign(alice, text, 'git');
    const verdict = verdictOf(armored);
    expect(verdict).toMatchObject({ ok: false, reason: 'namespace', fingerprint: alice.fingerprint });
    expect(verdict.ok ? '' : verdict.message).toMatch(/made for "git", not "payouts-approval"/);
    expect(folder.verify(signersText(), 'alice@example.com', armored, text).status).not.toBe(0);
  });

  it('refuses a key past its valid-before, or before its valid-after (ssh-keygen refuses it too)', () => {
    const armored = folder.sign(alice, text);
    const expired = `alice@example.com valid-before="20200101Z" ${alice.publicKey}\n`;
    const verdict = verdictOf(armored, text, expired, Date.now());
    expect(verdict).toMatchObject({ ok: false, reason: 'expired', fingerprint: alice.fingerprint });
    expect(verdict.ok ? '' : verdict.message).toMatch(
      /allowed_signers:1: the key expired at 2020-01-01T00:00:00Z/,
    );
    expect(folder.verify(expired, 'alice@example.com', armored, text).status).not.toBe(0);

    const future = `alice@example.com valid-after="20990101Z" ${alice.publicKey}\n`;
    expect(verdictOf(armored, text, future, Date.now())).toMatchObject({
      ok: false,
      reason: 'not-yet-valid',
    });
    expect(folder.verify(future, 'alice@example.com', armored, text).status).not.toBe(0);
  });

  it('refuses a key the file allows only for other namespaces (ssh-keygen refuses it too)', () => {
    const armored = folder.sign(bob, text);
    const gitOnly = `bob@example.com namespaces="git" ${bob.publicKey}\n`;
    expect(verdictOf(armored, text, gitOnly)).toMatchObject({ ok: false, reason: 'namespace-not-allowed' });
    expect(folder.verify(gitOnly, 'bob@example.com', armored, text).status).not.toBe(0);
  });

  it('refuses a tampered statement (ssh-keygen refuses it too)', () => {
    const armored = folder.sign(bob, text);
    const tampered = text.replace('total USD: 1250.50', 'total USD: 9250.50');
    expect(tampered).not.toBe(text);
    const verdict = verdictOf(armored, tampered);
    expect(verdict).toMatchObject({ ok: false, reason: 'invalid', fingerprint: bob.fingerprint });
    expect(verdict.ok ? '' : verdict.message).toMatch(/does not match the text/);
    expect(folder.verify(signersText(), 'bob@example.com', armored, tampered).status).not.toBe(0);
  });

  it('refuses a valid signature over a text that is not an approval statement', () => {
    const other = 'I approve everything\n';
    const verdict = verdictOf(folder.sign(alice, other), other);
    expect(verdict).toMatchObject({ ok: false, reason: 'statement', fingerprint: alice.fingerprint });
  });

  it('refuses a damaged signature without a fingerprint, never throwing', () => {
    const verdict = verdictOf(folder.sign(alice, text).replace(/\n[A-Za-z0-9+/]{20}/, '\n'));
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.reason).toBe('malformed');
  });
});

describe('countApprovals', () => {
  const keys: Record<string, HandKey> = {
    alice: handKey('ssh-ed25519'),
    alice2: handKey('ssh-ed25519'),
    bob: handKey('ssh-ed25519'),
    shared: handKey('ssh-ed25519'),
    carol: handKey('sk-ssh-ed25519@openssh.com'),
  };
  const fp = (name: string) => fingerprintOf(keys[name]!.blob);
  const allowedSigners = parseAllowedSigners(
    [
      `alice@example.com ${publicKeyLine(keys.alice!)}`,
      `alice@example.com ${publicKeyLine(keys.alice2!)} alice's second key`,
      `bob@example.com ${publicKeyLine(keys.bob!)}`,
      `carol@example.com,dave@example.com ${publicKeyLine(keys.shared!)}`,
      `carol@example.com ${publicKeyLine(keys.carol!)}`,
    ].join('\n'),
    'allowed_signers',
  );
  const options = {
    digest: DIGEST,
    origin: ORIGIN,
    sheet: 'payouts-2026-11.csv',
    maxAgeDays: 31,
    now: NOW,
    allowedSigners,
  };
  const signed = (name: string, text = statement(), recordedAt?: number): SignedApproval => ({
    statementText: text,
    armoredSignature: handSign(keys[name]!, text),
    ...(recordedAt === undefined ? {} : { recordedAt }),
  });

  it('counts two distinct principals as two, in the file order, and names who is missing', () => {
    const result = countApprovals([signed('bob', statement(), 2), signed('alice', statement(), 1)], options);
    expect(result.count).toBe(2);
    expect(result.approvals).toEqual([
      { principal: 'alice@example.com', fingerprint: fp('alice'), day: '2026-11-26', recordedAt: 1 },
      { principal: 'bob@example.com', fingerprint: fp('bob'), day: '2026-11-26', recordedAt: 2 },
    ]);
    expect(result.missing).toEqual(['carol@example.com', 'dave@example.com']);
    expect(result.refused).toEqual([]);
    expect(result.stale).toEqual([]);
  });

  it('counts one principal signing twice once', () => {
    const result = countApprovals([signed('alice'), signed('alice')], options);
    expect(result.count).toBe(1);
    expect(result.approvals.map((a) => a.principal)).toEqual(['alice@example.com']);
  });

  it('counts one principal with two keys once', () => {
    const result = countApprovals([signed('alice'), signed('alice2')], options);
    expect(result.count).toBe(1);
    expect(result.approvals).toEqual([
      { principal: 'alice@example.com', fingerprint: fp('alice'), day: '2026-11-26' },
    ]);
  });

  it('counts a key that lists two principals once', () => {
    const result = countApprovals([signed('shared')], options);
    expect(result.count).toBe(1);
    expect(result.approvals.map((a) => a.principal)).toEqual(['carol@example.com']);
    expect(result.missing).toContain('dave@example.com');
  });

  it('spends a two-principal key on the principal no other key covers, whichever signed first', () => {
    // shared lists carol and dave; carol's own key covers carol: the most is 2 (shared for dave).
    for (const order of [
      ['shared', 'carol'],
      ['carol', 'shared'],
    ]) {
      const result = countApprovals(
        order.map((name) => signed(name)),
        options,
      );
      expect(result.count, order.join(' then ')).toBe(2);
      expect(Object.fromEntries(result.approvals.map((a) => [a.principal, a.fingerprint]))).toEqual({
        'carol@example.com': fp('carol'),
        'dave@example.com': fp('shared'),
      });
    }
  });

  it('reports a signature over an earlier statement of the same sheet: the sheet changed since', () => {
    const earlier = statement({ digest: EARLIER, day: '2026-11-20' });
    const result = countApprovals([signed('bob', earlier), signed('alice')], options);
    expect(result.count).toBe(1);
    expect(result.stale).toEqual([
      {
        principals: ['bob@example.com'],
        fingerprint: fp('bob'),
        digest: EARLIER,
        day: '2026-11-20',
        message: expect.stringMatching(
          /^the sheet changed since bob@example.com \(SHA256:.+\) signed it on 2026-11-20/,
        ),
      },
    ]);
    expect(result.missing).toContain('bob@example.com');
  });

  it('does not report the earlier signature of a key that signed the current statement too', () => {
    const earlier = statement({ digest: EARLIER });
    const result = countApprovals([signed('bob', earlier), signed('bob')], options);
    expect(result.count).toBe(1);
    expect(result.stale).toEqual([]);
  });

  it('does not count another sheet, another service, a statement too old or dated in the future', () => {
    const result = countApprovals(
      [
        signed('alice', statement({ digest: EARLIER, sheet: 'other.csv' })),
        signed('bob', statement({ origin: 'https://sandbox.example.com' })),
        signed('carol', statement({ day: '2026-10-25' })),
        signed('shared', statement({ day: '2026-11-27' })),
      ],
      options,
    );
    expect(result.count).toBe(0);
    expect(result.refused.map((r) => r.reason)).toEqual([
      'other-sheet',
      'other-service',
      'too-old',
      'future',
    ]);
    expect(result.refused[2]!.message).toMatch(/signed on 2026-10-25, 32 days ago, more than the 31 allowed/);
    expect(result.stale).toEqual([]);
  });

  it('counts a statement exactly maxAgeDays old', () => {
    expect(countApprovals([signed('alice', statement({ day: '2026-10-26' }))], options).count).toBe(1);
  });

  it('lists bad signatures as refused with their reason, and counts only the good ones', () => {
    const stranger = handKey('ssh-ed25519');
    const tampered = signed('alice');
    const result = countApprovals(
      [
        { ...tampered, statementText: tampered.statementText.replace('valid rows: 3', 'valid rows: 4') },
        { statementText: statement(), armoredSignature: handSign(stranger, statement()) },
        { statementText: statement(), armoredSignature: 'not a signature' },
        signed('bob'),
      ],
      options,
    );
    expect(result.count).toBe(1);
    expect(result.refused.map((r) => [r.reason, r.fingerprint])).toEqual([
      ['invalid', fp('alice')],
      ['unknown-key', fingerprintOf(stranger.blob)],
      ['malformed', undefined],
    ]);
  });
});
