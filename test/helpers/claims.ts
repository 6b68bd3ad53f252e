/**
 * Claims as `payouts run` makes them, for the register's tests: run's own judge of each record
 * (verdict.ts claimJudge: the register's verdict, liveness by lease.ts, the claim decision).
 */
import type { PayoutDetails } from '../../src/register/details.js';
import type { Self } from '../../src/register/lease.js';
import type { ClaimRequest, PayeePayment, Register, ScopeStore } from '../../src/register/types.js';
import { claimJudge } from '../../src/register/verdict.js';

/** The scope the register tests write to. */
export const TEST_SCOPE = { service: 'https://api.pay.example', integratorId: 'int-1' };

/** A claim request of USD `amount` by ACH to one payee. */
export function request(reference: string, amount = '10.00'): ClaimRequest {
  const details: PayoutDetails = {
    amount,
    currency: 'USD',
    rail: 'ACH',
    payee: 'p',
    payeeHint: 'account ****1234',
  };
  return { reference, details, idempotencyKey: `key-${reference}` };
}

/** Claims `references` for `self` exactly as `run` does; the verdict's kind per reference. */
export async function claimAs(
  store: ScopeStore,
  self: Self,
  references: string[],
  retryUnknown = false,
): Promise<Record<string, string>> {
  const kinds = new Map<string, string>();
  const judge = claimJudge(self, retryUnknown);
  await store.claim(
    self.runId,
    references.map((r) => request(r)),
    (req, record) => {
      const { verdict, decision } = judge(req, record);
      kinds.set(req.reference, verdict.kind);
      return decision;
    },
  );
  return Object.fromEntries(kinds);
}

/** Records the run `self` in the test scope and gives its store. */
export async function begin(register: Register, self: Self): Promise<ScopeStore> {
  const store = await register.openScope(TEST_SCOPE);
  await store.beginRun({
    id: self.runId,
    sheet: `${self.runId}.csv`,
    digest: 'd',
    host: self.host,
    pid: self.pid,
    startedAt: new Date().toISOString(),
  });
  return store;
}

/** A payout to a payee as its history keeps it: USD by ACH, else SPEI, paid on 2026-10-25. */
export function payeePayment(
  reference: string,
  amount: string,
  account = 'acct-1',
  currency = 'USD',
): PayeePayment {
  return {
    account,
    accountHint: `account ****${account.slice(-4)}`,
    reference,
    rail: currency === 'USD' ? 'ACH' : 'SPEI',
    paidAt: '2026-10-25T10:00:00.000Z',
    amount,
    currency,
  };
}
