/**
 * The retry layer, the first a request meets: it sends the request down the path again while
 * retry.ts says so, backing off between attempts, and turns the last attempt into the caller's
 * answer or error. It keeps the in-doubt trail: once an attempt may have taken effect (no
 * answer after sending, a 5xx), every later error says so, and the run records the payout
 * `unknown` rather than `failed` (README "Never pay twice: the register").
 *
 * A 429 has its own budget and its wait is not this request's alone: the rate layer below pauses
 * every request with it (`call.throttle`). Past its own budget, a request keeps going while the
 * outage layer says the failure is everyone's: the breaker, not each request, then decides when
 * to give up.
 */
import type { Clock, Sleep } from '../../clock.js';
import { NetworkError, RateLimitError } from '../../errors.js';
import { type OutageStanding, sharesOutage } from '../breaker.js';
import { HEADERS } from '../contract.js';
import {
  ABANDONED_CODE,
  type Answer,
  type ApiLogger,
  type Attempt,
  type Call,
  type Handler,
  header,
  type NoAnswer,
  plural,
  type RetryPolicy,
  toServiceError,
  verdictOf,
  waitFor,
} from '../http.js';
import {
  classifyNetworkError,
  delayFor,
  parseRetryAfter,
  type RetryQuestion,
  shouldRetry,
} from '../retry.js';

export interface RetrySettings {
  policy: RetryPolicy;
  clock: Clock;
  sleep: Sleep;
  random: () => number;
  logger: ApiLogger | undefined;
}

/** Another pass down the path: what failed (for the log) and what the wait before it depends on. */
interface Again {
  what: { status?: number; errorCode?: string; requestId?: string | undefined; outage: boolean };
  retryAfterMs?: number | undefined;
  standing: OutageStanding | undefined;
}

/** Sends the call until an attempt succeeds or retry.ts gives up; resolves with a 2xx answer. */
export function retryLayer(settings: RetrySettings): (next: Handler) => (call: Call) => Promise<Answer> {
  return (next) => async (call) => {
    for (;;) {
      const attempt = await next(call);
      if (attempt.kind === 'network') {
        await backoff(settings, call, noAnswer(settings, call, attempt));
        continue;
      }
      if (attempt.again) continue;
      if (attempt.status >= 200 && attempt.status < 300) return attempt;
      if (attempt.status === 429) throttled(settings, call, attempt);
      else await backoff(settings, call, failedAnswer(settings, call, attempt));
    }
  };
}

/** An attempt without an answer: another pass, or the caller's NetworkError. */
function noAnswer(settings: RetrySettings, call: Call, attempt: NoAnswer): Again {
  const { method, path } = call.options;
  call.failures += 1;
  const signalled = call.options.signal?.aborted === true;
  const aborted = signalled || attempt.code === ABANDONED_CODE;
  const errorCode = signalled ? 'ABORTED' : attempt.code;
  // An abort mid-request leaves the same doubt as a reset: the service may have acted.
  const mayHaveTakenEffect = aborted || classifyNetworkError(errorCode).mayHaveTakenEffect;
  const earlier = call.inDoubt;
  if (mayHaveTakenEffect) call.inDoubt ??= errorCode;
  const question = questionOf(call, call.failures, settings.policy.maxAttempts, { errorCode });
  const again = aborted ? false : retries(question, attempt);
  if (again) return { what: { errorCode, outage: again === 'outage' }, standing: attempt.outage };
  const effect = mayHaveTakenEffect
    ? 'no answer came after the request was sent, so it may have taken effect'
    : earlier
      ? `the last attempt was not sent, but an earlier one got no answer (${earlier}), so it may have taken effect`
      : 'the request was not sent';
  throw new NetworkError(
    `${method} ${path} failed: ${effect} (${errorCode}, ${plural(call.attempts, 'attempt')})`,
    {
      method,
      path,
      attempts: call.attempts,
      errorCode,
      mayHaveTakenEffect,
      ...(mayHaveTakenEffect ? {} : { inDoubt: earlier }),
      cause: attempt.cause,
    },
  );
}

