/** What changed since the previous batch: totals then and now, payees gone, amounts changed. */
import { describe, expect, it } from 'vitest';
import {
  type ChangedAmount,
  type EarlierPayout,
  ListedPayees,
  type SincePrevious,
  SincePreviousComparison,
  sinceCandidates,
  sinceFrom,
  sinceOf,
} from '../../src/batch/since-previous.js';

const BATCH = { sheet: 'payroll-2026-10.csv', at: '2026-10-25T09:00:00.000Z', rows: 4 };
const paid = (
  payee: string,
  name: string,
  reference: string,
  minor: bigint,
  currency = 'USD',
): EarlierPayout => ({
  payee,
  name,
  reference,
  minor,
  currency,
});

/** The comparison with its lists as arrays, as the JSON summary writes it. */
const plain = (since: SincePrevious | null) => JSON.parse(JSON.stringify(since));

describe('SincePreviousComparison', () => {
  it('names the payees paid then and missing now, the changed amounts largest first, and the totals', async () => {
    const comparison = new SincePreviousComparison(BATCH, [
      paid('ana', 'Ana Lopez', 'PAY-10-1', 125_000n),
      paid('hans', 'Hans Weber', 'PAY-10-2', 320_000n),
      paid('joao', 'João Silva', 'PAY-10-3', 190_000n, 'BRL'),
      paid('dropped', 'Dropped Supplier', 'PAY-10-4', 50_000n),
    ]);
    comparison.add('ana', 125_000n, 'USD'); // the same
    comparison.add('hans', 1_000_000n, 'USD'); // +6800.00
    comparison.add('joao', 180_000n, 'BRL'); // -100.00
    comparison.add('zoe', 30_000n, 'USD'); // new: counts in the totals only
    comparison.add(undefined, 1_000n, 'MXN');
    expect(plain(await comparison.finish())).toEqual({
      batch: BATCH,
      totals: {
        BRL: { previous: '1900.00', current: '1800.00', change: '-100.00' },
        MXN: { previous: '0.00', current: '10.00', change: '+10.00' },
        USD: { previous: '4950.00', current: '11550.00', change: '+6600.00' },
      },
      missingPayees: [
        { name: 'Dropped Supplier', lastReference: 'PAY-10-4', amount: '500.00', currency: 'USD' },
      ],
      changedAmounts: [
        { name: 'Hans Weber', currency: 'USD', previous: '3200.00', current: '10000.00', change: '+6800.00' },
        { name: 'João Silva', currency: 'BRL', previous: '1900.00', current: '1800.00', change: '-100.00' },
      ],
    });
  });

  it('lists the first few payees for people and counts them all, when told to keep only those', async () => {
    const payouts = Array.from({ length: 80 }, (_, i) =>
      paid(`payee-${i}`, `Payee ${String(79 - i).padStart(2, '0')}`, `PAY-10-${i}`, 1_000n + BigInt(i)),
    );
    const whole = new SincePreviousComparison(BATCH, payouts);
    const few = new SincePreviousComparison(BATCH, payouts);
    for (const comparison of [whole, few]) {
      for (let i = 0; i < 40; i++) comparison.add(`payee-${i}`, 5_000n + BigInt(i), 'USD');
    }
    const all = await whole.finish();
    const first = await few.finish(10);
    expect(first.missingPayees.length).toBe(40);
    expect(first.changedAmounts.length).toBe(40);
    expect(first.missingPayees.slice(0, 50)).toEqual(all.missingPayees.slice(0, 10));
    expect(first.changedAmounts.slice(0, 50)).toEqual(all.changedAmounts.slice(0, 10));
    expect(all.missingPayees.slice(0, 2)).toEqual([
      { name: 'Payee 00', lastReference: 'PAY-10-79', amount: '10.79', currency: 'USD' },
      { name: 'Payee 01', lastReference: 'PAY-10-78', amount: '10.78', currency: 'USD' },
    ]);
    expect(first.totals).toEqual(all.totals);
  });

  it('lists for people exactly the first entries of the whole lists, whatever ties of names, references and sizes', async () => {
    // A fixed pseudo-random sequence (mulberry32): the same payees on every run.
    let seed = 29;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
    const payouts: EarlierPayout[] = [];
    const sheet: [string, bigint, string][] = [];
    for (let i = 0; i < 3_000; i++) {
      const payee = `payee-${i}`;
      // Names of their own, mostly, and names many payees share.
      const name =
        random() < 0.7 ? `Payee ${Math.floor(random() * 900)}` : pick(['Payee 005', 'Payee 450', 'Zoe']);
      random() < 0.5 ? pick(['Ana', 'Bea', 'Carl', 'Dora', 'Emil']) : `Payee ${Math.floor(random() * 900)}`;
      const currencies = pick([['USD'], ['USD', 'BRL'], ['MXN', 'USD', 'COP']]);
      for (const currency of currencies) {
        const then = pick([100n, 200n, 300n]);
        for (let k = pick([1, 2]); k > 0; k--)
          payouts.push(
            paid(payee, name, `REF-${pick(['A', 'B'])}-${String(i).padStart(5, '0')}-${k}`, then, currency),
          );
        const fate = random();
        // Missing whole, paid the same, or another amount (equal sizes often), per currency.
        if (fate < 0.3 && currencies[0] === currency) break;
        sheet.push([payee, fate < 0.6 ? then : pick([50n, 150n, 400n, 1_000n]), currency]);
      }
    }
    payouts.sort((a, b) => a.reference.localeCompare(b.reference));
    const all = new SincePreviousComparison(BATCH, payouts);
    for (const [payee, minor, currency] of sheet) all.add(payee, minor, currency);
    const whole = await all.finish();
    expect(whole.missingPayees.length).toBeGreaterThan(500);
    expect(whole.changedAmounts.length).toBeGreaterThan(500);
    for (const kept of [1, 3, 10, 50]) {
      const few = new SincePreviousComparison(BATCH, payouts);
      for (const [payee, minor, currency] of sheet) few.add(payee, minor, currency);
      const first = await few.finish(kept);
      expect(first.missingPayees.length).toBe(whole.missingPayees.length);
      expect(first.changedAmounts.length).toBe(whole.changedAmounts.length);
      expect(first.missingPayees.slice(0, kept)).toEqual(whole.missingPayees.slice(0, kept));
      expect(first.changedAmounts.slice(0, kept)).toEqual(whole.changedAmounts.slice(0, kept));
    }
  });

  it('keeps for people the first payees by name, whatever order the batch paid them in', async () => {
    const names = ['Dora', 'Carl', 'Ana', 'Bea', 'Emil', 'Finn', 'Gus'];
    const payouts = names.map((name, i) => paid(`payee-${i}`, name, `PAY-10-${i}`, 1_000n));
    const first = await new SincePreviousComparison(BATCH, payouts).finish(3);
    expect(first.missingPayees.length).toBe(7);
    expect(first.missingPayees.slice(0, 3).map((p) => p.name)).toEqual(['Ana', 'Bea', 'Carl']);
    // Told to keep none, it counts them all.
    const none = await new SincePreviousComparison(BATCH, payouts).finish(0);
    expect([none.missingPayees.length, none.missingPayees.slice().length]).toEqual([7, 0]);
  });

  it('adds up a payee paid twice in a batch, and names its last reference', async () => {
    const comparison = new SincePreviousComparison(BATCH, [
      paid('acme', 'Acme Ltd', 'PAY-10-5', 100_000n),
      paid('acme', 'Acme Ltd', 'PAY-10-6', 20_000n),
    ]);
    comparison.add('acme', 120_000n, 'USD');
    expect([...(await comparison.finish()).changedAmounts]).toEqual([]);
    const gone = new SincePreviousComparison(BATCH, [
      paid('acme', 'Acme Ltd', 'PAY-10-5', 100_000n),
      paid('acme', 'Acme Ltd', 'PAY-10-6', 20_000n),
    ]);
    expect([...(await gone.finish()).missingPayees]).toEqual([
      { name: 'Acme Ltd', lastReference: 'PAY-10-6', amount: '1200.00', currency: 'USD' },
    ]);
  });

  it("reads a register's batch page by page, counts its payouts as its rows when its run never said, and reads it again to name the payees listed", async () => {
    const readings: string[] = [];
    const pagesOf = (digest: string, pages: EarlierPayout[][]) =>
      async function* () {
        readings.push(digest);
        yield* pages;
      };
    const october = pagesOf('october', [
      [paid('acme', 'Acme Ltd', 'PAY-10-1', 100_000n), paid('kept', 'Kept Co', 'PAY-10-2', 5_000n)],
      [paid('acme', 'Acme Limited', 'PAY-10-3', 20_000n)],
    ]);
    const november = pagesOf('november', [[paid('kept', 'Kept Co', 'PAY-11-1', 5_000n)]]);
    const at = BATCH.at;
    const comparisons = [
      await SincePreviousComparison.read({ sheet: 'november.csv', at, rows: 1 }, november, 'november'),
      await SincePreviousComparison.read({ sheet: 'october.csv', at, rows: null }, october, 'october'),
    ];
    for (const comparison of comparisons) comparison.add('kept', 5_000n, 'USD');
    expect(readings).toEqual(['november', 'october']);
    // This sheet is November's, resumed: compared with October, read once more for the names.
    const since = plain(await sinceOf(comparisons, 'november'));
    expect(readings).toEqual(['november', 'october', 'october']);
    expect(since?.batch).toEqual({ sheet: 'october.csv', at, rows: 3 });
    // The name of the payee's first payout read (by reference), the reference of its last: as before.
    expect(since?.missingPayees).toEqual([
      { name: 'Acme Ltd', lastReference: 'PAY-10-3', amount: '1200.00', currency: 'USD' },
    ]);
    expect(since?.changedAmounts).toEqual([]);
    expect(await sinceOf(comparisons.slice(0, 1), 'november')).toBeNull();
  });
});

