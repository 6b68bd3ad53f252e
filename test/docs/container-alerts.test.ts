/**
 * docs/container.md's alert rules are the ones a reader copies: promtool, which Prometheus'
 * operators check their rule files with, accepts them as they are written there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testDir } from '../helpers/payouts.js';

const DOC = path.resolve(import.meta.dirname, '../../docs/container.md');

describe.skipIf(!existsSync('/usr/bin/promtool'))("docs/container.md's alert rules", () => {
  it('pass promtool check rules, and alert on the age of the last success', async () => {
    const text = await readFile(DOC, 'utf8');
    const rules = /```yaml\n(groups:\n[\s\S]*?)```/.exec(text)?.[1];
    expect(rules).toContain('time() - payouts_last_success_timestamp_seconds');
    const file = path.join(await testDir(), 'payouts-rules.yml');
    await writeFile(file, rules!);
    expect(execFileSync('promtool', ['check', 'rules', file], { encoding: 'utf8' })).toContain('SUCCESS');
  });
});
