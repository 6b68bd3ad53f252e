import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskSecret, readSecretFile, secretFingerprint, writeSecretFile } from '../../src/webhooks/secret.js';
import { tempDir } from './helpers.js';

describe('webhook secret outside the service', () => {
  it('masks a long secret to its last four characters and a short one to nothing', () => {
    expect(maskSecret('abcdefghijklmnopqrstuvwxyz')).toBe('********wxyz');
    expect(maskSecret('short-secret')).toBe('********');
    expect(secretFingerprint('s1')).toMatch(/^sha256:[0-9a-f]{4}(-[0-9a-f]{4}){3}$/);
    expect(secretFingerprint('s1')).toBe(secretFingerprint('s1'));
    expect(secretFingerprint('s1')).not.toBe(secretFingerprint('s2'));
  });

  it('writes a secret file with mode 0600 over an older one and reads it back', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'webhook.secret');
    await writeFile(file, 'old\n', { mode: 0o644 });
    await writeSecretFile(file, 'new-secret');
    expect(await readFile(file, 'utf8')).toBe('new-secret\n');
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readSecretFile(file)).toBe('new-secret');
  });

  it('refuses an empty or missing secret file with a ConfigError', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'empty'), '\n');
    await expect(readSecretFile(path.join(dir, 'empty'))).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(readSecretFile(path.join(dir, 'none'))).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(writeSecretFile(path.join(dir, 'no-dir', 'x'), 's')).rejects.toMatchObject({
      code: 'CONFIG',
    });
  });
});
