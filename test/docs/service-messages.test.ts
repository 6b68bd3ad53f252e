/**
 * docs/service.md "Validation messages" quotes the service's messages word for word, and the
 * code gives the same words: the page and src/rows/messages.ts cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addressMessages, COMMON_MESSAGES, DETAIL_MESSAGES } from '../../src/rows/messages.js';

const page = readFileSync(path.resolve(import.meta.dirname, '../../docs/service.md'), 'utf8');
const section = page.split('\n## Validation messages\n')[1]?.split('\n## ')[0] ?? '';
const quoted = new Set([...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!));

/** The page writes an address message once, with `<addr>` for the object's name. */
const addressTemplates = Object.values(addressMessages('<addr>' as 'recipientAddress'));

describe('docs/service.md "Validation messages"', () => {
  it('quotes every recipient message of src/rows/messages.ts', () => {
    const code = [...Object.values(COMMON_MESSAGES), ...Object.values(DETAIL_MESSAGES), ...addressTemplates];
    expect(code.filter((message) => !quoted.has(message))).toEqual([]);
  });

  it('quotes no message the code does not give', () => {
    const code = new Set<string>([
      ...Object.values(COMMON_MESSAGES),
      ...Object.values(DETAIL_MESSAGES),
      ...addressTemplates,
    ]);
    expect(quoted.size).toBeGreaterThan(30);
    expect([...quoted].filter((message) => !code.has(message))).toEqual([]);
  });
});