describe('a comparison read on one thread and compared on another', () => {
  // 10,000 payees (three chunks of the typed arrays), every seventh paid in a second currency,
  // one an amount past 64 bits: every part of the kept amounts crosses.
  const payouts: EarlierPayout[] = [];
  for (let i = 0; i < 10_000; i++) {
    const reference = `OCT-${String(i).padStart(5, '0')}`;
    payouts.push(paid(`payee-${i}`, `Name ${i % 500}`, reference, BigInt(1_000 + i)));
    if (i % 7 === 0) payouts.push(paid(`payee-${i}`, `Name ${i % 500}`, `${reference}-B`, 500n, 'BRL'));
  }
  payouts.push(paid('huge', 'Huge Ltd', 'OCT-H', 2n ** 70n));
  const pages = async function* () {
    for (let i = 0; i < payouts.length; i += 1_000) yield payouts.slice(i, i + 1_000);
  };
  const batch = { sheet: 'october.csv', at: BATCH.at, rows: null };
  /** This month: a third gone, a third the same, a third paid 5.00 more; Huge Ltd 100.00 more. */
  const addRows = (comparison: SincePreviousComparison) => {
    for (let i = 0; i < 10_000; i++) {
      if (i % 3 === 0) continue;
      comparison.add(`payee-${i}`, BigInt(1_000 + i + (i % 3 === 2 ? 500 : 0)), 'USD');
      if (i % 7 === 0) comparison.add(`payee-${i}`, 500n, 'BRL');
    }
    comparison.add('huge', 2n ** 70n + 10_000n, 'USD');
  };

  it.each([
    ['the JSON summary', undefined],
    ['people', 50],
  ])('moves its amounts, and lists there what it lists here, for %s', async (_, kept) => {
    const here = await SincePreviousComparison.read(batch, pages, 'october');
    const sent = await SincePreviousComparison.read(batch, pages, 'october');
    const { data, transfer } = sent.message();
    const arrived = structuredClone(data, { transfer });
    // Moved, not copied: this thread's arrays are gone.
    expect(transfer.length).toBeGreaterThan(12);
    expect(transfer.every((buffer) => buffer.byteLength === 0)).toBe(true);
    const there = SincePreviousComparison.revive(arrived, pages);
    addRows(here);
    addRows(there);
    // A list bounded for people is read as the terminal and the report read it.
    const read = ({ missingPayees, changedAmounts, ...rest }: SincePrevious) => ({
      ...rest,
      missingPayees: [missingPayees.length, missingPayees.slice()],
      changedAmounts: [changedAmounts.length, changedAmounts.slice()],
    });
    const compared = read((await there.finish(kept))!);
    expect(compared).toEqual(read((await here.finish(kept))!));
    expect(compared.batch).toEqual({ sheet: 'october.csv', at: BATCH.at, rows: 10_000 + 1_429 + 1 });
    // An entry per currency: 3,334 payees gone, 477 of them paid in BRL too.
    expect(compared.missingPayees[0]).toBe(3_334 + 477);
    expect(compared.changedAmounts[0]).toBe(3_333 + 1);
    expect((compared.changedAmounts[1] as ChangedAmount[])[0]).toEqual({
      name: 'Huge Ltd',
      currency: 'USD',
      previous: '11805916207174113034.24',
      current: '11805916207174113134.24',
      change: '+100.00',
    });
  });

  it('reads the batches it is given, page by page, pausing between two pages', async () => {
    const events: string[] = [];
    const store = {
      paidBatches: async () => {
        throw new Error('the batches were given: the register is not asked again');
      },
      async *batchPayouts(digest: string) {
        for (let i = 0; i < 3; i++) {
          events.push(`${digest} page ${i}`);
          yield [{ payee: `p-${i}`, name: `P ${i}`, reference: `R-${i}`, amount: '1.00', currency: 'USD' }];
        }
      },
    };
    const [comparison, ...more] = await sinceCandidates(store, {
      batches: [{ digest: 'october', sheet: 'october.csv', at: BATCH.at, rows: null }],
      pause: async () => {
        events.push('pause');
      },
    });
    expect(more).toEqual([]);
    expect(events).toEqual(['october page 0', 'pause', 'october page 1', 'pause', 'october page 2', 'pause']);
    const since = plain(await comparison!.finish());
    expect(since.batch).toEqual({ sheet: 'october.csv', at: BATCH.at, rows: 3 });
    expect(since.missingPayees.map((p: { name: string }) => p.name)).toEqual(['P 0', 'P 1', 'P 2']);
  });
});

