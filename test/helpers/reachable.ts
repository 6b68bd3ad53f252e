/**
 * The compiled command and node, where another user can run them. A test that runs payouts as
 * an unprivileged user (to meet a folder it cannot write) needs that user to reach `dist/`,
 * `node_modules/` and the node binary; a clone in a private folder (root's home, `mktemp -d`)
 * and Node 24 from root's npx cache are not reachable. Then they are linked (hard links: instant
 * on one file system, else copied) into a temporary folder every user can reach, removed when
 * the test ends; otherwise the originals are used as they are.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { CLI_ENTRY } from './payouts.js';

/** A program to run: node, and the command's entry point. */
export interface Program {
  node: string;
  entry: string;
}

const root = path.resolve(import.meta.dirname, '../..');

/** Whether every folder above `file` lets others through (mode o+x). */
function reachableByOthers(file: string): boolean {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (dir === path.dirname(dir)) return true;
  }
}

/** Links (or copies) `from` to `to`, recursively. */
function link(from: string, to: string): void {
  try {
    execFileSync('cp', ['-al', from, to], { stdio: 'ignore' });
  } catch {
    execFileSync('cp', ['-a', from, to], { stdio: 'ignore' });
  }
}

/** The command and node as another user can run them. */
export function reachableProgram(): Program {
  const original = { node: process.execPath, entry: CLI_ENTRY };
  if (reachableByOthers(original.node) && reachableByOthers(original.entry)) return original;
  const dir = mkdtempSync(path.join(tmpdir(), 'payouts-program-'));
  chmodSync(dir, 0o755);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const part of ['dist', 'node_modules', 'package.json'])
    link(path.join(root, part), path.join(dir, part));
  const node = path.join(dir, 'node');
  link(process.execPath, node);
  return { node, entry: path.join(dir, path.relative(root, CLI_ENTRY)) };
}