/** A 429: its wait goes to the rate layer for every request, or the caller gets a RateLimitError. */
function throttled(settings: RetrySettings, call: Call, answer: Answer): void {
  const { policy } = settings;
  call.throttles += 1;
  const requestId = header(answer.headers, HEADERS.requestId);
  const retryAfterMs = parseRetryAfter(header(answer.headers, HEADERS.retryAfter), settings.clock.now());
  const tooLong = retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs;
  const question = questionOf(call, call.throttles, policy.maxThrottledAttempts, { status: 429 });
  if (!tooLong && retries(question, answer)) {
    const waitMs = retryAfterMs ?? delayFor(call.throttles, { ...policy, random: settings.random });
    call.throttle = { waitMs, requestId };
    return;
  }
  const { method, path } = call.options;
  const why = tooLong
    ? `the service asked to wait ${Math.ceil(retryAfterMs / 1000)} s, longer than payouts waits`
    : `still throttled after ${plural(call.attempts, 'attempt')}`;
  throw new RateLimitError(`${method} ${path} answered 429 Too Many Requests: ${why}`, {
    method,
    path,
    attempts: call.attempts,
    requestId,
    retryAfterMs,
    inDoubt: call.inDoubt,
    throttled: call.throttles,
  });
}

/** Any other answer that is not a 2xx: another pass, or the caller's ServiceError. */
function failedAnswer(settings: RetrySettings, call: Call, answer: Answer): Again {
  const { status } = answer;
  call.failures += 1;
  const earlier = call.inDoubt;
  // A 5xx may come from a service that acted and then failed to answer (docs/service.md
  // "Status codes", 500).
  if (status >= 500) call.inDoubt ??= String(status);
  const requestId = header(answer.headers, HEADERS.requestId);
  const retryAfterMs = parseRetryAfter(header(answer.headers, HEADERS.retryAfter), settings.clock.now());
  const tooLong = retryAfterMs !== undefined && retryAfterMs > settings.policy.maxRetryAfterMs;
  const question = questionOf(call, call.failures, settings.policy.maxAttempts, { status });
  const again = tooLong ? false : retries(question, answer);
  if (again) {
    const what = { status, requestId, outage: again === 'outage' };
    return { what, retryAfterMs, standing: answer.outage };
  }
  const { method, path } = call.options;
  throw toServiceError(answer, { method, path, requestId, attempts: call.attempts, inDoubt: earlier });
}

/** The question retry.ts answers, for the attempt-th failure of this call's kind. */
function questionOf(
  call: Call,
  attempt: number,
  maxAttempts: number,
  what: { status?: number; errorCode?: string },
): RetryQuestion {
  return {
    method: call.options.method,
    hasIdempotencyKey: call.options.idempotencyKey !== undefined,
    safeToRepeat: call.options.safeToRepeat ?? false,
    attempt,
    maxAttempts,
    ...what,
  };
}

/**
 * Whether to try again: per retry.ts, or, past the attempt budget, while the breaker sees the
 * same failure everywhere ('outage': the breaker, not each request, decides when to give up).
 */
function retries(question: RetryQuestion, attempt: Attempt): 'retry' | 'outage' | false {
  if (shouldRetry(question)) return 'retry';
  const standing = attempt.outage;
  if (!standing || verdictOf(attempt) !== 'failure') return false;
  return shouldRetry({ ...question, attempt: 1 }) && sharesOutage(standing, question.attempt)
    ? 'outage'
    : false;
}

/** Waits before the next pass; an open circuit ends the wait (the breaker paces from then on). */
async function backoff(settings: RetrySettings, call: Call, again: Again): Promise<void> {
  const { policy } = settings;
  const { what, standing } = again;
  const attempt = call.failures;
  // Past its budget, a request kept going by an outage backs off briefly: the breaker paces it.
  const capMs = what.outage && standing ? standing.backoffCapMs : policy.capMs;
  const delayMs = delayFor(attempt, {
    ...policy,
    capMs,
    retryAfterMs: again.retryAfterMs,
    random: settings.random,
  });
  settings.logger?.warn(
    { method: call.options.method, path: call.options.path, ...what, attempt, delayMs },
    'retrying request',
  );
  const outage = standing?.ends;
  const ends = outage ? AbortSignal.any([call.waits, outage]) : call.waits;
  await waitFor(call, async () => {
    try {
      await settings.sleep(delayMs, ends);
    } catch (error) {
      if (call.waits.aborted || !outage?.aborted) throw error;
    }
  });
}