describe('ListedPayees', () => {
  const fields = ['name', 'lastReference', 'amount', 'currency'] as const;
  const listOf = (entries: ReturnType<typeof entry>[]) => {
    const list = new ListedPayees<ReturnType<typeof entry>>(fields);
    for (const e of entries) list.push(e);
    return list;
  };
  const entry = (i: number) => ({
    name: `Payee "${i}"\u0000\n`,
    lastReference: `PAY-${i}`,
    amount: `${i}.00`,
    currency: 'USD',
  });

  it('reads like the array it was given: count, any slice, each in turn, JSON', () => {
    const entries = Array.from({ length: 5_000 }, (_, i) => entry(i));
    const list = listOf(entries);
    expect(list.length).toBe(5_000);
    expect([...list]).toEqual(entries);
    for (const [start, end] of [
      [0, 3],
      [0, 50],
      [2_040, 2_060],
      [4_095, 4_097],
      [4_990, 6_000],
      [-3, undefined],
      [10, 5],
      [0, 5_000],
    ] as const) {
      expect(list.slice(start, end)).toEqual(entries.slice(start, end));
    }
    expect(JSON.parse(JSON.stringify({ list }))).toEqual({ list: entries });
    expect(listOf([]).slice(0, 3)).toEqual([]);
    expect(JSON.stringify(listOf([]))).toBe('[]');
  });

  it('keeps the first entries it is told to and counts the rest, which no JSON can then claim to hold', () => {
    const entries = Array.from({ length: 120 }, (_, i) => entry(i));
    const list = new ListedPayees<(typeof entries)[number]>(fields, 50);
    for (const e of entries.slice(0, 100)) list.push(e);
    expect(list.full).toBe(true);
    for (let i = 0; i < 20; i++) list.skip();
    expect(list.length).toBe(120);
    expect(list.slice(0, 3)).toEqual(entries.slice(0, 3));
    expect(list.slice(0, 120)).toEqual(entries.slice(0, 50));
    expect([...list]).toEqual(entries.slice(0, 50));
    expect(() => JSON.stringify(list)).toThrow('a list of 120 payees kept only its first 50');
    const there = ListedPayees.from(structuredClone(list));
    expect(there.length).toBe(120);
    there.push(entry(200));
    expect(there.length).toBe(121);
    expect([...there]).toEqual(entries.slice(0, 50));
  });

  it('crosses to another thread as text, and reads the same there', () => {
    const entries = Array.from({ length: 4_100 }, (_, i) => entry(i));
    const since: SincePrevious = {
      batch: BATCH,
      totals: {},
      missingPayees: listOf(entries),
      changedAmounts: new ListedPayees<ChangedAmount>(['name', 'currency', 'previous', 'current', 'change']),
    };
    const cloned = structuredClone(since);
    // Two chunks of text and the few entries after them: no object per entry.
    expect(
      Object.values(cloned.missingPayees)
        .flat()
        .filter((part) => typeof part === 'object'),
    ).toHaveLength(4);
    const there = sinceFrom(cloned)!;
    expect(there.missingPayees.slice(0, 3)).toEqual(entries.slice(0, 3));
    expect([...there.missingPayees]).toEqual(entries);
    expect(there.changedAmounts.length).toBe(0);
    expect(sinceFrom(null)).toBeNull();
  });
});
