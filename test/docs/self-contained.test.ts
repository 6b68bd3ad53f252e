/**
 * The repository explains itself: no file it holds names a document it does not hold. A rule
 * is cited by a section of docs/service.md, docs/api-assumptions.md, the README or another page
 * of docs/, which whoever clones the project can follow.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** What is scanned: every tracked file under these folders, and these files. */
const SCANNED = [
  'src',
  'docs',
  'bench',
  'test',
  'scripts',
  'templates',
  'samples',
  'README.md',
  'Dockerfile',
  'package.json',
];

/** The outside documents, built here so that this file does not name them itself. */
const FORBIDDEN = [...['PRODUCT', 'SPEC', 'STYLE'].map((name) => `${name}.md`), ['..', 'shared'].join('/')];

/** Files git tracks or would (not ignored); without git, every file but ignored output folders. */
function scannedFiles(): string[] {
  try {
    const listed = execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...SCANNED],
      { cwd: root, encoding: 'utf8' },
    );
    return listed.split('\0').filter((file) => file !== '' && existsSync(path.join(root, file)));
  } catch {
    return SCANNED.flatMap((entry) => walk(entry));
  }
}

function walk(relative: string): string[] {
  const full = path.join(root, relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full, { withFileTypes: true })
    .filter((d) => !d.name.startsWith('.') && !['node_modules', 'dist', 'out'].includes(d.name))
    .flatMap((d) => walk(path.posix.join(relative, d.name)));
}

/** The forbidden names a file holds, whatever their case (bytes read as latin1: any file). */
function namesIn(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'latin1').toLowerCase();
  return FORBIDDEN.filter((name) => text.includes(name.toLowerCase()));
}

describe('a repository that explains itself', () => {
  const files = scannedFiles();

  it('scans the sources, docs and tests', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/service.md');
    expect(files).toContain('test/docs/self-contained.test.ts');
    expect(files.length).toBeGreaterThan(100);
  });

  it('names no document outside the repository', () => {
    const offending = files
      .map((file) => ({ file, names: namesIn(file) }))
      .filter(({ names }) => names.length > 0);
    expect(offending).toEqual([]);
  });
});
