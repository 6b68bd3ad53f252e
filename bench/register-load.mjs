// One process of `npm run bench -- shared` (b): claims the references LOAD-0 .. LOAD-(n-1) of a
// PostgreSQL register as `payouts run` does (claims of 64, the register's verdict, run's
// decision), records the intent to send for each it was handed, and prints its counts as JSON.
// Usage: node bench/register-load.mjs URL N INDEX (N = 0: only open, which migrates the schema).
import { holderAlive, markLive, newSelf } from '../dist/register/lease.js';
import { openRegister } from '../dist/register/open.js';
import { claimDecision, registerVerdict } from '../dist/register/verdict.js';

const [url, n, index] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const register = await openRegister(url);
const counts = { claims: 0, intents: 0 };
if (n > 0) {
  const store = await register.openScope({ service: 'http://127.0.0.1:1', integratorId: 'bench' });
  const self = newSelf();
  await store.beginRun({
    id: self.runId,
    sheet: `load-${index}.csv`,
    digest: 'd',
    host: self.host,
    pid: self.pid,
    machine: self.machine,
    processStart: self.processStart,
    startedAt: new Date().toISOString(),
  });
  markLive(self.runId, true);
  // Each process starts at another point of the list, then goes round: they meet on every chunk.
  const start = Math.floor((n / 8) * index);
  const order = Array.from({ length: n }, (_, i) => `LOAD-${(start + i) % n}`);
  const details = {
    amount: '10.00',
    currency: 'USD',
    rail: 'ACH',
    payee: 'p',
    payeeHint: 'account ****1234',
  };
  for (let i = 0; i < n; i += 64) {
    const requests = order
      .slice(i, i + 64)
      .map((reference) => ({ reference, details, idempotencyKey: `key-${reference}` }));
    const mine = [];
    await store.claim(self.runId, requests, (request, record) => {
      const verdict = registerVerdict(record, request.details, {
        holderAlive: holderAlive(record?.run, self),
        retryUnknown: false,
      });
      const decision = claimDecision(verdict, record);
      if (decision === 'claim') mine.push(request.reference);
      return decision;
    });
    counts.claims += mine.length;
    await Promise.all(
      mine.map((reference) =>
        store.update(self.runId, reference, { state: 'sending', simulationId: `sim-${reference}` }),
      ),
    );
    counts.intents += mine.length;
  }
  await store.finishRun(self.runId, { rows: counts.claims });
}
await register.close();
process.stdout.write(`${JSON.stringify(counts)}\n`);
