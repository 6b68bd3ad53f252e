import { describe, expect, it } from 'vitest';
import { openSandboxStore } from '../../src/sandbox/store.js';
import { RecordTable } from '../../src/sandbox/table.js';

interface Payment {
  id: string;
  reference: string;
  status: string;
}

/** A table that holds two records per generation: the fifth record added is read from the store. */
function payments(): RecordTable<Payment> {
  return new RecordTable<Payment>(openSandboxStore(), {
    name: 'payments',
    columns: { reference: (p) => p.reference, status: (p) => p.status },
    indexes: [['reference']],
    recent: 2,
  });
}

function addPayments(table: RecordTable<Payment>, count: number): Payment[] {
  const added: Payment[] = [];
  for (let n = 1; n <= count; n += 1) {
    const payment = { id: `p${n}`, reference: `INV-${n % 3}`, status: 'PENDING' };
    table.add(payment.id, payment);
    added.push(payment);
  }
  return added;
}

describe('RecordTable', () => {
  it('gives back every record added, those that left memory read from the store', () => {
    const table = payments();
    const added = addPayments(table, 9);
    expect(table.size).toBe(9);
    for (const payment of added) expect(table.get(payment.id)).toEqual(payment);
    expect(table.get('p1')).not.toBe(added[0]);
    expect(table.get('p10')).toBeUndefined();
  });

  it('keeps a replaced record in its place, in memory or not', () => {
    const table = payments();
    addPayments(table, 7);
    table.replace('p1', { id: 'p1', reference: 'INV-1', status: 'COMPLETED' });
    table.replace('p7', { id: 'p7', reference: 'INV-1', status: 'FAILED' });
    expect(table.size).toBe(7);
    expect([...table.values()].map((p) => `${p.id}:${p.status}`)).toEqual([
      'p1:COMPLETED',
      'p2:PENDING',
      'p3:PENDING',
      'p4:PENDING',
      'p5:PENDING',
      'p6:PENDING',
      'p7:FAILED',
    ]);
    expect(table.get('p1')?.status).toBe('COMPLETED');
  });

  it('selects by its columns, records still in memory included, newest first when asked', () => {
    const table = payments();
    addPayments(table, 7);
    table.replace('p4', { id: 'p4', reference: 'INV-1', status: 'FAILED' });
    const ids = (rows: Iterable<Payment>) => [...rows].map((p) => p.id);
    expect(ids(table.rows('reference = ?', ['INV-1']))).toEqual(['p1', 'p4', 'p7']);
    expect(ids(table.rows('reference = ? AND status <> ?', ['INV-1', 'FAILED'], true))).toEqual(['p7', 'p1']);
  });
});
