import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type PayoutsClient } from '../../src/api/client.js';
import { encryptWebhookSecret, PATHS, TOKEN_PATH } from '../../src/api/contract.js';
import { isIdempotencyConflict, isSimulationExpired, isSimulationUsed } from '../../src/api/transactions.js';
import { ConfigError, type ServiceError } from '../../src/errors.js';
import { fakeTime } from './helpers/fake-time.js';
import {
  fail,
  type Handler,
  json,
  noContent,
  ok,
  script,
  startServer,
  type TestServer,
  tokenEndpoint,
} from './helpers/server.js';

const CREDENTIALS = {
  clientId: 'client-abc',
  clientSecret: 'cs-very-secret-123',
  username: 'integrator@example.com',
  password: 'pw-very-secret-456',
};

const INTEGRATOR = {
  id: 'int-1',
  name: 'Acme',
  email: 'a@example.com',
  webhookUrl: null,
  termsAcceptedAt: null,
};
const TX = {
  id: 'tx-1',
  simulationId: 'sim-1',
  recipientId: 'rcp-1',
  beneficiaryId: 'ben-1',
  amount: '10.00',
  currency: 'USD',
  status: 'PENDING',
  reference: 'INV-1',
  failureReason: null,
};

let server: TestServer | undefined;
let client: PayoutsClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function connect(
  routes: Record<string, Handler>,
): Promise<{ client: PayoutsClient; server: TestServer }> {
  server = await startServer({ [TOKEN_PATH]: tokenEndpoint, ...routes });
  const time = fakeTime();
  client = createClient({
    baseUrl: server.url,
    authUrl: server.url,
    credentials: CREDENTIALS,
    rate: 500,
    concurrency: 4,
    logger: pino({ level: 'silent' }),
    clock: time.clock,
    sleep: time.sleep,
  });
  return { client, server };
}

function bodyOf(s: TestServer, path: string, i = 0): unknown {
  const r = s.received.filter((x) => x.path === path)[i];
  return r?.body ? JSON.parse(r.body) : undefined;
}

