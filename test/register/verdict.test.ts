import { describe, expect, it } from 'vitest';
import type { PayoutDetails } from '../../src/register/details.js';
import type { Self } from '../../src/register/lease.js';
import type { PayoutRecord, PayoutState, RunRecord } from '../../src/register/types.js';
import { claimJudge, registerVerdict } from '../../src/register/verdict.js';

const details: PayoutDetails = {
  amount: '100.00',
  currency: 'USD',
  rail: 'ACH',
  payee: 'p1',
  payeeHint: 'account ****6789',
};
const other: PayoutDetails = { ...details, amount: '120.00' };

function record(state: PayoutState): PayoutRecord {
  return {
    reference: 'INV-1',
    details,
    state,
    idempotencyKey: 'k',
    runId: 'r1',
    sheet: 'october.csv',
    updatedAt: '2026-11-01T10:00:00.000Z',
  };
}

type Case = [
  state: PayoutState | 'none',
  same: boolean,
  holderAlive: boolean,
  retryUnknown: boolean,
  kind: string,
];

describe('registerVerdict (README "Never pay twice: the register")', () => {
  it.each<Case>([
    ['none', true, false, false, 'send'],
    // Paid: the same details are skipped, other details are a conflict; --retry-unknown changes nothing.
    ['submitted', true, false, false, 'paid'],
    ['completed', true, false, true, 'paid'],
    ['submitted', false, false, false, 'conflict'],
    ['completed', false, false, false, 'conflict'],
    // Refused before any transaction existed: sent again, with any details.
    ['refused', true, false, false, 'send'],
    ['refused', false, false, false, 'send'],
    // Claimed, nothing sent: another live run holds it, or a dead run left it free.
    ['claimed', true, true, false, 'busy'],
    ['claimed', false, false, false, 'send'],
    // Being sent: by a live run it is busy; a dead run's send is in doubt.
    ['sending', true, true, false, 'busy'],
    ['sending', true, false, false, 'unknown'],
    ['sending', true, false, true, 'resend'],
    ['sending', false, false, true, 'conflict'],
    // Unknown: left alone unless --retry-unknown, and never re-sent with other details.
    ['unknown', true, false, false, 'unknown'],
    ['unknown', true, false, true, 'resend'],
    ['unknown', false, false, true, 'conflict'],
    // A transaction that exists and failed is not sent again under its reference.
    ['failed', true, false, true, 'failed'],
    ['failed', false, false, false, 'failed'],
  ])('%s, same details %s, holder alive %s, --retry-unknown %s: %s', (state, same, alive, retry, kind) => {
    const verdict = registerVerdict(state === 'none' ? undefined : record(state), same ? details : other, {
      holderAlive: alive,
      retryUnknown: retry,
    });
    expect(verdict.kind).toBe(kind);
  });
});

describe('claimJudge: how run judges the records one claim meets', () => {
  const machine = 'boot-1/pid:[4026531836]';
  const self: Self = { runId: 'me', host: 'box', pid: 1, machine, processStart: '500' };
  const holder = (id: string, pid: number): RunRecord => ({
    id,
    sheet: 'november.csv',
    digest: 'd',
    host: 'box',
    pid,
    machine,
    processStart: '700',
    startedAt: '2026-11-25T12:00:00.000Z',
    heartbeatAt: '2026-11-25T12:00:00.000Z',
    leaseExpiresAt: '2026-11-25T12:01:00.000Z',
    leaseExpired: false,
  });
  const held = (reference: string, state: PayoutState, run: RunRecord): PayoutRecord => ({
    ...record(state),
    reference,
    runId: run.id,
    run,
  });
  const request = (reference: string) => ({ reference, details, idempotencyKey: `k-${reference}` });

  it('asks the process table once per holding run, and decides each record as run does', () => {
    const asked: number[] = [];
    // Pid 41 lives; pid 42 is gone.
    const probe = (pid: number) => {
      asked.push(pid);
      return pid === 41;
    };
    const judge = claimJudge(self, false, probe);
    const [live, dead] = [holder('live', 41), holder('dead', 42)];
    const seen = [
      judge(request('A'), held('A', 'claimed', live)),
      judge(request('B'), held('B', 'sending', live)),
      judge(request('C'), held('C', 'sending', dead)),
      judge(request('D'), held('D', 'claimed', dead)),
      judge(request('E'), undefined),
    ].map(({ verdict, decision }) => `${verdict.kind}/${decision}`);
    expect(seen).toEqual(['busy/leave', 'busy/leave', 'unknown/mark-unknown', 'send/claim', 'send/claim']);
    expect(asked).toEqual([41, 42]);
    // A new claim asks again: liveness is of the moment.
    claimJudge(self, true, probe)(request('C'), held('C', 'sending', dead));
    expect(asked).toEqual([41, 42, 42]);
  });
});
