/**
 * When a policy's rule applies, from the facts of the rows to send, and what a rule needs once
 * it does: pure, a table each.
 */
import { describe, expect, it } from 'vitest';
import type { PolicyConditions } from '../../src/approvals/policy.js';
import { ruleApplies, SendFactsTally } from '../../src/approvals/policy-gate.js';

/** Ana's two ACH rows to send (USD 900.00 and 300.00), one of them to a changed account. */
function facts(): SendFactsTally {
  const tally = new SendFactsTally();
  tally.add(90000n, 'USD', 'ACH', []);
  tally.add(30000n, 'USD', 'ACH', ['changedBankDetails']);
  return tally;
}

describe('ruleApplies', () => {
  const usd = (minor: bigint) => new Map([['USD' as const, minor]]);
  const cases: [string, PolicyConditions, boolean][] = [
    ['no condition: always', {}, true],
    ['USD 1,200.00 to send is over 1,000.00', { sendTotalOver: usd(100000n) }, true],
    ['is not over 1,200.00 (over, not at)', { sendTotalOver: usd(120000n) }, false],
    ['a total in another currency is not this one', { sendTotalOver: new Map([['MXN', 1n]]) }, false],
    [
      'any listed currency over its amount',
      {
        sendTotalOver: new Map([
          ['MXN', 1n],
          ['USD', 1n],
        ]),
      },
      true,
    ],
    ['the largest row (900.00) is over 800.00', { rowOver: usd(80000n) }, true],
    ['no row is over 1,000.00, though the total is', { rowOver: usd(100000n) }, false],
    ['a row carries changedBankDetails', { warnings: ['changedBankDetails'] }, true],
    ['no row carries newPayee or unusualAmount', { warnings: ['newPayee', 'unusualAmount'] }, false],
    ['a row is on ACH', { rails: ['WIRE', 'ACH'] }, true],
    ['no row is on PIX', { rails: ['PIX'] }, false],
    ['every condition must hold: one does not', { rails: ['ACH'], rowOver: usd(100000n) }, false],
    [
      'every condition holds',
      { rails: ['ACH'], warnings: ['changedBankDetails'], sendTotalOver: usd(1n) },
      true,
    ],
  ];
  it.each(cases)('%s', (_, when, applies) => {
    expect(ruleApplies(when, facts())).toBe(applies);
  });

  it('applies no conditional rule to a batch with nothing to send', () => {
    const none = new SendFactsTally();
    expect(ruleApplies({ sendTotalOver: usd(0n) }, none)).toBe(false);
    expect(ruleApplies({ rails: ['ACH'] }, none)).toBe(false);
    expect(ruleApplies({}, none)).toBe(true);
  });
});
