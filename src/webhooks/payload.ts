/**
 * The webhook payload (docs/service.md "Webhook payload") as payouts reads it: strict on the
 * fields it acts on (operation, resourceId, success), lenient on the rest, unknown fields kept.
 */
import { z } from 'zod';
import type { WebhookPayload } from '../api/contract.js';

/** The webhook payload. `message` and `data` may be absent (read as null and {}). */
export const WebhookPayloadSchema = z.looseObject({
  operation: z.string().min(1),
  resourceId: z.string().min(1),
  createdAt: z.string(),
  integratorId: z.string(),
  beneficiaryId: z.string().nullable().optional(),
  message: z.string().nullable().default(null),
  success: z.boolean(),
  data: z.record(z.string(), z.unknown()).default({}),
});

export type ParsedPayload = { ok: true; payload: WebhookPayload } | { ok: false; problem: string };

/** Parses a raw request body into a payload, or says what is wrong with it. */
export function parseWebhookBody(raw: Buffer | string): ParsedPayload {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, problem: 'the body is not JSON' };
  }
  return toWebhookPayload(value);
}

/** Checks an already parsed JSON value against the webhook payload's shape. */
export function toWebhookPayload(value: unknown): ParsedPayload {
  const parsed = WebhookPayloadSchema.safeParse(value);
  if (parsed.success) return { ok: true, payload: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
  return { ok: false, problem: `not a webhook payload (${problems.join('; ')})` };
}

/**
 * What identifies a duplicate delivery: the pair resourceId + operation (docs/service.md "Webhook
 * delivery").
 */
export function eventKey(payload: Pick<WebhookPayload, 'resourceId' | 'operation'>): string {
  return JSON.stringify([payload.resourceId, payload.operation]);
}
