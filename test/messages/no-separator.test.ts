import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Every piece of text written in a string or template literal of a file, with its line. */
function literalsOf(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// docs/sheets.md "The results file": messages are joined with "; " in result.errors, and no message
// of payouts' own contains it, so a script can split on it. Every message is built from
// literals in src/, so a scan of every literal covers every builder, the formula messages of the
// XLSX reader included. The one literal allowed is the separator itself.
describe('messages of payouts', () => {
  it('never contain "; " (the separator of result.errors)', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      for (const literal of literalsOf(file, await readFile(file, 'utf8'))) {
        if (literal.text !== '; ' && literal.text.includes('; ')) {
          offenders.push(`${path.relative(SRC, file)}:${literal.line}: ${literal.text.slice(0, 100)}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('finds the separator in a literal of a sample, as a check of the scan itself', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample is TypeScript source.
    const sample = "const a = `cell ${x} holds a formula; open it`; const b = 'x; y'; const c = '; ';";
    expect(
      literalsOf('sample.ts', sample).filter((l) => l.text.includes('; ') && l.text !== '; '),
    ).toHaveLength(2);
  });
});
