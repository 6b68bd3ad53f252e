/**
 * `payouts status --csv` lists the recent runs with the approvers each relied on (README
 * "Commands", docs/register.md "`payouts status`"), in a last column so that the columns before
 * it keep their places for scripts that read them by position.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it, onTestFinished } from 'vitest';
import { APPROVERS_SEPARATOR } from '../../src/cli/commands/status.js';
import { openRegister } from '../../src/register/open.js';
import { runCli } from '../helpers/cli.js';

const RUN_COLUMNS =
  'startedAt,state,sheet,rows,statuses,exitCode,finishedAt,digest,runId,host,pid,service,integratorId';

describe('payouts status --csv', () => {
  it('names the approvers a run relied on in a last column, approvals', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'payouts-status-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'register.db');
    const register = await openRegister(file, { create: true });
    try {
      const store = await register.openScope({ service: 'https://pay.example', integratorId: 'int-1' });
      const at = '2026-11-26T10:00:00.000Z';
      await store.beginRun({
        id: 'run-approved',
        sheet: 'november.csv',
        digest: 'd'.repeat(64),
        host: 'h',
        pid: 1,
        startedAt: at,
      });
      await store.recordRunApprovals('run-approved', [
        {
          principal: 'alice@example.com',
          fingerprint: 'SHA256:alice',
          statementDigest: 's1',
          recordedAt: at,
        },
        { principal: 'bob@example.com', fingerprint: 'SHA256:bob', statementDigest: 's2', recordedAt: at },
      ]);
      await store.finishRun('run-approved', { rows: 2, statuses: { submitted: 2 }, exitCode: 0 });
      await store.beginRun({
        id: 'run-plain',
        sheet: 'october.csv',
        digest: 'e'.repeat(64),
        host: 'h',
        pid: 1,
        startedAt: '2026-10-26T10:00:00.000Z',
      });
      await store.finishRun('run-plain', { rows: 1, statuses: { submitted: 1 }, exitCode: 0 });
    } finally {
      await register.close();
    }

    const listed = await runCli(['status', '--csv', '--register', file], { env: {} });
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = parse(listed.stdout) as string[][];
    expect(header!.join(',')).toBe(`${RUN_COLUMNS},approvals`);
    const byRun = new Map(rows.map((row) => [row[header!.indexOf('runId')], row]));
    const approved = byRun.get('run-approved')!;
    expect(approved[header!.indexOf('sheet')]).toBe('november.csv');
    expect(approved.at(-1)).toBe('alice@example.com,bob@example.com');
    expect(approved.at(-1)!.split(APPROVERS_SEPARATOR)).toEqual(['alice@example.com', 'bob@example.com']);
    expect(byRun.get('run-plain')!.at(-1)).toBe('');
    // The text listing and --json said so already: the same approvers.
    const json = await runCli(['status', '--json', '--register', file], { env: {} });
    const runs = (
      JSON.parse(json.stdout) as { runs: { runId: string; approvals: { principal: string }[] }[] }
    ).runs;
    expect(runs.find((r) => r.runId === 'run-approved')!.approvals.map((a) => a.principal)).toEqual([
      'alice@example.com',
      'bob@example.com',
    ]);
  });
});
