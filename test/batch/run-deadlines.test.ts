/**
 * A cron job can trust the run when the service misbehaves: a fault proxy between payouts and
 * the sandbox stalls, dribbles, throttles for a day or answers badly, and every run ends in
 * bounded time with the exit code the README gives, its results file agreeing row by row with
 * the sandbox's ledger (no paid reference shown as not sent), and, with JSON logs, nothing but
 * JSON records on stderr. Limits are short (--max-outage 2: a request deadline of 1 s).
 * Spawned runs need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import {
  type ChildExit,
  groupBy,
  paymentsOf,
  type RunSummary,
  runAgainst,
  spawnCli,
  summaryOf,
  testSandbox,
  testSheet,
} from '../helpers/payouts.js';
import { FORWARD, type ProxiedRequest, type ProxyAction, scriptedProxy } from '../helpers/proxy.js';
import { readCsv } from '../helpers/sheets.js';

const TOKEN = '/auth/realms/service/protocol/openid-connect/token';
const isTransaction = (r: ProxiedRequest) => r.method === 'POST' && r.path === '/v1/transactions';
const outage = (seconds: number) =>
  `not sent: the service stayed unreachable or unavailable for more than ${seconds} s (--max-outage) - run again later to resume`;

/** A sandbox behind a fault proxy; `fault` decides each request once `faulty` is true. */
async function faultyService(fault: (r: ProxiedRequest) => ProxyAction | undefined, sandbox = {}) {
  const sb = await testSandbox({ latencyMs: 1, ...sandbox });
  const seen: ProxiedRequest[] = [];
  const proxy = await scriptedProxy(sb.url, (request) => {
    seen.push(request);
    return fault(request) ?? FORWARD;
  });
  return { sb, proxy, seen };
}

/** `action` for every transaction request after the first `n` (counted, not timed); the rest forwarded. */
function afterTransactions(n: number, action: ProxyAction) {
  let seen = 0;
  return {
    fault: (r: ProxiedRequest): ProxyAction | undefined => {
      if (!isTransaction(r)) return undefined;
      seen += 1;
      return seen > n ? action : undefined;
    },
    seen: () => seen,
  };
}

const RUN = ['--json', '--log-format', 'json', '--concurrency', '4', '--rate', '400'];

/** stderr of a run with JSON logs: every line a JSON record. */
function jsonRecords(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`stderr line is not JSON: ${line}`);
      }
    });
}

/**
 * The results file against the ledger: a paid reference is `submitted` with its transaction id
 * or `unknown`, never "not sent"; a row that says "not sent" was not paid.
 */
async function expectResultsTellTheTruth(sb: Awaited<ReturnType<typeof testSandbox>>, summary: RunSummary) {
  const results = await readCsv(summary.results);
  const paid = new Map(paymentsOf(sb).map((t) => [t.reference, t.id]));
  for (const row of results) {
    const reference = row['reference']!;
    const status = row['result.status'];
    const words = row['result.errors'] ?? '';
    if (paid.has(reference)) {
      expect(['submitted', 'unknown'], `${reference}: ${status} ${words}`).toContain(status);
      if (status === 'submitted') expect(row['result.transactionId']).toBe(paid.get(reference));
    } else {
      expect(['skipped', 'unknown'], `${reference}: ${status} ${words}`).toContain(status);
    }
    if (words.startsWith('not sent')) expect(paid.has(reference), reference).toBe(false);
    expect(words).not.toContain('accepted the transaction request');
  }
  return results;
}

function summaryOfExit(exit: ChildExit): RunSummary {
  return JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '{}') as RunSummary;
}

