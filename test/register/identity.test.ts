import { describe, expect, it } from 'vitest';
import { creationKey, serviceOf, transactionKey } from '../../src/register/identity.js';

const prod = { service: 'https://api.pay.example', integratorId: 'int-1' };

describe('transactionKey', () => {
  it('depends on the service, the integrator and the reference only', () => {
    const key = transactionKey(prod, 'INV-1');
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // Whatever sheet the reference arrives in, the key is the same: no file goes into it.
    expect(transactionKey({ ...prod }, 'INV-1')).toBe(key);
    expect(transactionKey(prod, 'INV-2')).not.toBe(key);
    expect(transactionKey({ ...prod, service: 'http://127.0.0.1:8787' }, 'INV-1')).not.toBe(key);
    expect(transactionKey({ ...prod, integratorId: 'int-2' }, 'INV-1')).not.toBe(key);
  });

  it('is a published value, so that a change of derivation cannot slip in unnoticed', () => {
    expect(transactionKey(prod, 'INV-1')).toMatchInlineSnapshot(`"qGh3dmwZaOk8sg_L-q5BpX5hQdMlFlS_"`);
  });
});

describe('creationKey', () => {
  it('derives from the payee details, the kind, the service and the integrator', () => {
    const key = creationKey(prod, 'recipient', 'recipient:abc');
    expect(creationKey(prod, 'recipient', 'recipient:abc')).toBe(key);
    expect(creationKey(prod, 'beneficiary', 'recipient:abc')).not.toBe(key);
    expect(creationKey(prod, 'recipient', 'recipient:abd')).not.toBe(key);
    expect(creationKey({ ...prod, integratorId: 'int-2' }, 'recipient', 'recipient:abc')).not.toBe(key);
    expect(creationKey({ ...prod, service: 'https://other.example' }, 'recipient', 'recipient:abc')).not.toBe(
      key,
    );
  });
});

describe('serviceOf', () => {
  it.each([
    ['https://api.pay.example/v1/', 'https://api.pay.example'],
    ['https://API.pay.example:443', 'https://api.pay.example'],
    ['http://127.0.0.1:8787/', 'http://127.0.0.1:8787'],
    ['https://api.pay.example:8443/prefix', 'https://api.pay.example:8443'],
  ])('%s is the service %s', (url, service) => {
    expect(serviceOf(url)).toBe(service);
  });

  it('refuses what is not a URL (exit 2)', () => {
    expect(() => serviceOf('not a url')).toThrow(/--base-url "not a url" is not a URL/);
  });
});
