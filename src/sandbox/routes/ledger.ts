import { SANDBOX_LEDGER_PATH } from '../../api/contract.js';
import type { Route, Sandbox } from '../router.js';
import type { SandboxLedger } from '../state.js';

/** GET /_sandbox/ledger (docs/sandbox.md "Ledger"): no token, no faults. */
export const ledgerRoutes: Route[] = [
  {
    method: 'GET',
    pattern: SANDBOX_LEDGER_PATH,
    auth: false,
    handler: (_r, sandbox) => ({ status: 200, body: ledgerView(sandbox) }),
  },
];

/** The ledger over the live records. */
export function ledgerView(sandbox: Sandbox): SandboxLedger {
  return sandbox.state.view(sandbox.webhooks.deliveries, sandbox.webhooks.eventsWithoutUrl);
}
