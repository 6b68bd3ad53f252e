/**
 * Which service an offline command (validate, approve, status --approvals) reads for a URL
 * (docs/register.md "One integrator, one history"): the one the operator declared it the same
 * service as, as run does once it knows the integrator; else the URL's own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { declaredService } from '../../src/register/choose.js';
import { openRegister } from '../../src/register/open.js';

const OLD = 'http://127.0.0.1:8787';
const ALIAS = 'http://localhost:8787';

async function register() {
  const dir = await mkdtemp(path.join(tmpdir(), 'payouts-declared-'));
  const opened = await openRegister(path.join(dir, 'register.db'), { create: true });
  onTestFinished(async () => {
    await opened.close();
    await rm(dir, { recursive: true, force: true });
  });
  return opened;
}

describe('declaredService', () => {
  it('reads a URL declared the same service as another as the other', async () => {
    const r = await register();
    await r.openScope({ service: OLD, integratorId: 'int-1' }, 'integrator@example.com');
    expect(await declaredService(r, ALIAS, 'integrator@example.com')).toBe(ALIAS);
    await r.declareOrigin({ service: ALIAS, integratorId: 'int-1' }, { sameAs: OLD });
    expect(await declaredService(r, ALIAS, 'integrator@example.com')).toBe(OLD);
    expect(await declaredService(r, ALIAS)).toBe(OLD);
    expect(await declaredService(r, OLD)).toBe(OLD);
    expect(await declaredService(r, 'https://pay.example')).toBe('https://pay.example');
  });

  it('keeps a URL declared a separate service as itself', async () => {
    const r = await register();
    await r.openScope({ service: OLD, integratorId: 'int-1' });
    await r.declareOrigin({ service: ALIAS, integratorId: 'int-1' }, { separate: true });
    expect(await declaredService(r, ALIAS)).toBe(ALIAS);
  });

  it("follows the dashboard user's integrator first", async () => {
    const r = await register();
    await r.openScope({ service: OLD, integratorId: 'int-1' }, 'one@example.com');
    await r.openScope({ service: ALIAS, integratorId: 'int-2' }, 'two@example.com');
    await r.declareOrigin({ service: ALIAS, integratorId: 'int-1' }, { sameAs: OLD });
    expect(await declaredService(r, ALIAS, 'one@example.com')).toBe(OLD);
    expect(await declaredService(r, ALIAS, 'two@example.com')).toBe(ALIAS);
  });
});
