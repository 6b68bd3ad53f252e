/**
 * The verdicts a validate worker sends (src/batch/parallel.ts): packed as flat fields, read back
 * as the verdicts they were.
 */
import { describe, expect, it } from 'vitest';
import { VerdictPacker, verdictAt } from '../../src/batch/parallel.js';
import { type RowVerdict, VALID } from '../../src/batch/verdicts.js';

const verdicts: RowVerdict[] = [
  VALID,
  {
    status: 'invalid',
    errors: ['routingNumber must be 9 characters long', 'bankName must be provided'],
    errorColumns: [13, 14],
  },
  VALID,
  {
    status: 'skipped',
    errors: [
      'already paid: submitted on 2026-11-24T08:09:46Z from sheet april.csv as transaction tx-0, so it was not sent again',
    ],
    errorColumns: [],
    recipientId: 'rcp-1',
    transactionId: 'tx-0',
  },
  { status: 'valid', errors: [], errorColumns: [], beneficiaryId: 'ben-7', recipientId: 'rcp-7' },
  { status: 'invalid', errors: ['a message with; a semicolon\nand a line break'], errorColumns: [0] },
  // Any code units travel as they are, a lone surrogate too, and a long message.
  {
    status: 'failed',
    errors: ['\ud800 \u0000 \uffff', 'x'.repeat(70_000)],
    errorColumns: [70_000],
    transactionId: 'tx\u{1f600}',
  },
];

describe('the verdicts of a validate worker', () => {
  it('are read back from their packing as they were, VALID as the shared VALID', () => {
    const packer = new VerdictPacker(8);
    for (const [i, verdict] of verdicts.entries()) packer.add(i + 2, verdict);
    expect(packer.notValid).toBe(5);
    expect(packer.full).toBe(false);
    const batch = structuredClone(packer.take());
    expect([...batch.rowNumbers]).toEqual([2, 3, 4, 5, 6, 7, 8]);
    const read = verdicts.map((_, i) => verdictAt(batch, i));
    expect(read).toEqual(verdicts);
    expect(read[0]).toBe(VALID);
    expect(read[2]).toBe(VALID);
    // Absent ids stay absent: the results file writes '' for them either way, XLSX notes too.
    expect(Object.keys(read[1]!)).toEqual(['status', 'errors', 'errorColumns']);
    // The packer starts afresh after a batch is taken.
    expect(packer.rows).toBe(0);
    packer.add(9, verdicts[1]!);
    expect(verdictAt(packer.take(), 0)).toEqual(verdicts[1]);
  });

  it('fill up at their capacity', () => {
    const packer = new VerdictPacker(2);
    packer.add(2, VALID);
    packer.add(3, VALID);
    expect(packer.full).toBe(true);
    const batch = packer.take();
    expect(batch.rowNumbers).toHaveLength(2);
    expect(batch.text).toBe('');
  });
});
