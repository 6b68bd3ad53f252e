/**
 * Identifier vectors from other projects' test suites and from the Federal Reserve's routing
 * directories (test/fixtures/identifiers/*.tsv, each naming its sources), run through the
 * recipient validation. Each line gives the message(s) we expect, and, where the source
 * project's verdict differs, why the service's rules decide otherwise (docs/service.md,
 * docs/api-assumptions.md "Identifier checks").
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Rail } from '../../src/columns/rails.js';
import { validateRecipient } from '../../src/rows/validate.js';
import { details } from './fixtures.js';

interface Vector {
  value: string;
  expected: string;
  source: string;
  why: string;
}

function vectors(file: string): Vector[] {
  const text = readFileSync(new URL(`../fixtures/identifiers/${file}`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [value = '', expected = '', source = '', why = ''] = line.split('\t');
      return { value, expected, source, why };
    });
}

/** The message(s) validation gives for `field` of the rail's valid body, or "ok". */
function verdict(rail: Rail, field: string, value: string): string {
  const issues = validateRecipient(details(rail, (d) => (d[field] = value)));
  return issues.length === 0 ? 'ok' : issues.map((issue) => `${issue.path}: ${issue.message}`).join(' | ');
}

describe.each([
  ['routing-numbers.tsv', 'ACH', 'routingNumber', 2314],
  ['routing-numbers.tsv', 'WIRE', 'routingNumber', 2314],
  ['ibans.tsv', 'SWIFT', 'iban', 1439],
  ['bics.tsv', 'SWIFT', 'swiftCode', 425],
  ['clabes.tsv', 'SPEI', 'clabe', 16],
  ['document-numbers.tsv', 'PIX', 'documentNumber', 41],
] as const)('%s on %s %s', (file, rail, field, count) => {
  const all = vectors(file);

  it(`gives every one of the ${count} vectors its expected message`, () => {
    expect(all).toHaveLength(count);
    const wrong = all
      .map(({ value, expected }) => ({
        value,
        expected: expected === 'ok' ? 'ok' : `details.${field}: ${expected}`,
        got: verdict(rail, field, value),
      }))
      .filter(({ expected, got }) => expected !== got);
    expect(wrong).toEqual([]);
  });

  it('names a source for every vector and a reason from docs/service.md or the registry for every difference', () => {
    for (const { value, source, why } of all) {
      expect(value).not.toBe('');
      expect(source).not.toBe('');
      if (why !== '') expect(why).toMatch(/service\.md|registry|format/i);
    }
  });
});

describe('vectors of the Fedwire directory and outside the SWIFT IBAN Registry', () => {
  const routing = new Map(vectors('routing-numbers.tsv').map((v) => [v.value, v.expected]));
  const ibans = new Map(vectors('ibans.tsv').map((v) => [v.value, v]));

  it('has the Treasury routing numbers of the Fedwire directory as valid', () => {
    expect(routing.get('154000008')).toBe('ok');
    expect(routing.get('155000007')).toBe('ok');
  });

  it('has IBANs of countries outside the registry, which their sources call valid, as invalid', () => {
    const outside = [...ibans.values()].filter((v) => v.why === 'country outside the SWIFT IBAN Registry');
    expect(outside.length).toBe(115);
    for (const v of outside) expect(v.expected).toBe('iban is invalid');
    expect(ibans.get('DZ580002100001113000000570')?.expected).toBe('iban is invalid');
  });
});