describe('slow: stalls and dribbles end within --max-outage plus one deadline', { timeout: 60_000 }, () => {
  it('transaction answers dribbled a byte a second: exit 6, paid rows unknown or submitted', async () => {
    const transactions = afterTransactions(6, { kind: 'dribble', part: 'body', everyMs: 1_000 });
    const { sb, proxy } = await faultyService(transactions.fault);
    const { sheet, rows } = await testSheet(30, 'DRIB');
    const started = Date.now();
    const exit = await spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN, '--max-outage', '2']).exited;
    const took = Date.now() - started;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.unavailable);
    // Start-up, six rows paid, then 2 s of outage plus one 1 s deadline: far below a minute.
    expect(took).toBeLessThan(15_000);
    jsonRecords(exit.stderr);
    const summary = summaryOfExit(exit);
    const results = await expectResultsTellTheTruth(sb, summary);
    expect(results).toHaveLength(rows.length);
    const byStatus = groupBy(results, (r) => r['result.status']!);
    expect(byStatus.get('submitted')?.length).toBe(6);
    expect(byStatus.get('unknown')?.length).toBeGreaterThan(0);
    for (const row of byStatus.get('unknown') ?? [])
      expect(row['result.errors']).toMatch(
        /^no complete answer to the transaction request came within the request deadline \(PAYOUTS_DEADLINE\), so it may have been paid|^an earlier attempt of the transaction request got no answer \(PAYOUTS_DEADLINE\)/,
      );
    for (const row of byStatus.get('skipped') ?? []) expect(row['result.errors']).toBe(outage(2));
  });

  it('a stalled token endpoint: exit 6 in bounded time, every row skipped with the reason', async () => {
    const { proxy, sb } = await faultyService((r) => (r.path === TOKEN ? { kind: 'stall' } : undefined));
    const { sheet, rows } = await testSheet(5, 'STALLTOKEN');
    const started = Date.now();
    const exit = await spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN, '--max-outage', '2']).exited;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.unavailable);
    expect(Date.now() - started).toBeLessThan(10_000);
    const records = jsonRecords(exit.stderr);
    expect(records.at(-1)).toMatchObject({ msg: 'run finished', exitCode: EXIT.unavailable });
    const results = await readCsv(summaryOfExit(exit).results);
    expect(results.map((r) => [r['reference'], r['result.status'], r['result.errors']])).toEqual(
      rows.map((r) => [r['reference'], 'skipped', outage(2)]),
    );
    expect(sb.ledger().requests.total).toBe(0);
  });

  it('a stalled transaction request: exit 6 in bounded time, the row in doubt unknown', async () => {
    const transactions = afterTransactions(3, { kind: 'stall', forwardFirst: true });
    const { sb, proxy } = await faultyService(transactions.fault);
    const { sheet } = await testSheet(12, 'STALLTX');
    const started = Date.now();
    const exit = await spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN, '--max-outage', '2']).exited;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.unavailable);
    expect(Date.now() - started).toBeLessThan(12_000);
    jsonRecords(exit.stderr);
    const results = await expectResultsTellTheTruth(sb, summaryOfExit(exit));
    expect(results.filter((r) => r['result.status'] === 'unknown').length).toBeGreaterThan(0);
  });
});

/**
 * Sends the run SIGTERM once `ready()` holds (or it ended), and checks the stop as the
 * README "Exit codes" gives it: exit 5 within 10 s of the signal, nothing but JSON records on
 * stderr.
 */
async function terminateWhen(run: ReturnType<typeof spawnCli>, ready: () => boolean): Promise<ChildExit> {
  while (!ready() && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  const stoppedAt = Date.now();
  run.child.kill('SIGTERM');
  const exit = await run.exited;
  expect(Date.now() - stoppedAt).toBeLessThan(10_000);
  expect(exit.code, exit.stderr.slice(-2000)).toBe(EXIT.interrupted);
  jsonRecords(exit.stderr);
  return exit;
}

describe('slow: a stop ends the run within 10 s whatever is in flight', { timeout: 60_000 }, () => {
  it('SIGTERM while transaction answers dribble: exit 5, results and summary written, dribbled rows unknown', async () => {
    const transactions = afterTransactions(4, { kind: 'dribble', part: 'body', everyMs: 1_000 });
    const { sb, proxy } = await faultyService(transactions.fault);
    const { sheet, rows } = await testSheet(20, 'TERMDRIB');
    // A long --max-outage: only the stop can end this run.
    const run = spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN, '--max-outage', '300']);
    const exit = await terminateWhen(run, () => transactions.seen() > 6);
    const summary = summaryOfExit(exit);
    expect(summary.interrupted).toBe(true);
    const results = await expectResultsTellTheTruth(sb, summary);
    expect(results).toHaveLength(rows.length);
    const unknown = results.filter((r) => r['result.status'] === 'unknown');
    expect(unknown.length).toBeGreaterThan(0);
    for (const row of unknown)
      expect(row['result.errors']).toMatch(/^the run was stopped while the transaction was being sent/);
  });

  it('SIGTERM while the token request stalls: exit 5 within 10 s, every row skipped', async () => {
    let tokenAsked = false;
    const { proxy } = await faultyService((r) => {
      if (r.path !== TOKEN) return undefined;
      tokenAsked = true;
      return { kind: 'stall' };
    });
    const { sheet, rows } = await testSheet(4, 'TERMTOKEN');
    const run = spawnCli(['run', sheet, '--base-url', proxy.url, ...RUN, '--max-outage', '300']);
    const exit = await terminateWhen(run, () => tokenAsked);
    const results = await readCsv(summaryOfExit(exit).results);
    expect(results.map((r) => r['result.status'])).toEqual(rows.map(() => 'skipped'));
  });
});

