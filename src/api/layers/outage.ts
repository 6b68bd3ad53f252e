/**
 * The outage layer: an attempt is sent only when the circuit breaker (breaker.ts) lets it, and
 * tells the breaker how it went: no answer, a 5xx and a 429 count against the service. The
 * breaker's word on where the outage stands goes up with the attempt, for the retry layer. A 429
 * asking to wait longer than `--max-outage` is an outage already: the breaker gives up at once.
 */
import type { Clock } from '../../clock.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { CircuitBreaker } from '../breaker.js';
import { HEADERS } from '../contract.js';
import { type Answer, type Call, header, type Layer, verdictOf, waitFor } from '../http.js';
import { parseRetryAfter } from '../retry.js';

export interface OutageSettings {
  /** Shared by every client of one service: an outage stops them all. */
  breaker: CircuitBreaker;
  clock: Clock;
}

/** Admission by the breaker before the attempt, its verdict after. */
export function outageLayer(settings: OutageSettings): Layer {
  const { breaker } = settings;
  return (next) => async (call) => {
    const ticket = await waitFor(call, () => breaker.admit(call.waits));
    const attempt = await next(call);
    attempt.outage = breaker.record(ticket, verdictOf(attempt));
    if (attempt.kind === 'response' && attempt.status === 429) refuseLongWait(call, attempt, settings);
    return attempt;
  };
}

/** A 429's Retry-After past `--max-outage`: nothing is sent until it passes, so the run stops. */
function refuseLongWait(call: Call, answer: Answer, settings: OutageSettings): void {
  const { breaker } = settings;
  const retryAfterMs = parseRetryAfter(header(answer.headers, HEADERS.retryAfter), settings.clock.now());
  if (retryAfterMs === undefined || retryAfterMs <= breaker.maxOutageMs) return;
  const seconds = Math.ceil(retryAfterMs / 1000);
  const reason = `the service answered 429 Too Many Requests asking to wait ${seconds} s, longer than --max-outage (${Math.round(breaker.maxOutageMs / 1000)} s) - run again later to resume`;
  breaker.giveUp(reason);
  throw new ServiceUnavailableError(`${call.options.method} ${call.options.path} was not sent: ${reason}`, {
    inDoubt: call.inDoubt,
    reason,
    requestId: header(answer.headers, HEADERS.requestId),
  });
}
