import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/cli/logging.js';

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
    expect(line.details.accountNumber).toBe('****6789');
    expect(line.msg).toBe('paying ****4321 with Bearer [REDACTED]');
  });
});