describe('slow: failures before the first transaction are outages: exit 6, results written', {
  timeout: 60_000,
}, () => {
  const TOKEN_EXPIRED = { access_token: 'x', token_type: 'Bearer', expires_in: 0 };
  it.each([
    {
      fault: 'a token that expires at once',
      action: (r: ProxiedRequest): ProxyAction | undefined =>
        r.path === TOKEN ? { kind: 'answer', status: 200, body: TOKEN_EXPIRED } : undefined,
      words:
        /^not sent: the identity endpoint could not issue a token \(POST \S+ answered 200: unexpected answer: expires_in: .+\) - run again later to resume$/,
    },
    {
      fault: 'a 429 on the token asking for a day',
      action: (r: ProxiedRequest): ProxyAction | undefined =>
        r.path === TOKEN
          ? {
              kind: 'answer',
              status: 429,
              body: { status: 429, error: 'Too Many Requests', message: 'quota' },
              headers: { 'retry-after': '86400' },
            }
          : undefined,
      words:
        /^not sent: the service answered 429 Too Many Requests asking to wait 86400 s, longer than --max-outage \(30 s\) - run again later to resume$/,
    },
    {
      fault: 'an answer to GET /v1/integrators/me larger than 16 MB',
      action: (r: ProxiedRequest): ProxyAction | undefined =>
        r.path === '/v1/integrators/me'
          ? { kind: 'answer', status: 200, text: `{"id":"${'x'.repeat(17 * 1024 * 1024)}"}` }
          : undefined,
      words:
        /^not sent: the service could not be reached or understood \(GET \/v1\/integrators\/me answered 200: the answer was larger than 16 MB and was not read\) - run again later to resume$/,
    },
    {
      fault: 'an HTML page for GET /v1/integrators/me',
      action: (r: ProxiedRequest): ProxyAction | undefined =>
        r.path === '/v1/integrators/me'
          ? { kind: 'answer', status: 200, text: '<html><body>Sign in</body></html>' }
          : undefined,
      words:
        /^not sent: the service could not be reached or understood \(GET \/v1\/integrators\/me answered 200: the answer is not JSON\) - run again later to resume$/,
    },
  ])('$fault', async ({ action, words }) => {
    const { sb, proxy } = await faultyService(action);
    const { sheet, rows } = await testSheet(3, 'BEFORE');
    const result = await runAgainst(proxy, sheet, RUN);
    expect(result.code, result.stderr).toBe(EXIT.unavailable);
    jsonRecords(result.stderr);
    const summary = summaryOf(result);
    const results = await readCsv(summary.results);
    expect(results.map((r) => r['result.status'])).toEqual(rows.map(() => 'skipped'));
    for (const row of results) expect(row['result.errors']).toMatch(words);
    expect(paymentsOf(sb)).toEqual([]);
  });

  it('https:// to a plain-http service (a TLS handshake that fails): exit 6, results written', async () => {
    const sb = await testSandbox();
    const { sheet, rows } = await testSheet(2, 'TLS');
    const result = await runAgainst({ url: sb.url.replace('http://', 'https://') }, sheet, [
      ...RUN,
      '--max-outage',
      '2',
    ]);
    expect(result.code, result.stderr).toBe(EXIT.unavailable);
    const results = await readCsv(summaryOf(result).results);
    expect(results.map((r) => r['result.status'])).toEqual(rows.map(() => 'skipped'));
    expect(results[0]!['result.errors']).toMatch(/^not sent: /);
  });
});

describe('slow: a token refresh that fails mid-run', { timeout: 60_000 }, () => {
  it('is one run error: rows it stopped are "not sent: the identity endpoint ...", paid rows submitted', async () => {
    // After five transactions the token is refused (401), as when it expires; the identity
    // endpoint then answers with a token that expires at once. Counted, not timed.
    let tokens = 0;
    let transactions = 0;
    const { sb, proxy } = await faultyService((r) => {
      if (r.path === TOKEN) {
        tokens += 1;
        return tokens > 1
          ? { kind: 'answer', status: 200, body: { access_token: 'x', token_type: 'Bearer', expires_in: 0 } }
          : undefined;
      }
      if (!isTransaction(r)) return undefined;
      transactions += 1;
      return transactions > 5
        ? {
            kind: 'answer',
            status: 401,
            body: { status: 401, error: 'Unauthorized', message: 'token expired' },
          }
        : undefined;
    });
    const { sheet } = await testSheet(40, 'REFRESH');
    const result = await runAgainst(proxy, sheet, ['--json', '--log-format', 'json', '--concurrency', '1']);
    expect(result.code, result.stderr).toBe(EXIT.unavailable);
    const records = jsonRecords(result.stderr);
    const results = await expectResultsTellTheTruth(sb, summaryOf(result));
    const statuses = new Set(results.map((r) => r['result.status']));
    expect([...statuses].sort()).toEqual(['skipped', 'submitted']);
    expect(paymentsOf(sb)).toHaveLength(5);
    for (const row of results.filter((r) => r['result.status'] === 'skipped'))
      expect(row['result.errors']).toMatch(/^not sent: the identity endpoint could not issue a token \(/);
    // One run error, not one per row.
    expect(records.filter((r) => r['level'] === 50 || r['level'] === 60).length).toBeLessThanOrEqual(1);
  });
});
