/**
 * The deadline layer, the last before undici: each attempt gets one deadline for the whole of it
 * (connect, headers and the complete body; undici's own timeouts measure silence, which a
 * dribbling answer never gives), and is cut when its caller gives up or a stopped run's grace
 * is over. It says why an attempt was cut: each of these may have taken effect (retry.ts).
 */
import type { Timers } from '../../clock.js';
import { LinkedAbort } from '../abort.js';
import { ABANDONED_CODE, type Call, DEADLINE_CODE, type Layer, type NoAnswer } from '../http.js';

export interface DeadlineSettings {
  deadlineMs: number;
  /** Aborted when a stopped run's grace is over: every attempt still under way is cut. */
  abandonSignal: AbortSignal | undefined;
  /** Node's timers unless a test brings its own (client.ts `timers`). */
  timers?: Timers;
}

/** One deadline per attempt, and the cause of a cut. */
export function deadlineLayer(settings: DeadlineSettings): Layer {
  const { deadlineMs, abandonSignal, timers } = settings;
  return (next) => async (call) => {
    const cut = new LinkedAbort([call.options.signal, abandonSignal], deadlineMs, timers);
    call.cut = cut.signal;
    try {
      const attempt = await next(call);
      if (attempt.kind === 'network') attempt.code = whyCut(call, attempt, cut, abandonSignal);
      return attempt;
    } finally {
      call.cut = undefined;
      cut.dispose();
    }
  };
}

/** The error code of an attempt without an answer: the cut's cause when it was cut. */
function whyCut(
  call: Call,
  attempt: NoAnswer,
  cut: LinkedAbort,
  abandonSignal: AbortSignal | undefined,
): string {
  if (call.options.signal?.aborted) return 'ABORTED';
  if (abandonSignal?.aborted) return ABANDONED_CODE;
  if (cut.timedOut) return DEADLINE_CODE;
  return attempt.code;
}
