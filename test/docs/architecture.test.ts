/**
 * docs/architecture.md is where a newcomer finds "where does X live": every folder of src/ has
 * its row in its table, so a folder added without a word there fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('docs/architecture.md', () => {
  it('has a row for every folder of src/, and none for a folder that is gone', () => {
    const text = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const rows = [...text.matchAll(/^\| `src\/([a-z-]+)` \|/gm)].map((m) => m[1]).sort();
    const folders = readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(rows).toEqual(folders);
  });
});