describe('createClient', () => {
  it('refuses plain http to a remote host and missing credentials (ConfigError, exit 2)', () => {
    expect(() =>
      createClient({
        baseUrl: 'http://api.example.com',
        authUrl: 'https://auth.example.com',
        credentials: CREDENTIALS,
      }),
    ).toThrow(ConfigError);
    expect(() =>
      createClient({
        baseUrl: 'https://api.example.com',
        authUrl: 'http://auth.example.com',
        credentials: CREDENTIALS,
      }),
    ).toThrow(/--auth-url/);
    const err = (() => {
      try {
        createClient({ baseUrl: 'https://a.example.com', authUrl: 'https://b.example.com', credentials: {} });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err?.exitCode).toBe(2);
  });
});

describe('integrators', () => {
  it('me, webhook URL get and set', async () => {
    const { client, server } = await connect({
      [PATHS.integratorMe]: ok(INTEGRATOR),
      [PATHS.webhooks('int-1')]: ({ req, res, body }) =>
        req.method === 'PATCH'
          ? json(res, 200, JSON.parse(body))
          : json(res, 200, { url: 'https://hooks.example.com/a' }),
    });
    expect((await client.integrators.me()).id).toBe('int-1');
    expect(await client.integrators.getWebhookUrl('int-1')).toBe('https://hooks.example.com/a');
    expect(await client.integrators.setWebhookUrl('int-1', 'https://hooks.example.com/b')).toBe(
      'https://hooks.example.com/b',
    );
    expect(bodyOf(server, PATHS.webhooks('int-1'), 1)).toEqual({ url: 'https://hooks.example.com/b' });
  });

  it('PATCH webhooks answered 204 resolves with the URL sent', async () => {
    const { client } = await connect({ [PATHS.webhooks('int-1')]: noContent });
    expect(await client.integrators.setWebhookUrl('int-1', 'https://h.example.com')).toBe(
      'https://h.example.com',
    );
  });

  it('fetches and decrypts the webhook secret with the client secret', async () => {
    const { client } = await connect({
      [PATHS.webhookSecret('int-1')]: ok(encryptWebhookSecret('whsec-42', CREDENTIALS.clientSecret)),
    });
    expect(await client.integrators.fetchWebhookSecret('int-1')).toBe('whsec-42');
  });

  it('a secret encrypted with another client secret is a ConfigError, not garbage', async () => {
    const { client } = await connect({
      [PATHS.webhookSecret('int-1')]: ok(encryptWebhookSecret('whsec-42', 'another-secret')),
    });
    const err = await client.integrators.fetchWebhookSecret('int-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain(CREDENTIALS.clientSecret);
  });

  it('rotates the secret: from the answer, or fetched when the answer has no body', async () => {
    const { client, server } = await connect({
      [PATHS.updateWebhookSecret('int-1')]: script(ok({ webhookSecret: 'whsec-new' }), noContent),
      [PATHS.webhookSecret('int-1')]: ok(encryptWebhookSecret('whsec-newer', CREDENTIALS.clientSecret)),
    });
    expect(await client.integrators.rotateWebhookSecret('int-1')).toBe('whsec-new');
    expect(await client.integrators.rotateWebhookSecret('int-1')).toBe('whsec-newer');
    expect(server.count(PATHS.webhookSecret('int-1'))).toBe(1);
  });
});

describe('beneficiaries, recipients, simulations, terms', () => {
  it('beneficiary create, get, delete', async () => {
    const ben = { id: 'ben-1', type: 'INDIVIDUAL', name: 'Ana', country: 'US', integratorId: 'int-1' };
    const { client, server } = await connect({
      [PATHS.beneficiaries]: ok(ben, 201),
      [PATHS.beneficiary('ben-1')]: ({ req, res }) =>
        req.method === 'DELETE' ? res.writeHead(204).end() : json(res, 200, ben),
    });
    const created = await client.beneficiaries.create(
      { type: 'INDIVIDUAL', name: 'Ana', country: 'US' },
      { idempotencyKey: 'bk' },
    );
    expect(created.id).toBe('ben-1');
    expect(server.received.find((r) => r.path === PATHS.beneficiaries)?.headers['idempotency-key']).toBe(
      'bk',
    );
    expect((await client.beneficiaries.get('ben-1')).name).toBe('Ana');
    await client.beneficiaries.delete('ben-1');
    expect(server.received.map((r) => r.method)).toEqual(['POST', 'POST', 'GET', 'DELETE']);
  });

  it('a recipient refused with a validation message of the service keeps it word for word', async () => {
    const message = 'The field recipient.individualName or recipient.businessName is required';
    const { client } = await connect({ [PATHS.recipients]: fail(400, message) });
    const err = (await client.recipients.create({ type: 'ACH' }).catch((e: unknown) => e)) as ServiceError;
    expect(err.serviceMessage).toBe(message);
    expect(err.status).toBe(400);
  });

  it('recipient update is a PUT retried on 503 (safe to repeat)', async () => {
    const { client, server } = await connect({
      [PATHS.recipient('rcp-1')]: script(fail(503), ok({ id: 'rcp-1' })),
    });
    expect((await client.recipients.update('rcp-1', { nickname: 'n' })).id).toBe('rcp-1');
    expect(server.received.filter((r) => r.path === PATHS.recipient('rcp-1')).map((r) => r.method)).toEqual([
      'PUT',
      'PUT',
    ]);
  });

  it('recipient creation without a key is not retried on 503', async () => {
    const { client, server } = await connect({
      [PATHS.recipients]: script(fail(503), ok({ id: 'rcp-1' }, 201)),
    });
    await expect(client.recipients.create({ type: 'ACH' })).rejects.toMatchObject({ status: 503 });
    expect(server.count(PATHS.recipients)).toBe(1);
  });

  it('simulation create is retried on 503 (a quote moves no money)', async () => {
    const { client, server } = await connect({
      [PATHS.simulations]: script(fail(503), ok({ id: 'sim-1', expiresAt: '2025-01-01T00:10:00Z' })),
    });
    const sim = await client.simulations.create({ recipientId: 'rcp-1', amount: '10.00', currency: 'USD' });
    expect(sim.id).toBe('sim-1');
    expect(server.count(PATHS.simulations)).toBe(2);
    expect(bodyOf(server, PATHS.simulations)).toEqual({
      recipientId: 'rcp-1',
      amount: '10.00',
      currency: 'USD',
    });
  });

  it('terms accept answers 204', async () => {
    const { client, server } = await connect({
      [PATHS.termsAndConditions('int-1')]: noContent,
    });
    await expect(client.terms.accept('int-1')).resolves.toBeUndefined();
    expect(server.count(PATHS.termsAndConditions('int-1'))).toBe(1);
  });
});

describe('transactions', () => {
  it('create sends the Idempotency-Key and reports a replayed answer', async () => {
    const { client, server } = await connect({
      [PATHS.transactions]: script(ok(TX, 201), ok(TX, 200, { 'idempotent-replayed': 'true' })),
    });
    const first = await client.transactions.create(
      { simulationId: 'sim-1', reference: 'INV-1' },
      { idempotencyKey: 'ik-1' },
    );
    expect(first).toMatchObject({ transaction: { id: 'tx-1', status: 'PENDING' }, replayed: false });
    const again = await client.transactions.create(
      { simulationId: 'sim-1', reference: 'INV-1' },
      { idempotencyKey: 'ik-1' },
    );
    expect(again.replayed).toBe(true);
    expect(
      server.received.filter((r) => r.path === PATHS.transactions).map((r) => r.headers['idempotency-key']),
    ).toEqual(['ik-1', 'ik-1']);
  });

  it('create without a key is refused before anything is sent', async () => {
    const { client, server } = await connect({ [PATHS.transactions]: ok(TX, 201) });
    // @ts-expect-error: the key is required by the type as well
    await expect(client.transactions.create({ simulationId: 'sim-1' }, {})).rejects.toThrow(/idempotencyKey/);
    expect(server.count(PATHS.transactions)).toBe(0);
  });

  it('an unknown transaction status is an unexpected answer', async () => {
    const { client } = await connect({ [PATHS.transaction('tx-1')]: ok({ ...TX, status: 'WEIRD' }) });
    await expect(client.transactions.get('tx-1')).rejects.toMatchObject({
      status: 200,
      serviceMessage: /status/,
    });
  });

  it('classifies the 422s the runner acts on', async () => {
    const { client } = await connect({
      [PATHS.transactions]: script(
        fail(422, 'Simulation has expired at 2025-01-01T00:10:00Z'),
        fail(422, 'Simulation has already been used by transaction tx-0'),
        fail(422, 'Idempotency-Key has already been used with a different request'),
        fail(422, 'Insufficient funds'),
      ),
    });
    const send = () =>
      client.transactions.create({ simulationId: 's' }, { idempotencyKey: 'k' }).catch((e: unknown) => e);
    const [expired, used, conflict, other] = [await send(), await send(), await send(), await send()];
    expect([isSimulationExpired(expired), isSimulationUsed(expired), isIdempotencyConflict(expired)]).toEqual(
      [true, false, false],
    );
    expect([isSimulationExpired(used), isSimulationUsed(used)]).toEqual([false, true]);
    expect(isIdempotencyConflict(conflict)).toBe(true);
    expect([isSimulationExpired(other), isSimulationUsed(other), isIdempotencyConflict(other)]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('get reads the status check', async () => {
    const { client } = await connect({ [PATHS.transaction('tx-1')]: ok({ ...TX, status: 'COMPLETED' }) });
    expect((await client.transactions.get('tx-1')).status).toBe('COMPLETED');
  });
});
