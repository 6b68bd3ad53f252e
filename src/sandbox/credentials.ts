/** The sandbox credentials (README "The sandbox", docs/sandbox.md "Credentials"). */
export const SANDBOX_CREDENTIALS = {
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-secret',
  username: 'integrator@example.com',
  password: 'sandbox-password',
  /** A second integrator, for ownership checks (403). */
  otherUsername: 'other@example.com',
  otherPassword: 'sandbox-password',
} as const;

/** Fixed integrator ids, so examples and tests can name them. */
export const SANDBOX_INTEGRATOR_IDS = {
  primary: '11111111-1111-4111-8111-111111111111',
  other: '22222222-2222-4222-8222-222222222222',
} as const;

/** The integrators the sandbox starts with, one per sandbox user. */
export const SANDBOX_USERS = [
  {
    username: SANDBOX_CREDENTIALS.username,
    password: SANDBOX_CREDENTIALS.password,
    integratorId: SANDBOX_INTEGRATOR_IDS.primary,
    name: 'Sandbox Integrator',
  },
  {
    username: SANDBOX_CREDENTIALS.otherUsername,
    password: SANDBOX_CREDENTIALS.otherPassword,
    integratorId: SANDBOX_INTEGRATOR_IDS.other,
    name: 'Other Sandbox Integrator',
  },
] as const;
