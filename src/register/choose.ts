/**
 * Which scope an offline command (`validate`, `status`) reads when it cannot ask the service
 * who we are: the service from `--base-url` (or PAYOUTS_BASE_URL), the integrator the
 * dashboard user last ran as, else the scope used most recently.
 */
import type { Register, ScopeInfo } from './types.js';

export interface ScopeHint {
  /** The service's origin, when a base URL was given. */
  service?: string;
  /** The dashboard user (PAYOUTS_USERNAME), when given. */
  login?: string;
}

/**
 * The service whose scope an offline command reads for `service`: the one the operator declared
 * it the same as (`run --same-service-as`, docs/register.md "One integrator, one history"), as
 * `run` would once it knows the integrator, else `service` itself. Offline the integrator is a
 * guess, as in chooseScope: the dashboard user's integrators first, then the most recently used;
 * the first of them the register knows under `service` (declared or with a scope) decides.
 */
export async function declaredService(
  register: Pick<Register, 'scopes' | 'origin'>,
  service: string,
  login?: string,
): Promise<string> {
  const scopes = await register.scopes();
  const mine = login === undefined ? [] : scopes.filter((s) => s.login === login);
  for (const integratorId of new Set([...mine, ...scopes].map((s) => s.integratorId))) {
    // A register an older payouts wrote, read without migrating it, holds no declarations.
    const declared = await register.origin({ service, integratorId }).catch(() => undefined);
    if (declared !== undefined) return 'sameAs' in declared ? declared.sameAs : service;
    if (scopes.some((s) => s.integratorId === integratorId && s.service === service)) return service;
  }
  return service;
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
