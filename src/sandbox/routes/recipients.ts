import { randomUUID } from 'node:crypto';
import type { RecipientRequest } from '../../api/contract.js';
import { PATHS, type Recipient } from '../../api/contract.js';
import { validateRecipient } from '../../rows/validate.js';
import { HttpError, type Reply, validationError } from '../errors.js';
import { type AuthedRequest, jsonObject, PARAM, param, type Route, type Sandbox } from '../router.js';
import { owned } from '../state.js';
import { isoWithOffset } from '../time.js';
import { ownBeneficiary } from './beneficiaries.js';

/** Recipient routes (paths assumed in contract.ts), validated by src/rows/validate.ts. */
export const recipientRoutes: Route[] = [
  { method: 'POST', pattern: PATHS.recipients, auth: true, handler: createRecipient },
  { method: 'GET', pattern: PATHS.recipient(PARAM), auth: true, handler: getRecipient },
  { method: 'PUT', pattern: PATHS.recipient(PARAM), auth: true, handler: updateRecipient },
];

/** The RecipientRequest fields a recipient keeps; anything else in the body is ignored. */
const RECIPIENT_FIELDS = [
  'individualName',
  'businessName',
  'countryOfIncorporation',
  'beneficiaryId',
  'integratorLevel',
  'currency',
  'type',
  'details',
  'nickname',
] as const satisfies readonly (keyof RecipientRequest)[];

/** A recipient of the caller: 404 when unknown, 403 when another's. */
export function ownRecipient(sandbox: Sandbox, id: string, integratorId: string): Recipient {
  return owned(sandbox.state.recipients, 'Recipient', id, integratorId, (r) => r.integratorId);
}

function createRecipient(request: AuthedRequest, sandbox: Sandbox): Reply {
  const fields = validRecipientRequest(request, sandbox);
  const now = isoWithOffset(request.now);
  const recipient: Recipient = {
    ...fields,
    id: randomUUID(),
    integratorId: request.integrator.id,
    createdAt: now,
    updatedAt: now,
  };
  sandbox.state.recipients.add(recipient.id, recipient);
  return { status: 201, body: recipient };
}

function getRecipient(request: AuthedRequest, sandbox: Sandbox): Reply {
  return { status: 200, body: ownRecipient(sandbox, param(request), request.integrator.id) };
}

/** PUT replaces every field of the request; id, owner and createdAt stay. */
function updateRecipient(request: AuthedRequest, sandbox: Sandbox): Reply {
  const existing = ownRecipient(sandbox, param(request), request.integrator.id);
  const fields = validRecipientRequest(request, sandbox);
  const recipient: Recipient = {
    ...fields,
    id: existing.id,
    integratorId: existing.integratorId,
    createdAt: existing.createdAt,
    updatedAt: isoWithOffset(request.now),
  };
  sandbox.state.recipients.replace(recipient.id, recipient);
  return { status: 200, body: recipient };
}

/**
 * The body as a RecipientRequest: 400 with every validation message that applies
 * (docs/service.md) when invalid, then 404 or 403 when the beneficiary is unknown (or deleted) or
 * another integrator's.
 */
function validRecipientRequest(request: AuthedRequest, sandbox: Sandbox): RecipientRequest {
  const body = jsonObject(request);
  const issues = validateRecipient(body);
  if (issues.length > 0) throw validationError(issues.map((issue) => issue.message));
  const fields: Record<string, unknown> = {};
  for (const name of RECIPIENT_FIELDS) if (body[name] !== undefined) fields[name] = body[name];
  const recipient = fields as RecipientRequest;
  if (typeof recipient.beneficiaryId === 'string') {
    ownBeneficiary(sandbox, recipient.beneficiaryId, request.integrator.id);
  }
  return recipient;
}

/** 422 when the recipient's beneficiary has been deleted since: nothing can be paid to it. */
export function assertPayable(sandbox: Sandbox, recipient: Recipient): void {
  if (typeof recipient.beneficiaryId !== 'string') return;
  const beneficiary = sandbox.state.beneficiaries.get(recipient.beneficiaryId);
  if (beneficiary !== undefined && beneficiary.deletedAt !== null) {
    throw new HttpError(
      422,
      `Beneficiary ${recipient.beneficiaryId} of recipient ${recipient.id} has been deleted - nothing can be paid to it`,
    );
  }
}
