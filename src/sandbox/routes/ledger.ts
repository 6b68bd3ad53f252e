import { SANDBOX_LEDGER_COUNTS_PATH, SANDBOX_LEDGER_PATH } from '../../api/contract.js';
import type { Route, Sandbox } from '../router.js';
import { ledgerCounts, type SandboxLedger } from '../state.js';

/** GET /_sandbox/ledger and /_sandbox/ledger/counts (docs/sandbox.md "Ledger"): no token, no faults. */
export const ledgerRoutes: Route[] = [
  {
    method: 'GET',
    pattern: SANDBOX_LEDGER_PATH,
    auth: false,
    handler: (_r, sandbox) => ({ status: 200, body: ledgerView(sandbox) }),
  },
  {
    method: 'GET',
    pattern: SANDBOX_LEDGER_COUNTS_PATH,
    auth: false,
    handler: (_r, sandbox) => ({ status: 200, body: ledgerCounts(sandbox.state) }),
  },
];

/** The ledger over the live records. */
export function ledgerView(sandbox: Sandbox): SandboxLedger {
  return sandbox.state.view(sandbox.webhooks.deliveries, sandbox.webhooks.eventsWithoutUrl);
}
