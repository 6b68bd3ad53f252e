import { randomUUID } from 'node:crypto';
import { PATHS, type Simulation } from '../../api/contract.js';
import { formatMinor, parseAmount } from '../../rows/money.js';
import { HttpError, type Reply, validationError } from '../errors.js';
import { quote } from '../quote.js';
import { type AuthedRequest, jsonObject, PARAM, param, type Route, type Sandbox } from '../router.js';
import { owned, type SimulationRecord } from '../state.js';
import { isoWithOffset } from '../time.js';
import { assertPayable, ownRecipient } from './recipients.js';

/**
 * Simulation routes (paths and bodies assumed in contract.ts; docs/service.md "Resources and
 * calls": success 200).
 */
export const simulationRoutes: Route[] = [
  { method: 'POST', pattern: PATHS.simulations, auth: true, handler: createSimulation },
  { method: 'GET', pattern: PATHS.simulation(PARAM), auth: true, handler: getSimulation },
];

function createSimulation(request: AuthedRequest, sandbox: Sandbox): Reply {
  const body = jsonObject(request);
  const { recipientId, amount, currency } = body;
  const problems: string[] = [];
  if (typeof recipientId !== 'string' || recipientId === '')
    problems.push('The field recipientId is required');
  const parsed = typeof amount === 'string' ? parseAmount(amount) : undefined;
  if (amount === undefined || amount === null || amount === '') {
    problems.push('The field amount is required');
  } else if (parsed === undefined || !parsed.ok) {
    problems.push(
      `The field amount must be a decimal string greater than 0 with a "." and at most 2 decimals, e.g. "1250.00" (got ${JSON.stringify(amount)})`,
    );
  }
  if (typeof currency !== 'string' || currency === '') problems.push('The field currency is required');
  if (problems.length > 0) throw validationError(problems);

  const recipient = ownRecipient(sandbox, recipientId as string, request.integrator.id);
  assertPayable(sandbox, recipient);
  const wanted = currency as string;
  if (wanted !== recipient.currency) {
    throw new HttpError(
      422,
      `Currency ${wanted} does not match currency ${recipient.currency} of recipient ${recipient.id}`,
    );
  }
  // The recipient passed validation, so its currency is its rail's and one the sandbox quotes.
  const amountMinor = parsed!.ok ? parsed!.minor : 0n;
  const terms = quote(amountMinor, wanted, request.draws.aux[0]);
  const expiresAtMs = request.now + sandbox.config.simulationTtl * 1000;
  const simulation: Simulation = {
    id: randomUUID(),
    recipientId: recipient.id,
    amount: formatMinor(amountMinor),
    currency: wanted,
    sourceAmount: terms.sourceAmount,
    sourceCurrency: 'USD',
    fxRate: terms.fxRate,
    fee: terms.fee,
    expiresAt: isoWithOffset(expiresAtMs),
    createdAt: isoWithOffset(request.now),
  };
  sandbox.state.simulations.add(simulation.id, {
    integratorId: request.integrator.id,
    simulation,
    expiresAtMs,
    transactionId: null,
  });
  return { status: 200, body: simulation };
}

/** A simulation of the caller: 404 when unknown, 403 when another's. */
export function ownSimulation(sandbox: Sandbox, id: string, integratorId: string): SimulationRecord {
  return owned(sandbox.state.simulations, 'Simulation', id, integratorId, (r) => r.integratorId);
}

function getSimulation(request: AuthedRequest, sandbox: Sandbox): Reply {
  return { status: 200, body: ownSimulation(sandbox, param(request), request.integrator.id).simulation };
}
