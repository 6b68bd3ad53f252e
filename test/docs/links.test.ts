/**
 * The front door holds together: every link in README.md and docs/ resolves inside the
 * repository (a file, or a heading of it), and nothing points outside it (no sibling folder).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe('links of README.md and docs/', () => {
  it.each(pages)('%s links only to what the repository holds', (page) => {
    const text = readFileSync(path.join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^https?:|^mailto:/.test(target!)) {
        broken.push(`${target} (outside the repository)`);
        continue;
      }
      const [file, anchor] = target!.split('#');
      const resolved =
        file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file!);
      if (!resolved.startsWith(root) || !existsSync(resolved)) broken.push(target!);
      else if (anchor && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor)) broken.push(target!);
    }
    expect(broken).toEqual([]);
    expect(text).not.toContain(['..', 'shared', ''].join('/'));
  });

  it('keeps the README a front door (at most 350 lines)', () => {
    expect(readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(350);
  });
});
