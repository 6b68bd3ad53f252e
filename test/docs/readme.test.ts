/**
 * The README is the front door: its commands table is scanned, not read, so no cell runs past
 * 40 words (the detail is in docs/commands.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('the README', () => {
  it('has a commands table a person scans: every cell at most 40 words', () => {
    const table = README.slice(README.indexOf('## Commands'), README.indexOf('### Options'));
    const rows = table.split('\n').filter((line) => line.startsWith('| `payouts'));
    expect(rows.length).toBeGreaterThanOrEqual(10);
    const words = rows.flatMap((row) =>
      row
        .replaceAll('\\|', '/')
        .split('|')
        .slice(1, -1)
        .map((cell) => ({ cell: cell.trim().slice(0, 40), words: cell.trim().split(/\s+/).length })),
    );
    expect(words.filter((w) => w.words > 40)).toEqual([]);
  });
});
