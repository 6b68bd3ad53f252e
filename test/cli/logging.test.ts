import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, maskAccountNumbers } from '../../src/cli/logging.js';

describe('maskAccountNumbers', () => {
  it.each([
    ['account 000123456789 closed', 'account ********6789 closed'],
    ['iban DE89370400440532013000', 'iban ******************3000'],
    ['clabe 002010077777777771', 'clabe **************7771'],
    ['ref-000123456789', 'ref-********6789'],
    ['transaction 3f9c90b5-d90d-4b29-ac33-a1453ad9dfb2', 'transaction 3f9c90b5-d90d-4b29-ac33-a1453ad9dfb2'],
    ['integrator 11111111-1111-4111-8111-111111111111', 'integrator 11111111-1111-4111-8111-111111111111'],
    ['row 1834 amount 1250.00', 'row 1834 amount 1250.00'],
    // A batch digest is no account number, even when it begins with eight digits.
    [
      'digest 12345678e4c9d0f3a8b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3',
      'digest 12345678e4c9d0f3a8b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3',
    ],
  ])('%s', (input, expected) => {
    expect(maskAccountNumbers(input)).toBe(expected);
  });
});

describe('createLogger', () => {
  it('redacts secrets by key and masks account numbers in JSON logs', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => {
      text += d.toString('utf8');
    });
    const logger = createLogger({ format: 'json', stderr: out });
    logger.info(
      {
        password: 'hunter2',
        credentials: { clientSecret: 's3cr3t' },
        details: { accountNumber: '000123456789' },
      },
      'paying 000987654321 with Bearer abc.def.ghi',
    );
    logger.flush();
    const line = JSON.parse(text.trim());
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('s3cr3t');
    expect(text).not.toContain('abc.def.ghi');
    expect(text).not.toContain('000123456789');
    expect(line.details.accountNumber).toBe('********6789');
    expect(line.msg).toBe('paying ********4321 with Bearer [REDACTED]');
  });
});
