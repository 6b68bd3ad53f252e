/**
 * A deadline on something the receiver waits for (the register's commit, its readiness): past
 * it the receiver answers without it, so nothing a service or a probe waits on hangs with a
 * register that stalls.
 */
import type { Cancel, Timers } from '../../clock.js';

/** The rejection of a promise that took longer than its deadline. */
export const DEADLINE = Symbol('deadline');

/** `promise`, or a rejection with DEADLINE once `ms` have passed on `timers` first. */
export function withDeadline<T>(promise: Promise<T>, ms: number, timers: Timers): Promise<T> {
  let cancel: Cancel | undefined;
  const late = new Promise<never>((_, reject) => {
    cancel = timers.once(ms, () => reject(DEADLINE));
  });
  return Promise.race([promise, late]).finally(() => cancel?.());
}
