/**
 * The comparison with the previous batch holds a fixed few bytes per payee paid then: a
 * marketplace paying a million sellers a month compares two million-payout batches in a run
 * that must stay under 300 MB. Held by the heap after a full collection, not by a timing.
 */
import { createHash } from 'node:crypto';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { type EarlierPayout, SincePreviousComparison } from '../../src/batch/since-previous.js';

// A full collection on demand, without starting node with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** What this thread's isolate holds: its heap and the typed arrays' memory outside it. */
function held(): number {
  gc();
  gc();
  const heap = getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

/** A payee key as a register makes it: an HMAC in 32 characters of base64url. */
const keyOf = (batch: string, i: number) =>
  createHash('sha256').update(`${batch}:${i}`).digest('base64url').slice(0, 32);

/**
 * A comparison of a batch that paid `payees` payees once in each of `currencies`, with a sheet
 * that pays them all again.
 */
async function compared(
  batch: string,
  payees: number,
  currencies: string[],
): Promise<SincePreviousComparison> {
  const PAGE = 4000;
  async function* pages(): AsyncIterable<EarlierPayout[]> {
    for (let first = 0; first < payees; first += PAGE) {
      const page: EarlierPayout[] = [];
      for (let i = first; i < Math.min(payees, first + PAGE); i++) {
        for (const currency of currencies) {
          page.push({
            payee: keyOf(batch, i),
            name: `Seller ${i}`,
            reference: `${batch}-${i}-${currency}`,
            minor: 1_000n,
            currency,
          });
        }
      }
      yield page;
    }
  }
  const comparison = await SincePreviousComparison.read(
    { sheet: `${batch}.csv`, at: '2026-10-25T09:00:00.000Z', rows: payees },
    pages,
    batch,
  );
  for (let i = 0; i < payees; i++)
    for (const currency of currencies)
      comparison.add(keyOf(batch, i), i % 3 === 0 ? 1_250n : 1_000n, currency);
  return comparison;
}

/** What this thread holds while it holds a comparison of `payees` payees. */
async function heldWith(batch: string, payees: number, currencies = ['USD']): Promise<number> {
  const comparison = await compared(batch, payees, currencies);
  const bytes = held();
  // Still held while measured.
  expect(comparison.needsPayees).toBe(true);
  return bytes;
}

it('holds a few bytes per payee of the previous batch, however many', async () => {
  const small = await heldWith('small', 20_000);
  const large = await heldWith('large', 200_000);
  const perPayee = (large - small) / 180_000;
  // 25 bytes in typed arrays and an index slot of 4, at most 80% full: some 30 bytes. A Map
  // entry, an object and two Maps per payee (with its name and last reference) held some 680.
  expect(perPayee, `${perPayee.toFixed(1)} bytes a payee`).toBeLessThan(40);
});

it('holds tens of bytes more per further currency of a payee, not Maps of its own', async () => {
  const currencies = ['USD', 'MXN', 'BRL'];
  const small = await heldWith('small-3', 20_000, currencies);
  const large = await heldWith('large-3', 200_000, currencies);
  const perPayee = (large - small) / 180_000;
  // Two further currencies, 22 bytes each in typed arrays and an index slot: 86 bytes measured.
  // As a Map of two Maps per payee it was 618.
  expect(perPayee, `${perPayee.toFixed(1)} bytes a payee`).toBeLessThan(120);
});
