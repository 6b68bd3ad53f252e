/**
 * The team the approval policy's tests share: four approvers' keys (carol's an ECDSA one, for
 * treasury) and the policy they keep, as a fresh object each time so that a case can change it.
 */
import type { KeyFolder, TestKey } from './ssh-keygen.js';

export type Team = Record<'alice' | 'bob' | 'carol' | 'dave', TestKey>;

/** The team's keys, made in `folder`. */
export function teamKeys(folder: KeyFolder): Team {
  return {
    alice: folder.key('alice', { type: 'ed25519' }),
    bob: folder.key('bob', { type: 'ed25519' }),
    carol: folder.key('carol', { type: 'ecdsa', bits: 256 }),
    dave: folder.key('dave', { type: 'ed25519' }),
  };
}

/** One approver for every batch, two above USD 1,000 to send, treasury for changed bank details. */
export const TEAM_RULES = [
  { name: 'every batch', require: 1, from: 'approvers' },
  { name: 'large batches', when: { sendTotalOver: { USD: '1000.00' } }, require: 2, from: 'approvers' },
  { name: 'new bank details', when: { warnings: ['changedBankDetails'] }, require: 1, from: 'treasury' },
];

/** A policy file's JSON, as these tests write it. */
export interface PolicyJson {
  signers: string[];
  [key: string]: unknown;
}

/** The team's policy: its four signers, approvers, treasury and two admins of whom both must sign. */
export function teamPolicy(team: Team, change: Record<string, unknown> = {}): PolicyJson {
  return {
    signers: (['alice', 'bob', 'carol', 'dave'] as const).map(
      (name) => `${name}@corp ${team[name].publicKey}`,
    ),
    groups: {
      approvers: ['alice@corp', 'bob@corp'],
      treasury: ['carol@corp'],
      admins: ['alice@corp', 'dave@corp'],
    },
    rules: structuredClone(TEAM_RULES),
    admins: { require: 2, from: 'admins' },
    ...change,
  };
}
