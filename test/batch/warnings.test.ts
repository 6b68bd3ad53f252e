/**
 * The approver's signals (warnings.ts), one table per signal, against a register's payee
 * history held in memory: identity fingerprints are the plain text, so each case reads as what
 * the register would hold.
 */
import { describe, expect, it } from 'vitest';
import type { PreparedRow } from '../../src/batch/prepare.js';
import { SincePreviousComparison } from '../../src/batch/since-previous.js';
import { ValidationTally } from '../../src/batch/verdicts.js';
import {
  duplicateWindowMs,
  heldReason,
  judgedRight,
  messagesOf,
  NEW_PAYEE_ONLY,
  PayeeWarnings,
} from '../../src/batch/warnings.js';
import { withPayment } from '../../src/register/rules.js';
import type { PayeeHistory, PayeePayment } from '../../src/register/types.js';
import type { PayoutRow } from '../../src/rows/types.js';

const AS_OF = Date.parse('2026-12-20T12:00:00Z');
const ANA = { key: 'name:ana lopez\nemail:ana@example.com', name: 'Ana Lopez' };

/** A valid ACH row paying Ana `amount` USD to `account`. */
function row(reference: string, amount: string, account = '000123456789', sameAs?: number[]): PreparedRow {
  const [whole = '0', cents = '00'] = amount.split('.');
  const payout: PayoutRow = {
    rowNumber: 2,
    reference,
    amount: { minor: BigInt(whole) * 100n + BigInt(cents), text: amount },
    currency: 'USD',
    rail: 'ACH',
    beneficiary: { kind: 'integrator' },
    recipient: {
      kind: 'new',
      key: 'r',
      request: {
        individualName: 'Ana Lopez',
        details: { accountNumber: account, routingNumber: '021000021' },
      },
    },
    issues: [],
  };
  return {
    raw: { rowNumber: 2, cells: [], problems: [] },
    payout,
    issues: [],
    errorColumns: [],
    payee: ANA,
    ...(sameAs ? { sameAs } : {}),
  };
}

/** The account fingerprint the store's key would give (plain text here). */
const accountOf = (account: string) => `rail:ACH\nroutingNumber:021000021\naccountNumber:${account}`;

function paid(reference: string, amount: string, paidAt: string, account = '000123456789'): PayeePayment {
  return {
    account: accountOf(account),
    accountHint: `account ****${account.slice(-4)}`,
    reference,
    rail: 'ACH',
    paidAt,
    amount,
    currency: 'USD',
  };
}

/** Warnings of `r` with Ana's history made of `payments` (each of its own earlier batch). */
async function warningsOf(r: PreparedRow, payments: PayeePayment[], batch?: string) {
  let history: PayeeHistory | undefined;
  payments.forEach((p, i) => {
    history = withPayment(history, p, `batch-${i}`);
  });
  const store = {
    fingerprint: (text: string) => (text.startsWith('payee:') ? text.slice(6) : text),
    payeeHistory: async (keys: readonly string[]) =>
      new Map(history && keys.includes(ANA.key) ? [[ANA.key, history]] : []),
    hasPayeeHistory: async () => history !== undefined,
  };
  const warnings = new PayeeWarnings(store, AS_OF, batch);
  await warnings.load([r]);
  return warnings.of(r);
}

const signals = (found: readonly { signal: string }[]) => found.map((w) => w.signal);

describe('newPayee', () => {
  it.each([
    ['no history at all', [], ['newPayee']],
    ['paid before', [paid('N-1', '20.00', '2026-10-01T10:00:00Z')], []],
  ])('%s', async (_, history, expected) => {
    expect(signals(await warningsOf(row('D-1', '50.00'), history))).toEqual(expected);
  });

  it('is one shared warning without a register: a first sheet allocates nothing per row', async () => {
    const warnings = new PayeeWarnings(undefined, AS_OF);
    expect(warnings.of(row('D-1', '50.00'))).toBe(NEW_PAYEE_ONLY);
    // Shared as a value; where it is written, its words name the row's payee.
    expect(messagesOf(NEW_PAYEE_ONLY, 'Ana Lopez')).toEqual([
      'new payee: the register has no earlier payout to Ana Lopez',
    ]);
  });

  it('compares a resumed batch with what stood before it paid', async () => {
    // The only payout is this batch's own (batch-0): before it, nothing.
    expect(
      signals(
        await warningsOf(row('D-2', '50.00'), [paid('D-1', '50.00', '2026-12-20T10:00:00Z')], 'batch-0'),
      ),
    ).toEqual(['newPayee']);
  });
});

