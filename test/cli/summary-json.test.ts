/**
 * The `--json` summary written as a stream (cli/summary.ts): the same bytes as the object
 * stringified at once, its warnings' references sent a chunk at a time.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BatchSummary } from '../../src/batch/summary.js';
import { SIGNALS, WarningTally } from '../../src/batch/warnings.js';
import { type SummaryFacts, summaryJson, writeSummaryJson } from '../../src/cli/summary.js';
import { withTempDir } from '../helpers/cli.js';
import { CLI_ENTRY } from '../helpers/payouts.js';

function factsWith(warnings: WarningTally): SummaryFacts {
  const summary = new BatchSummary();
  summary.count('valid');
  return {
    command: 'run',
    sheetPath: 'payouts "november".csv',
    format: 'csv',
    summary,
    digest: 'a'.repeat(64),
    resultsPath: 'payouts.results.csv',
    registerPath: null,
    unknownColumns: [],
    samples: [],
    warnings,
    sincePrevious: null,
  };
}

async function streamed(facts: SummaryFacts, extra?: Record<string, unknown>): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => {
    text += d.toString('utf8');
  });
  await writeSummaryJson(out, facts, extra);
  return text;
}

describe('the --json summary', () => {
  it('is the whole object, every reference of each signal in sheet order, across chunks', async () => {
    const warnings = new WarningTally(true);
    for (let i = 0; i < 10_000; i++) {
      const reference = `REF-"${i}"`;
      warnings.add(i + 2, reference, [
        { signal: 'newPayee', message: 'new payee' },
        ...(i % 3 === 0 ? [{ signal: 'possibleDuplicate' as const, message: 'possible duplicate' }] : []),
      ]);
    }
    const facts = factsWith(warnings);
    const extra = { runId: 'run-1', interrupted: false, exitCode: 0 };
    const text = await streamed(facts, extra);
    expect(text.endsWith('}\n')).toBe(true);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const expected = { ...summaryJson(facts), warnings: warnings.references(), ...extra };
    expect(parsed).toEqual(expected);
    // Byte for byte what stringifying the whole object at once gives.
    expect(text).toBe(`${JSON.stringify(expected)}\n`);
    expect(Object.keys(parsed)).toEqual(Object.keys(expected));
    const listed = parsed['warnings'] as Record<string, string[]>;
    expect(Object.keys(listed)).toEqual([...SIGNALS]);
    expect(listed['newPayee']).toHaveLength(10_000);
    expect(listed['newPayee']![9_999]).toBe('REF-"9999"');
    expect(listed['possibleDuplicate']).toHaveLength(3_334);
    expect(listed['unusualAmount']).toEqual([]);
  });

  it('writes empty lists for a run without warnings', async () => {
    const text = await streamed(factsWith(new WarningTally(true)));
    expect(JSON.parse(text).warnings).toEqual({
      newPayee: [],
      changedBankDetails: [],
      possibleDuplicate: [],
      unusualAmount: [],
    });
  });

  it('ends when its reader has gone: a closed output never drains', async () => {
    const warnings = new WarningTally(true);
    for (let i = 0; i < 10_000; i++)
      warnings.add(i + 2, `REF-${i}`, [{ signal: 'newPayee', message: 'new' }]);
    // As stdout piped to a reader that closed its end: every write fails with EPIPE.
    const closed = new Writable({
      highWaterMark: 16,
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    closed.on('error', () => {});
    await writeSummaryJson(closed, factsWith(warnings));
    expect(closed.destroyed).toBe(true);
  });
});

describe('payouts validate --json piped to a reader that has gone', () => {
  it('still exits with the code of its rows', async () => {
    await withTempDir(async (dir) => {
      const sheet = path.join(dir, 'mistakes.csv');
      await copyFile(path.resolve(import.meta.dirname, '../../samples/payouts-mistakes.csv'), sheet);
      const child = spawn(process.execPath, [CLI_ENTRY, 'validate', sheet, '--json', '--no-report'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      // `payouts validate --json | head -c 0`: the reader closes before anything is written.
      child.stdout.destroy();
      const [code] = (await once(child, 'exit')) as [number | null];
      // Invalid rows: 1, as when the summary could be printed (0 while the wait for it hung).
      expect(code).toBe(1);
    });
  });
});
