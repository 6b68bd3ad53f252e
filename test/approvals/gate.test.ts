/**
 * The gate of `run --require-approvals` (approvals/gate.ts) over records as the register keeps
 * them, with real ssh-keygen signatures: what it relies on when enough approvers signed, and
 * what its refusal says when not.
 */
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../src/approvals/allowed-signers.js';
import { judgeApprovals } from '../../src/approvals/gate.js';
import { approvalStatement } from '../../src/approvals/statement.js';
import { GuardError } from '../../src/errors.js';
import type { ApprovalRecord } from '../../src/register/types.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from './ssh-keygen.js';

const keys = new KeyFolder();
afterAll(() => keys.cleanup());

const NOW = Date.parse('2026-11-26T12:00:00Z');
const ORIGIN = 'https://payments.example.com';

function record(key: TestKey, digest: string, day: string, recordedAt: string): ApprovalRecord {
  const statement = approvalStatement({
    digest,
    origin: ORIGIN,
    sheet: 'payouts.csv',
    validRows: 2,
    validTotals: new Map([['USD', 150_000n]]),
    day,
  });
  return {
    statementDigest: createHash('sha256').update(statement).digest('hex'),
    fingerprint: key.fingerprint,
    origin: ORIGIN,
    digest,
    sheet: 'payouts.csv',
    statement,
    signature: keys.sign(key, statement),
    principals: [],
    recordedAt,
  };
}

describe.skipIf(!HAS_SSH_KEYGEN)(`the approval gate${SSH_KEYGEN_NOTE}`, () => {
  const digest = 'c'.repeat(64);
  const batch = { digest, origin: ORIGIN, sheet: 'payouts.csv', now: NOW };

  it('relies on one approval per principal, naming the statement it signed', () => {
    const alice = keys.key('gate-alice', { type: 'ed25519' });
    const bob = keys.key('gate-bob', { type: 'ecdsa', bits: 256 });
    const allowedSigners = parseAllowedSigners(
      `alice@example.com ${alice.publicKey}\nbob@example.com ${bob.publicKey}\n`,
      'approvers',
    );
    const records = [
      record(alice, digest, '2026-11-25', '2026-11-25T09:00:00.000Z'),
      record(bob, digest, '2026-11-26', '2026-11-26T08:00:00.000Z'),
    ];
    const gate = { required: 2, allowedSigners, maxAgeDays: 31 };
    expect(judgeApprovals(records, gate, batch)).toEqual([
      {
        principal: 'alice@example.com',
        fingerprint: alice.fingerprint,
        statementDigest: records[0]!.statementDigest,
        recordedAt: '2026-11-25T09:00:00.000Z',
      },
      {
        principal: 'bob@example.com',
        fingerprint: bob.fingerprint,
        statementDigest: records[1]!.statementDigest,
        recordedAt: '2026-11-26T08:00:00.000Z',
      },
    ]);
    const refused = (() => {
      try {
        judgeApprovals(records.slice(0, 1), gate, batch);
      } catch (error) {
        return error as GuardError;
      }
      throw new Error('the gate let one approval of two through');
    })();
    expect(refused).toBeInstanceOf(GuardError);
    expect(refused.exitCode).toBe(4);
    expect(refused.message).toContain(`signed by alice@example.com (${alice.fingerprint}, 2026-11-25)`);
    expect(refused.message).toContain('missing: bob@example.com');
    expect(refused.message).not.toContain('; ');
  });

  it('names the statement that counted when the same key also signed one too old to count', () => {
    const alice = keys.key('gate-twice', { type: 'ed25519' });
    const allowedSigners = parseAllowedSigners(`alice@example.com ${alice.publicKey}\n`, 'approvers');
    const gate = { required: 1, allowedSigners, maxAgeDays: 31 };
    // 42 days ago (refused as too old), recorded first; then the same digest signed today.
    const old = record(alice, digest, '2026-10-15', '2026-11-26T08:00:00.000Z');
    const today = record(alice, digest, '2026-11-26', '2026-11-26T09:30:00.000Z');
    expect(old.statementDigest).not.toBe(today.statementDigest);
    const relied = [
      {
        principal: 'alice@example.com',
        fingerprint: alice.fingerprint,
        statementDigest: today.statementDigest,
        recordedAt: '2026-11-26T09:30:00.000Z',
      },
    ];
    expect(judgeApprovals([old, today], gate, batch)).toEqual(relied);
    expect(judgeApprovals([today, old], gate, batch)).toEqual(relied);
  });

  it("says the sheet changed since a recent signature, not since last month's under the same name", () => {
    const alice = keys.key('gate-monthly', { type: 'ed25519' });
    const allowedSigners = parseAllowedSigners(`alice@example.com ${alice.publicKey}\n`, 'approvers');
    const gate = { required: 1, allowedSigners, maxAgeDays: 31 };
    const lastMonth = record(alice, 'a'.repeat(64), '2026-10-01', '2026-10-01T09:00:00.000Z');
    const yesterday = record(alice, 'b'.repeat(64), '2026-11-25', '2026-11-25T09:00:00.000Z');
    expect(() => judgeApprovals([lastMonth], gate, batch)).toThrow(
      /^(?!.*changed since).*Nothing was sent\.$/,
    );
    expect(() => judgeApprovals([lastMonth, yesterday], gate, batch)).toThrow(
      'the sheet changed since it was signed by alice@example.com',
    );
  });
});
