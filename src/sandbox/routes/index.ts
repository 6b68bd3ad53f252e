import type { Route } from '../router.js';
import { beneficiaryRoutes } from './beneficiaries.js';
import { integratorRoutes } from './integrators.js';
import { ledgerRoutes } from './ledger.js';
import { recipientRoutes } from './recipients.js';
import { simulationRoutes } from './simulations.js';
import { tokenRoutes } from './token.js';
import { transactionRoutes } from './transactions.js';

/** Every route of the sandbox. */
export const ROUTES: readonly Route[] = [
  ...tokenRoutes,
  ...integratorRoutes,
  ...beneficiaryRoutes,
  ...recipientRoutes,
  ...simulationRoutes,
  ...transactionRoutes,
  ...ledgerRoutes,
];
