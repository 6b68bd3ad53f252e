import { randomBytes } from 'node:crypto';
import {
  encryptWebhookSecret,
  PATHS,
  type WebhookSecretBody,
  type WebhookUrlBody,
} from '../../api/contract.js';
import { callbackUrlProblem } from '../../webhooks/callback-url.js';
import { SANDBOX_CREDENTIALS } from '../credentials.js';
import { HttpError, type Reply } from '../errors.js';
import { type AuthedRequest, jsonObject, PARAM, param, type Route, type Sandbox } from '../router.js';
import { forbidden, type IntegratorRecord, notFound, publicIntegrator } from '../state.js';
import { isoWithOffset } from '../time.js';

/** Integrator routes (docs/service.md "Resources and calls", "Webhook secret"). */
export const integratorRoutes: Route[] = [
  {
    method: 'GET',
    pattern: PATHS.integratorMe,
    auth: true,
    handler: (r) => ok(publicIntegrator(r.integrator)),
  },
  { method: 'GET', pattern: PATHS.webhooks(PARAM), auth: true, handler: getWebhookUrl },
  { method: 'PATCH', pattern: PATHS.webhooks(PARAM), auth: true, handler: setWebhookUrl },
  { method: 'POST', pattern: PATHS.updateWebhookSecret(PARAM), auth: true, handler: rotateWebhookSecret },
  { method: 'GET', pattern: PATHS.webhookSecret(PARAM), auth: true, handler: getEncryptedWebhookSecret },
  { method: 'POST', pattern: PATHS.termsAndConditions(PARAM), auth: true, handler: acceptTerms },
];

/** A new webhook secret: 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return randomBytes(32).toString('base64url');
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

/** The integrator named in the path: the caller's own, else 403 (another's) or 404 (unknown). */
function pathIntegrator(request: AuthedRequest, sandbox: Sandbox): IntegratorRecord {
  const id = param(request);
  if (id === request.integrator.id) return request.integrator;
  throw sandbox.state.integrators.has(id) ? forbidden('Integrator', id) : notFound('Integrator', id);
}

function getWebhookUrl(request: AuthedRequest, sandbox: Sandbox): Reply {
  const body: WebhookUrlBody = { url: pathIntegrator(request, sandbox).webhookUrl };
  return ok(body);
}

function setWebhookUrl(request: AuthedRequest, sandbox: Sandbox): Reply {
  const integrator = pathIntegrator(request, sandbox);
  const body = jsonObject(request);
  if (!('url' in body)) throw new HttpError(400, 'The field url is required (a URL, or null to remove it)');
  const url = body['url'];
  if (url !== null && typeof url !== 'string')
    throw new HttpError(400, 'The field url must be a string or null');
  if (url !== null) {
    const problem = callbackUrlProblem(url);
    if (problem !== undefined) throw new HttpError(400, problem);
  }
  integrator.webhookUrl = url;
  const answer: WebhookUrlBody = { url };
  return ok(answer);
}

function rotateWebhookSecret(request: AuthedRequest, sandbox: Sandbox): Reply {
  const integrator = pathIntegrator(request, sandbox);
  integrator.webhookSecret = newWebhookSecret();
  const body: WebhookSecretBody = { webhookSecret: integrator.webhookSecret };
  return ok(body);
}

/**
 * The secret "in encrypted form" (docs/service.md "Webhook secret"), with the scheme of
 * contract.ts (key from the client secret).
 */
function getEncryptedWebhookSecret(request: AuthedRequest, sandbox: Sandbox): Reply {
  const integrator = pathIntegrator(request, sandbox);
  return ok(encryptWebhookSecret(integrator.webhookSecret, SANDBOX_CREDENTIALS.clientSecret));
}

function acceptTerms(request: AuthedRequest, sandbox: Sandbox): Reply {
  const integrator = pathIntegrator(request, sandbox);
  integrator.termsAcceptedAt ??= isoWithOffset(request.now);
  return { status: 204 };
}
