/**
 * docs/architecture.md is where a newcomer finds "where does X live": every folder of src/ has
 * its row in its table, a folder inside one is named in its row, and each stage of the run has
 * its file named, so a folder or a stage added without a word there fails here.
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

  it("names each folder inside a folder of src/ in that folder's row", () => {
    const text = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const missing: string[] = [];
    for (const top of readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })) {
      if (!top.isDirectory()) continue;
      const row = text.match(new RegExp(`^\\| \`src/${top.name}\` \\|.*$`, 'm'))?.[0] ?? '';
      for (const inner of readdirSync(path.join(ROOT, 'src', top.name), { withFileTypes: true })) {
        if (inner.isDirectory() && !row.includes(`\`${inner.name}/`))
          missing.push(`${top.name}/${inner.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("names every file of the run's stages", () => {
    const text = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const files = readdirSync(path.join(ROOT, 'src/batch/run')).filter((name) => name.endsWith('.ts'));
    expect(files.filter((name) => !text.includes(`\`${name}\``))).toEqual([]);
  });
});
