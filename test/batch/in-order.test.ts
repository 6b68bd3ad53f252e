/** The in-order window of run's results (batch/run/in-order.ts) and the spool it feeds (result-spool.ts). */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InOrder } from '../../src/batch/run/in-order.js';
import { type ResultSpool, ResultSpoolWriter } from '../../src/batch/run/result-spool.js';
import type { SentRow } from '../../src/batch/run/results.js';

describe('InOrder', () => {
  it('hands rows on in the order they were taken, as soon as every row before them finished', () => {
    const out: string[] = [];
    const window = new InOrder<string>(8, (seq, value) => out.push(`${seq}:${value}`));
    const [a, b, c] = [window.take(0), window.take(2), window.take(5)];
    window.settle(c, 'c');
    window.settle(b, 'b');
    expect(out).toEqual([]);
    expect(window.size).toBe(3);
    window.settle(a, 'a');
    expect(out).toEqual(['0:a', '2:b', '5:c']);
    expect(window.size).toBe(0);
  });

  it('makes the feeder wait while full, until the first row finishes', async () => {
    const window = new InOrder<number>(2, () => {});
    const first = window.take(0);
    window.take(1);
    let roomy = false;
    const waiting = window
      .room(() => false)
      .then(() => {
        roomy = true;
      });
    await Promise.resolve();
    expect(roomy).toBe(false);
    window.settle(first, 0);
    await waiting;
    expect(roomy).toBe(true);
    expect(window.size).toBe(1);
  });

  it('lets the feeder go when told to give up (a stop), though rows never finish', async () => {
    const window = new InOrder<number>(1, () => {});
    window.take(0);
    let stopped = false;
    const waiting = window.room(() => stopped);
    stopped = true;
    window.nudge();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('at the end hands on, in order, the rows that finished behind one that never will', () => {
    const out: number[] = [];
    const window = new InOrder<number>(8, (seq) => out.push(seq));
    window.take(0);
    const b = window.take(1);
    window.take(2);
    const d = window.take(3);
    window.settle(d, 3);
    window.settle(b, 1);
    expect(out).toEqual([]);
    window.close();
    expect(out).toEqual([1, 3]);
  });

  it('stays in order over many rows finishing in any order', () => {
    const out: number[] = [];
    const window = new InOrder<number>(5000, (seq) => out.push(seq));
    const places = Array.from({ length: 3000 }, (_, i) => window.take(i * 2));
    // Finished in reverse within blocks of 7: a deterministic shuffle.
    for (let start = 0; start < places.length; start += 7) {
      for (let i = Math.min(start + 6, places.length - 1); i >= start; i--) window.settle(places[i]!, i);
    }
    expect(out).toEqual(places.map((p) => p.seq));
    expect(window.size).toBe(0);
  });
});

describe('ResultSpool', () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const sent = (rowNumber: number, extra: Partial<SentRow> = {}): SentRow => ({
    status: 'submitted',
    errors: [],
    rowNumber,
    transactionId: `tx-${rowNumber}`,
    ...extra,
  });

  it('reads back every result as written, private to its owner', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'payouts-spool-'));
    const writer = await ResultSpoolWriter.create(path.join(dir, 'results.jsonl'));
    writer.add(0, 'A-1', sent(2, { beneficiaryId: 'b', recipientId: 'r', simulationId: 's' }));
    writer.add(3, 'A-4', {
      status: 'skipped',
      errors: ['already paid: ...'],
      rowNumber: 5,
      fromRegister: true,
    });
    writer.add(4, 'A-5', { status: 'skipped', errors: ['held'], rowNumber: 6, held: true });
    const spool = await writer.seal();
    expect((await stat(spool.file)).mode & 0o777).toBe(0o600);
    const rows = [];
    for await (const row of spool.rows()) rows.push(row);
    expect(rows).toEqual([
      {
        seq: 0,
        reference: 'A-1',
        row: { ...sent(2), beneficiaryId: 'b', recipientId: 'r', simulationId: 's' },
      },
      {
        seq: 3,
        reference: 'A-4',
        row: { status: 'skipped', errors: ['already paid: ...'], rowNumber: 5, fromRegister: true },
      },
      { seq: 4, reference: 'A-5', row: { status: 'skipped', errors: ['held'], rowNumber: 6, held: true } },
    ]);
  });

  it('refuses a result out of sheet order', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'payouts-spool-'));
    const writer = await ResultSpoolWriter.create(path.join(dir, 'results.jsonl'));
    writer.add(4, 'A', sent(6));
    expect(() => writer.add(4, 'B', sent(6))).toThrow('out of sheet order (4 after 4)');
    await writer.abandon();
  });

  it('rewrites the results a chunk at a time with what became known later', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'payouts-spool-'));
    const writer = await ResultSpoolWriter.create(path.join(dir, 'results.jsonl'));
    for (let seq = 0; seq < 2500; seq++) writer.add(seq, `R-${seq}`, sent(seq + 2));
    const spool: ResultSpool = await writer.seal();
    const sizes: number[] = [];
    await spool.rewrite(1000, async (chunk) => {
      sizes.push(chunk.length);
      for (const { row, seq } of chunk) if (seq % 2 === 0) row.status = 'completed';
    });
    expect(sizes).toEqual([1000, 1000, 500]);
    const statuses = [];
    for await (const { row } of spool.rows()) statuses.push(row.status);
    expect(statuses.filter((s) => s === 'completed')).toHaveLength(1250);
    expect(statuses[1]).toBe('submitted');
    expect(await readFile(`${spool.file}.next`).catch(() => 'gone')).toBe('gone');
  });
});
