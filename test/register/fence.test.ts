/**
 * Which fenced writes of a payout may land (rules.ts fenceOf, fenceAdmits): decided once for
 * both stores; the file judges it on what it read, PostgreSQL hands the same fence to its
 * statement (contract.test.ts holds both to the outcome).
 */
import { describe, expect, it } from 'vitest';
import { type FenceFacts, fenceAdmits, fenceOf } from '../../src/register/rules.js';
import type { PayoutChange } from '../../src/register/types.js';

const intent: PayoutChange = { state: 'sending', simulationId: 'sim-1' };
const answer: PayoutChange = { state: 'submitted', transactionId: 'tx-1', error: null };
const step: PayoutChange = { beneficiaryId: 'ben-1' };

const facts = (holder: string, state: FenceFacts['state'], leaseHeld: boolean): FenceFacts => ({
  holder,
  state,
  leaseHeld,
});

describe('fenceOf', () => {
  it('asks a lease of the intent to send only, and lets only an answer land on a payout in doubt', () => {
    expect(fenceOf('me', intent)).toEqual({ runId: 'me', lease: true, orIn: [] });
    expect(fenceOf('me', { state: 'claimed' })).toEqual({ runId: 'me', lease: true, orIn: [] });
    expect(fenceOf('me', step)).toEqual({ runId: 'me', lease: false, orIn: [] });
    expect(fenceOf('me', answer)).toEqual({ runId: 'me', lease: false, orIn: ['sending', 'unknown'] });
  });
});

describe('fenceAdmits', () => {
  const cases: Array<[string, PayoutChange, FenceFacts | undefined, boolean]> = [
    ['the intent of the holder with a live lease', intent, facts('me', 'claimed', true), true],
    ['the intent of the holder whose lease ran out', intent, facts('me', 'claimed', false), false],
    ['the intent of a run that lost the claim', intent, facts('other', 'claimed', true), false],
    ['a step of the holder, its lease run out', step, facts('me', 'sending', false), true],
    ['a step of a run that lost the claim', step, facts('other', 'sending', true), false],
    ['an answer on a payout another run holds in doubt', answer, facts('other', 'unknown', false), true],
    [
      'an answer on a payout another run holds, no longer in doubt',
      answer,
      facts('other', 'claimed', true),
      false,
    ],
    ['any write on a payout the register does not hold', answer, undefined, false],
  ];
  it.each(cases)('%s', (_, change, found, admitted) => {
    expect(fenceAdmits(fenceOf('me', change), found)).toBe(admitted);
  });
});
