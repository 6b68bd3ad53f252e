/**
 * Validation of a POST /v1/beneficiaries body. The service does not show the beneficiary body
 * or its messages; the body assumed is BeneficiaryRequest of src/api/contract.ts, and the
 * messages (BENEFICIARY_MESSAGES) are ours, phrased like the service's validation messages. Used
 * by the sheet pipeline for rows that create a beneficiary and by the sandbox; never throws.
 */
import { BENEFICIARY_TYPES } from '../api/contract.js';
import { isCountryCode } from './countries.js';
import { BENEFICIARY_MESSAGES } from './messages.js';
import type { ValidationIssue } from './types.js';

/** Loose on purpose: one "@", something on both sides, a dot in the domain, no spaces. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Every message that applies to a beneficiary body, with the field it is about. */
export function validateBeneficiary(body: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const beneficiary: Record<string, unknown> =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};

  const type = beneficiary['type'];
  if (typeof type !== 'string' || !(BENEFICIARY_TYPES as readonly string[]).includes(type)) {
    issues.push({ path: 'type', message: BENEFICIARY_MESSAGES.typeRequired });
  }
  const name = beneficiary['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    issues.push({ path: 'name', message: BENEFICIARY_MESSAGES.nameRequired });
  }
  // Optional: absent, null or blank is fine; anything else must look like an address.
  const email = beneficiary['email'];
  const emailGiven =
    email !== undefined && email !== null && !(typeof email === 'string' && email.trim() === '');
  if (emailGiven && !(typeof email === 'string' && EMAIL_PATTERN.test(email))) {
    issues.push({ path: 'email', message: BENEFICIARY_MESSAGES.emailInvalid });
  }
  const country = beneficiary['country'];
  if (typeof country !== 'string' || !isCountryCode(country)) {
    issues.push({ path: 'country', message: BENEFICIARY_MESSAGES.countryRequired });
  }
  return issues;
}