describe('changedBankDetails', () => {
  it.each([
    ['the account last paid', '000123456789', [paid('N-1', '20.00', '2026-11-20T10:00:00Z')], []],
    [
      'another account',
      '000999888777',
      [paid('N-1', '20.00', '2026-11-20T10:00:00Z')],
      ['changedBankDetails'],
    ],
    [
      'a second account the payee was paid to before',
      '000999888777',
      [
        paid('O-1', '20.00', '2026-10-20T10:00:00Z', '000999888777'),
        paid('N-1', '20.00', '2026-11-20T10:00:00Z'),
      ],
      [],
    ],
  ])('%s', async (_, account, history, expected) => {
    expect(signals(await warningsOf(row('D-1', '50.00', account), history))).toEqual(expected);
  });

  it('shows the last payout and both masked account endings, and holds the row', async () => {
    const [warning] = await warningsOf(row('D-1', '50.00', '000999888777'), [
      paid('N-1', '20.00', '2026-11-20T10:00:00Z'),
    ]);
    expect(warning!.message).toBe(
      'bank details changed: Ana Lopez was last paid to account ****6789 on 2026-11-20 (reference N-1), this row pays account ****8777',
    );
    expect(heldReason([warning!])).toBe(
      `held by --hold-changed-payees, not sent: ${warning!.message} - confirm the new bank details with the payee, then run again without --hold-changed-payees to pay it`,
    );
    expect(heldReason([])).toBeUndefined();
  });
  it('names the last account paid on the same rail, not the last of any rail', async () => {
    const rtp: PayeePayment = {
      ...paid('R-1', '20.00', '2026-12-01T10:00:00Z', '000555444333'),
      rail: 'RTP',
      account: 'rail:RTP\naccountNumber:000555444333',
    };
    const [warning] = await warningsOf(row('D-1', '50.00', '000999888777'), [
      paid('N-1', '20.00', '2026-11-20T10:00:00Z'),
      rtp,
    ]);
    expect(warning!.message).toBe(
      'bank details changed: Ana Lopez was last paid to account ****6789 on 2026-11-20 (reference N-1), this row pays account ****8777',
    );
  });
});

