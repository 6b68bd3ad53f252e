/**
 * Which scope an offline command (`validate`, `status`) reads when it cannot ask the service
 * who we are: the service from `--base-url` (or PAYOUTS_BASE_URL), the integrator the
 * dashboard user last ran as, else the scope used most recently.
 */
import type { ScopeInfo } from './types.js';

export interface ScopeHint {
  /** The service's origin, when a base URL was given. */
  service?: string;
  /** The dashboard user (PAYOUTS_USERNAME), when given. */
  login?: string;
}

/** The scope to read, or why there is none. `scopes` come most recently used first. */
export function chooseScope(
  scopes: readonly ScopeInfo[],
  hint: ScopeHint,
): { scope: ScopeInfo } | { scope?: undefined; why: string } {
  let candidates = scopes;
  if (hint.service !== undefined) {
    candidates = candidates.filter((s) => s.service === hint.service);
    if (candidates.length === 0) return { why: `the register has no payouts for ${hint.service} yet` };
  } else if (new Set(candidates.map((s) => s.service)).size > 1) {
    const services = [...new Set(candidates.map((s) => s.service))].join(', ');
    return {
      why: `the register holds payouts of several services (${services}): pass --base-url (or set PAYOUTS_BASE_URL) to check against one`,
    };
  }
  if (hint.login !== undefined) {
    const mine = candidates.filter((s) => s.login === hint.login);
    if (mine.length > 0) candidates = mine;
  }
  const scope = candidates[0];
  return scope ? { scope } : { why: 'the register is empty' };
}
