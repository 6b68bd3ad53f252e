import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  batchIdOf,
  fingerprintSheet,
  hashDedupeKey,
  idempotencyKey,
  sheetHash,
} from '../../src/checkpoint/fingerprint.js';
import { SheetError } from '../../src/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payouts-fp-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sheetHash and fingerprintSheet', () => {
  it('is the SHA-256 of the bytes, streamed (a 3 MB sheet)', async () => {
    const content = Buffer.from('reference,amount\n'.concat('INV-1,10.00\n'.repeat(250_000)));
    const path = join(dir, 'big.csv');
    await writeFile(path, content);
    expect(await sheetHash(path)).toBe(createHash('sha256').update(content).digest('hex'));
  });

  it('gives the same batch for the same bytes and another for one changed byte', async () => {
    const a = join(dir, 'a.csv');
    const b = join(dir, 'b.csv');
    await writeFile(a, 'reference,amount\nINV-1,10.00\n');
    await writeFile(b, 'reference,amount\nINV-1,10.01\n');
    const fa = await fingerprintSheet(a);
    expect(await fingerprintSheet(a)).toEqual(fa);
    const fb = await fingerprintSheet(b);
    expect(fb.batchId).not.toBe(fa.batchId);
    expect(fa.batchId).toBe(batchIdOf(fa.sheetHash));
    expect(fa.batchId).toMatch(/^b-[0-9a-f]{24}$/);
    // The key salt is another digest of the content, not derivable from what the journal stores.
    expect(fa.keySalt).not.toContain(fa.sheetHash.slice(0, 8));
    expect(fa.keySalt).not.toBe(fb.keySalt);
  });

  it('an unreadable sheet is a SheetError (exit 2) naming the file', async () => {
    const path = join(dir, 'missing.csv');
    const err = await sheetHash(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SheetError);
    expect((err as SheetError).exitCode).toBe(2);
    expect((err as SheetError).message).toBe(`${path}: cannot be read (ENOENT)`);
  });
});

describe('idempotencyKey', () => {
  const batch = 'b-0123456789abcdef01234567';

  it('is deterministic from batch and reference: 32 base64url characters', () => {
    const key = idempotencyKey(batch, 'INV-1');
    expect(key).toBe(idempotencyKey(batch, 'INV-1'));
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(key).toBe(
      createHash('sha256').update(`payouts:v1:${batch}:INV-1`).digest('base64url').slice(0, 32),
    );
  });

  it.each([
    [batch, 'INV-1', batch, 'INV-2'],
    [batch, 'INV-1', 'b-ffffffffffffffffffffffff', 'INV-1'],
    [batch, 'INV-1', batch, 'inv-1'],
    [batch, 'INV-1', batch, 'INV-1 '],
  ])('(%s, %j) and (%s, %j) differ', (b1, r1, b2, r2) => {
    expect(idempotencyKey(b1, r1)).not.toBe(idempotencyKey(b2, r2));
  });
});

describe('hashDedupeKey', () => {
  it('depends on the salt, so the journal alone does not reveal what the key is made of', () => {
    expect(hashDedupeKey('salt-a', 'ACH|021000021|123456789')).not.toBe(
      hashDedupeKey('salt-b', 'ACH|021000021|123456789'),
    );
    expect(hashDedupeKey('salt-a', 'k')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});
