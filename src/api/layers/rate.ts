/**
 * The rate layer: every attempt waits for its turn under `--rate` (rate.ts), token requests
 * included, since the identity endpoint's client has this layer too. A 429's wait, decided by
 * the retry layer above, pauses every request here rather than this one alone (as octokit
 * plugin-throttling does).
 */
import type { Clock, Sleep } from '../../clock.js';
import { type ApiLogger, type Call, type Layer, stopped, waitFor } from '../http.js';
import type { RateLimiter } from '../rate.js';

export interface RateSettings {
  /** Without one, nothing waits but a 429's own wait. */
  limiter: RateLimiter | undefined;
  clock: Clock;
  sleep: Sleep;
  logger: ApiLogger | undefined;
}

/** Waits for the rate limiter's turn; applies a pending 429 pause first. */
export function rateLayer(settings: RateSettings): Layer {
  const { limiter } = settings;
  return (next) => async (call) => {
    if (call.throttle !== undefined) await pauseAll(call, settings);
    if (limiter) await waitFor(call, () => limiter.acquire(call.waits));
    else if (call.waits.aborted) throw stopped(call);
    return next(call);
  };
}

/** A 429 pauses every request, not just this one; without a limiter, this request waits alone. */
async function pauseAll(call: Call, settings: RateSettings): Promise<void> {
  const { waitMs, requestId } = call.throttle!;
  call.throttle = undefined;
  const { limiter } = settings;
  settings.logger?.warn(
    {
      method: call.options.method,
      path: call.options.path,
      requestId,
      retryAfterMs: waitMs,
      rate: limiter?.currentRate,
    },
    'service throttled - pausing all requests',
  );
  if (limiter) {
    limiter.throttled();
    limiter.pause(settings.clock.now() + waitMs);
  } else {
    await waitFor(call, () => settings.sleep(waitMs, call.waits));
  }
}
