import type { WebhookOperation, WebhookPayload } from '../../api/contract.js';
import type { Sandbox } from '../router.js';
import { isoWithoutZone } from '../time.js';

export interface SandboxEvent {
  operation: WebhookOperation;
  integratorId: string;
  resourceId: string;
  beneficiaryId: string | null;
  success: boolean;
  message: string | null;
  data: Record<string, unknown>;
}

/**
 * Sends an event (docs/service.md "Webhook delivery") to the integrator's callback URL as it is
 * now. `duplicateDraw` is a draw of the request that caused the event, so duplicates follow the
 * seed.
 */
export function emitEvent(sandbox: Sandbox, event: SandboxEvent, duplicateDraw: number): void {
  const integrator = sandbox.state.integrators.get(event.integratorId);
  if (integrator === undefined) return;
  const payload: WebhookPayload = {
    operation: event.operation,
    resourceId: event.resourceId,
    createdAt: isoWithoutZone(sandbox.config.clock.now()),
    integratorId: event.integratorId,
    beneficiaryId: event.beneficiaryId,
    message: event.message,
    success: event.success,
    data: event.data,
  };
  sandbox.webhooks.emit(integrator.webhookUrl, payload, duplicateDraw < sandbox.config.duplicateRate);
}
