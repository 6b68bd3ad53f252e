import { randomUUID } from 'node:crypto';
import { type Beneficiary, type BeneficiaryRequest, PATHS } from '../../api/contract.js';
import { validateBeneficiary } from '../../rows/beneficiary.js';
import { type Reply, validationError } from '../errors.js';
import { type AuthedRequest, jsonObject, PARAM, param, type Route, type Sandbox } from '../router.js';
import { type BeneficiaryRecord, notFound, owned } from '../state.js';
import { isoWithOffset } from '../time.js';
import { emitEvent } from './events.js';

/** Beneficiary routes (docs/service.md "Resources and calls"). */
export const beneficiaryRoutes: Route[] = [
  { method: 'POST', pattern: PATHS.beneficiaries, auth: true, handler: createBeneficiary },
  { method: 'GET', pattern: PATHS.beneficiary(PARAM), auth: true, handler: getBeneficiary },
  { method: 'DELETE', pattern: PATHS.beneficiary(PARAM), auth: true, handler: deleteBeneficiary },
];

/** A live beneficiary of the caller: 404 when unknown or deleted, 403 when another's. */
export function ownBeneficiary(sandbox: Sandbox, id: string, integratorId: string): BeneficiaryRecord {
  const record = owned(
    sandbox.state.beneficiaries,
    'Beneficiary',
    id,
    integratorId,
    (r) => r.beneficiary.integratorId,
  );
  if (record.deletedAt !== null) throw notFound('Beneficiary', id);
  return record;
}

function createBeneficiary(request: AuthedRequest, sandbox: Sandbox): Reply {
  const body = jsonObject(request);
  const issues = validateBeneficiary(body);
  if (issues.length > 0) throw validationError(issues.map((issue) => issue.message));
  const fields = body as unknown as BeneficiaryRequest;
  const beneficiary: Beneficiary = {
    id: randomUUID(),
    integratorId: request.integrator.id,
    type: fields.type,
    name: fields.name,
    ...(typeof fields.email === 'string' ? { email: fields.email } : {}),
    country: fields.country,
    createdAt: isoWithOffset(request.now),
  };
  sandbox.state.beneficiaries.add(beneficiary.id, { beneficiary, deletedAt: null });
  emitEvent(sandbox, beneficiaryEvent('BENEFICIARY_CREATED', beneficiary), request.draws.aux[1]);
  return { status: 201, body: beneficiary };
}

function getBeneficiary(request: AuthedRequest, sandbox: Sandbox): Reply {
  return { status: 200, body: ownBeneficiary(sandbox, param(request), request.integrator.id).beneficiary };
}

function deleteBeneficiary(request: AuthedRequest, sandbox: Sandbox): Reply {
  const record = ownBeneficiary(sandbox, param(request), request.integrator.id);
  record.deletedAt = isoWithOffset(request.now);
  sandbox.state.beneficiaries.replace(record.beneficiary.id, record);
  emitEvent(sandbox, beneficiaryEvent('BENEFICIARY_DELETED', record.beneficiary), request.draws.aux[1]);
  return { status: 204 };
}

function beneficiaryEvent(
  operation: 'BENEFICIARY_CREATED' | 'BENEFICIARY_DELETED',
  beneficiary: Beneficiary,
) {
  return {
    operation,
    integratorId: beneficiary.integratorId,
    resourceId: beneficiary.id,
    beneficiaryId: beneficiary.id,
    success: true,
    message: null,
    data: { type: beneficiary.type, name: beneficiary.name, country: beneficiary.country },
  };
}
