/**
 * The structure holds (docs/architecture.md): no two files of src/ import each other round a
 * circle, nor do two folders, and production code loads the simulator only for a rehearsal.
 * Type imports count: a circle of types is a circle of ideas.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

/** Each file's relative imports (static and dynamic), as paths of files under src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...[...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => m[1]!),
      ...[...text.matchAll(/import\('(\.[^']+)'\)/g)].map((m) => m[1]!),
    ];
    graph.set(
      path.relative(root, file),
      specifiers.map((s) => path.relative(root, path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts')))),
    );
  }
  return graph;
}

/** Strongly connected components of more than one node: the circles (Tarjan). */
function circles(nodes: readonly string[], next: (node: string) => readonly string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

describe('the import structure of src/', () => {
  const graph = importGraph();
  const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : file);

  it('has no file circle', () => {
    expect(circles([...graph.keys()], (f) => (graph.get(f) ?? []).filter((d) => graph.has(d)))).toEqual([]);
  });

  it('has no folder circle', () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, deps] of graph) {
      const from = folderOf(file);
      for (const dep of deps) {
        const to = folderOf(dep);
        if (to !== from && graph.has(dep)) folders.set(from, (folders.get(from) ?? new Set()).add(to));
      }
    }
    expect(circles([...folders.keys()], (f) => [...(folders.get(f) ?? [])])).toEqual([]);
  });

  it('loads the simulator only from the sandbox command and a rehearsal', () => {
    const users = [...graph]
      .filter(([file, deps]) => !file.startsWith('sandbox/') && deps.some((d) => d.startsWith('sandbox/')))
      .map(([file]) => file)
      .sort();
    expect(users).toEqual(['cli/commands/run.ts', 'cli/commands/sandbox.ts', 'cli/sandbox-flags.ts']);
  });
});
