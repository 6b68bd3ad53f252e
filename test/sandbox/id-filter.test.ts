import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdFilter } from '../../src/sandbox/id-filter.js';

describe('IdFilter', () => {
  it('knows every id added, across its layers, and few that were not', () => {
    const filter = new IdFilter();
    const added = Array.from({ length: 300_000 }, (_, n) => `${randomUUID()}\u0000key-${n}`);
    for (const id of added) filter.add(id);
    expect(added.filter((id) => !filter.mayHave(id))).toEqual([]);
    const absent = Array.from({ length: 100_000 }, () => randomUUID());
    const wrong = absent.filter((id) => filter.mayHave(id)).length;
    expect(wrong / absent.length).toBeLessThan(0.01);
  });

  it('says no for any id while empty', () => {
    expect(new IdFilter().mayHave('')).toBe(false);
    expect(new IdFilter().mayHave(randomUUID())).toBe(false);
  });
});