describe('possibleDuplicate', () => {
  const DAY = 24 * 60 * 60 * 1000;
  /** Payouts of `amount` USD to Ana `daysAgo` days before AS_OF, oldest first, each its own reference. */
  const series = (daysAgo: number[], amount = '50.00', account = '000123456789') =>
    [...daysAgo]
      .sort((a, b) => b - a)
      .map((d) =>
        paid(`P-${account.slice(-4)}-${d}`, amount, new Date(AS_OF - d * DAY).toISOString(), account),
      );
  const monthly = (last: number) => series([last, last + 30, last + 61, last + 91]);
  const weekly = (last: number) => series([last, last + 7, last + 14, last + 21]);
  // Mondays and Thursdays: 3 and 4 days apart.
  const twiceAWeek = (last: number) => series([last, last + 3, last + 7, last + 10, last + 14]);

  it.each([
    ['a monthly payee repeated after 28 days', monthly(28), []],
    ['a monthly payee repeated after 30 days', monthly(30), []],
    ['a monthly payee repeated after 31 days', monthly(31), []],
    ['a monthly payee repeated after 2 days', monthly(2), ['possibleDuplicate']],
    ['a weekly payee repeated after 7 days', weekly(7), []],
    ['a weekly payee repeated after 2 days', weekly(2), ['possibleDuplicate']],
    ['a payee paid twice a week, again after 3 days', twiceAWeek(3), []],
    ['a payee paid twice a week, again after 4 days', twiceAWeek(4), []],
    ['a payee paid twice a week, again the same day', twiceAWeek(0), ['possibleDuplicate']],
    ['one earlier payout 2 days ago (no usual interval: a week)', series([2]), ['possibleDuplicate']],
    ['one earlier payout 7 days ago', series([7]), []],
    [
      'two accounts each paid monthly, this account again after 30 days',
      [...series([30, 60, 91], '50.00', '000999888777'), ...series([30, 60, 91])].sort((a, b) =>
        a.paidAt.localeCompare(b.paidAt),
      ),
      [],
    ],
    [
      'two accounts: this account paid 2 days after the other',
      [...series([32, 62], '50.00', '000999888777'), ...series([2])].sort((a, b) =>
        a.paidAt.localeCompare(b.paidAt),
      ),
      ['possibleDuplicate'],
    ],
    ['another amount after 2 days', series([2], '50.01'), []],
    ['the same reference (this payout itself)', [paid('D-1', '50.00', '2026-12-18T12:00:00Z')], []],
  ])('%s', async (_, history, expected) => {
    expect(signals(await warningsOf(row('D-1', '50.00'), history))).toEqual(expected);
  });

  it.each([
    // Paid by this batch 3 days after P-1, checked again 17 days later: a duplicate then, still.
    ['paid by this batch 3 days after the earlier payout', 'D-1', ['possibleDuplicate']],
    // Not paid yet: as of now, 20 days after P-1 (this batch's own payout D-1 never counts).
    ['not paid yet, 20 days after the earlier payout', 'D-2', []],
  ])('a resumed batch judges a row %s as of when it was paid', async (_, reference, expected) => {
    const history = [
      paid('P-1', '50.00', new Date(AS_OF - 20 * DAY).toISOString()),
      paid('D-1', '50.00', new Date(AS_OF - 17 * DAY).toISOString()),
    ];
    // batch-1 (the second payout's) is this sheet's own batch.
    expect(signals(await warningsOf(row(reference, '50.00'), history, 'batch-1'))).toEqual(expected);
  });

  it('reads a history written before dated payouts were kept (the last payout per account)', async () => {
    const old = { accounts: [paid('N-1', '50.00', '2026-12-18T12:00:00Z')], largest: { USD: '50.00' } };
    const store = {
      fingerprint: (text: string) => (text.startsWith('payee:') ? text.slice(6) : text),
      payeeHistory: async () => new Map([[ANA.key, { ...old, batch: 'b' }]]),
      hasPayeeHistory: async () => true,
    };
    const warnings = new PayeeWarnings(store, AS_OF);
    const r = row('D-1', '50.00');
    await warnings.load([r]);
    expect(signals(warnings.of(r))).toEqual(['possibleDuplicate']);
  });

  it.each([
    [[], 7],
    [[0], 7],
    [[0, 30], 15],
    [[0, 30, 61, 91], 15],
    [[0, 7, 14], 3.5],
    [[0, 3, 7, 10, 14], 1.75],
    // Two payouts on one day are one payday.
    [[0, 0, 30, 30], 15],
  ])('the window after paydays %j is %s days', (days, window) => {
    expect(duplicateWindowMs(days.map((d) => AS_OF + d * DAY))).toBe(window * DAY);
  });

  it('names the earlier payout, or the other rows of the sheet', async () => {
    const [register] = await warningsOf(row('D-1', '50.00'), [paid('N-1', '50.00', '2026-12-18T12:00:00Z')]);
    expect(register!.message).toBe(
      'possible duplicate: Ana Lopez was paid 50.00 USD on 2026-12-18 under reference N-1',
    );
    const inSheet = await warningsOf(row('D-1', '50.00', '000123456789', [7, 9]), []);
    expect(inSheet.map((w) => w.message)).toEqual([
      'new payee: the register has no earlier payout to Ana Lopez',
      'possible duplicate: rows 7, 9 of this sheet also pay Ana Lopez 50.00 USD',
    ]);
  });
});

