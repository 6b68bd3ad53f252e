/**
 * `reconcile --since DATE`: a day that does not exist, or a word Date.parse happens to read as
 * some year, is a usage error (exit 2) before the service is asked, not a silent other date.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('reconcile --since', () => {
  it.each([
    '2026-02-30',
    '2026-13-01',
    '12',
    '2026',
    'last tuesday',
    '2026-11-31T10:00:00Z',
    '2026-11-01T25:00:00Z',
  ])('refuses %s: exit 2, in words', async (since) => {
    const result = await runCli(['reconcile', '--since', since, '--log-format', 'text'], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `payouts: --since ${since} is not a date: use YYYY-MM-DD (or an ISO 8601 time)`,
    );
  });

  it.each(['2026-02-28', '2026-11-01T10:00:00Z', '2026-11-01T10:00:00.250+02:00', '2026-11-01T10:00'])(
    'takes %s and goes on to the service',
    async (since) => {
      const result = await runCli(['reconcile', '--since', since, '--log-format', 'text'], { env: {} });
      expect(result.code).toBe(2);
      expect(result.stderr).not.toContain('is not a date');
      expect(result.stderr).toContain('PAYOUTS_BASE_URL');
    },
  );
});
