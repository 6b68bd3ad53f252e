import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MALFORMED_CASES } from '../fixtures/malformed/index.js';
import { runCli, withTempDir } from '../helpers/cli.js';

// Every malformed input gives exit 2 or per-row errors with a clear
// message, never a stack trace, never a partial results file.
describe('payouts validate on the malformed corpus', () => {
  it('has at least 25 cases', () => {
    expect(MALFORMED_CASES.length).toBeGreaterThanOrEqual(25);
  });

  for (const c of MALFORMED_CASES) {
    it(`${c.name}: ${c.expect === 'exit2' ? 'exit 2, no results file' : 'exit 1, errors on rows'}`, async () => {
      await withTempDir(async (dir) => {
        const input = await c.make(dir);
        const before = (await readdir(dir)).sort();
        const out = path.join(dir, `results${path.extname(input) === '.xlsx' ? '.xlsx' : '.csv'}`);
        // The messages are read as a person reads them: text logs (JSON is the default without a terminal).
        const result = await runCli(['validate', input, '--out', out, '--log-format', 'text']);
        expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
        expect(result.stderr).not.toContain('internal error');
        if (c.boundedStderr) expect(result.stderr.length).toBeLessThan(4000);
        if (c.expect === 'exit2') {
          expect(result.code).toBe(2);
          expect(result.stderr).toContain(path.basename(input));
          expect(result.stderr).toMatch(c.message);
          expect((await readdir(dir)).sort()).toEqual(before);
        } else {
          expect(result.code).toBe(1);
          const written = await readFile(out);
          expect(written.length).toBeGreaterThan(0);
          expect(`${result.stderr}\n${written.toString('utf8')}`).toMatch(c.message);
        }
      });
    });
  }
});