describe('unusualAmount', () => {
  it.each([
    ['more than 3 times the largest', '300.01', ['unusualAmount']],
    ['exactly 3 times the largest', '300.00', []],
    ['less', '99.00', []],
  ])('%s', async (_, amount, expected) => {
    const history = [
      paid('N-1', '100.00', '2026-09-01T10:00:00Z'),
      paid('N-2', '20.00', '2026-10-01T10:00:00Z'),
    ];
    expect(signals(await warningsOf(row('D-1', amount), history))).toEqual(expected);
  });

  it('says by how much, against the largest in that currency', async () => {
    const [warning] = await warningsOf(row('D-1', '1000.00'), [
      paid('N-1', '100.00', '2026-09-01T10:00:00Z'),
    ]);
    expect(warning!.message).toBe(
      'unusual amount: 1000.00 USD is more than 3 times the largest earlier payout to Ana Lopez (100.00 USD)',
    );
  });
});

describe('warnings only on valid rows', () => {
  const index = new Map([['reference', 0]]) as unknown as ConstructorParameters<typeof ValidationTally>[0];
  const unusual = [{ signal: 'unusualAmount' as const, message: 'unusual amount: ...' }];

  it.each([
    ['a row the register refuses (a paid reference reused with other details)', 'invalid'],
    ['a row paid already', 'skipped'],
    ['a row in doubt', 'unknown'],
  ] as const)('none on %s, in the verdict and the counts', (_, status) => {
    const tally = new ValidationTally(index, 20);
    const verdict = tally.add(row('D-1', '5000.00'), { status, errors: ['from the register'] }, unusual);
    expect(verdict.status).toBe(status);
    expect(verdict.warnings).toBeUndefined();
    expect(tally.warnings.counts.unusualAmount).toBe(0);
  });

  it('none on a row that fails pre-validation; kept on a valid one', async () => {
    const invalid = {
      ...row('D-2', '5000.00'),
      issues: [{ message: 'amount must be provided' }],
    } as PreparedRow;
    expect(await warningsOf(invalid, [paid('N-1', '100.00', '2026-09-01T10:00:00Z')])).toEqual([]);
    const tally = new ValidationTally(index, 20);
    expect(tally.add(row('D-3', '5000.00'), undefined, unusual).warnings).toEqual(['unusual amount: ...']);
    expect(tally.warnings.counts.unusualAmount).toBe(1);
  });
});

describe('the payee of a row compared with the previous batch', () => {
  const index = new Map([['reference', 0]]) as unknown as ConstructorParameters<typeof ValidationTally>[0];
  const BATCH = { sheet: 'october.csv', at: '2026-10-25T09:00:00.000Z', rows: 1 };
  const tally = (payees: boolean) => {
    const counted = new ValidationTally(index, 20);
    const earlier = [
      { payee: payees ? ANA.key : '', name: 'Ana Lopez', reference: 'O-1', minor: 500_000n, currency: 'USD' },
    ];
    counted.compareWith([new SincePreviousComparison(BATCH, payees ? earlier : [])]);
    return counted;
  };

  it('is asked for a valid row, paid already or not, when the previous batch names its payees', () => {
    expect(tally(true).wantsPayee(row('D-1', '5000.00'))).toBe(true);
    expect(tally(true).wantsPayee(row('D-1', '5000.00'), { status: 'skipped', errors: [] })).toBe(true);
  });

  it('is not asked (no keyed hash is taken) for a row that does not count, nor when no payee is named', () => {
    const invalid = {
      ...row('D-2', '5000.00'),
      issues: [{ message: 'amount must be provided' }],
    } as PreparedRow;
    expect(tally(true).wantsPayee(invalid)).toBe(false);
    expect(tally(true).wantsPayee(row('D-3', '5000.00'), { status: 'invalid', errors: ['reused'] })).toBe(
      false,
    );
    expect(tally(false).wantsPayee(row('D-4', '5000.00'))).toBe(false);
    expect(new ValidationTally(index, 20).wantsPayee(row('D-5', '5000.00'))).toBe(false);
  });
});

