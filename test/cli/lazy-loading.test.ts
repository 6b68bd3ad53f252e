/**
 * What a command loads before it needs it (docs/architecture.md "The command line"): main.ts
 * loads no command until yargs parses one, and validate's module, loaded, reaches neither the
 * HTTP client, the simulator nor exceljs; those load inside the code that uses them. Read from
 * the static imports of src/ (type imports load nothing; `import()` loads when it runs).
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

/** Each file's static imports that load at run time: files of src/ and packages by name. */
function loads(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)\s(?!type\s)[^;]*?from\s+'([^']+)'/gms)].map(
      (m) => m[1]!,
    );
    const bare = [...text.matchAll(/^import\s+'([^']+)'/gm)].map((m) => m[1]!);
    graph.set(
      path.relative(root, file),
      [...specifiers, ...bare].map((s) =>
        s.startsWith('.')
          ? path.relative(root, path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts')))
          : s,
      ),
    );
  }
  return graph;
}

function closure(start: string, graph: Map<string, string[]>): Set<string> {
  const seen = new Set<string>();
  const visit = (node: string) => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const next of graph.get(node) ?? []) visit(next);
  };
  visit(start);
  return seen;
}

const HEAVY = (name: string) =>
  name === 'api/http.ts' ||
  name === 'api/client.ts' ||
  name.startsWith('sandbox/') ||
  name === 'exceljs' ||
  name === 'undici';

describe('lazy loading', () => {
  const graph = loads();

  it('main.ts loads no command module and nothing heavy', () => {
    const loaded = [...closure('cli/main.ts', graph)];
    expect(loaded.filter((f) => f.startsWith('cli/commands/'))).toEqual([]);
    expect(loaded.filter(HEAVY)).toEqual([]);
  });

  it('validate loads neither the HTTP client, the simulator nor exceljs', () => {
    expect([...closure('cli/commands/validate.ts', graph)].filter(HEAVY)).toEqual([]);
  });

  it('sees a heavy module where one is loaded (template writes XLSX templates with exceljs)', () => {
    expect([...closure('cli/commands/template.ts', graph)]).toContain('exceljs');
  });

  it('run loads the HTTP client, and the simulator only for a rehearsal', () => {
    const loaded = [...closure('cli/commands/run.ts', graph)];
    expect(loaded).toContain('api/client.ts');
    expect(loaded.filter((f) => f.startsWith('sandbox/'))).toEqual([]);
  });
});
