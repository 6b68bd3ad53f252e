/**
 * The variables payouts reads are one table (src/environment.ts): the docs' table says the same,
 * row for row, so a variable added to the code and not to the docs (or the reverse) fails here.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '../../src/environment.js';

const DOC = path.resolve(import.meta.dirname, '../../docs/configuration.md');

describe('docs/configuration.md', () => {
  it('lists every variable payouts reads, with what it sets, in the order of the code', async () => {
    const text = await readFile(DOC, 'utf8');
    const rows = [...text.matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => ({
      name: m[1],
      means: m[2],
    }));
    expect(rows).toEqual(VARIABLES.map(({ name, means }) => ({ name, means })));
  });
});