describe('the previous batch read by another thread while the first rows are counted', () => {
  const index = new Map([['reference', 0]]) as unknown as ConstructorParameters<typeof ValidationTally>[0];
  const BATCH = { sheet: 'october.csv', at: '2026-10-25T09:00:00.000Z', rows: 2 };
  const october = () =>
    new SincePreviousComparison(BATCH, [
      { payee: ANA.key, name: 'Ana Lopez', reference: 'O-1', minor: 500_000n, currency: 'USD' },
      { payee: 'gone', name: 'Gone Ltd', reference: 'O-2', minor: 10_000n, currency: 'USD' },
    ]);
  const since = async (tally: ValidationTally) => JSON.parse(JSON.stringify((await tally.finish()).since));

  it('compares the rows counted before it came once it comes, as if it had been there first', async () => {
    const first = new ValidationTally(index, 20);
    first.compareWith([october()]);
    const later = new ValidationTally(index, 20);
    later.compareLater();
    // Its payees are not known yet: every row that counts wants its keyed payee.
    expect(later.wantsPayee(row('D-1', '6000.00'))).toBe(true);
    for (const tally of [first, later]) tally.add(row('D-1', '6000.00'), undefined, undefined, ANA.key);
    later.compareWith([october()]);
    for (const tally of [first, later]) tally.add(row('D-2', '100.00'), undefined, undefined, ANA.key);
    const compared = await since(later);
    expect(compared).toEqual(await since(first));
    expect(compared.changedAmounts).toEqual([
      { name: 'Ana Lopez', currency: 'USD', previous: '5000.00', current: '6100.00', change: '+1100.00' },
    ]);
    expect(compared.missingPayees).toEqual([
      { name: 'Gone Ltd', lastReference: 'O-2', amount: '100.00', currency: 'USD' },
    ]);
    expect(compared.totals.USD).toEqual({ previous: '5100.00', current: '6100.00', change: '+1000.00' });
  });

  it('is never finished without it', async () => {
    const tally = new ValidationTally(index, 20);
    tally.compareLater();
    tally.add(row('D-1', '6000.00'), undefined, undefined, ANA.key);
    await expect(tally.finish()).rejects.toThrow('the rows were counted, but the earlier batches never came');
  });
});

describe("a sheet's own batch, guessed before its tag is known", () => {
  /** Ana paid once by batch `own` (a history whose `before` is empty): new before it, known after. */
  const history = withPayment(undefined, paid('D-1', '50.00', '2026-12-18T12:00:00Z'), 'own', 'Ana Lopez');
  const store = {
    fingerprint: (text: string) => (text.startsWith('payee:') ? text.slice(6) : text),
    payeeHistory: async () => new Map([[ANA.key, history]]),
    hasPayeeHistory: async () => true,
  };
  const PAID = { status: 'skipped' };

  it('takes the batch of the first row the register holds, and leaves its payouts out', async () => {
    const warnings = new PayeeWarnings(store, AS_OF);
    const rows = [row('D-2', '10.00'), row('D-1', '50.00')];
    await warnings.load(rows, [undefined, PAID]);
    expect(signals(warnings.of(rows[0]!))).toEqual(['newPayee']);
    expect([[...warnings.judgedOwn], [...warnings.judgedOther]]).toEqual([['own'], []]);
  });

  it('takes none from rows the register refuses or does not hold, nor after judging against that batch', async () => {
    const warnings = new PayeeWarnings(store, AS_OF);
    const first = row('D-2', '10.00');
    await warnings.load([first], [{ status: 'invalid' }]);
    await warnings.load([first], [undefined]);
    expect(signals(warnings.of(first))).toEqual([]);
    // Rows were judged with Ana's payouts of `own` held against them: it is no guess any more.
    await warnings.load([first, row('D-1', '50.00')], [undefined, PAID]);
    expect([[...warnings.judgedOwn], [...warnings.judgedOther]]).toEqual([[], ['own']]);
  });

  it.each([
    [[], [], 'tag', true],
    [['tag'], ['older'], 'tag', true],
    [['older'], [], 'tag', false],
    [[], ['tag'], 'tag', false],
    [['tag'], ['tag'], 'tag', false],
  ])('own %j, held %j, the tag %s: judged right %s', (own, other, tag, right) => {
    expect(judgedRight(own, other, tag)).toBe(right);
  });
});
