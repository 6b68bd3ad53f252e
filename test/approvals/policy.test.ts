/**
 * The approval policy read strictly: a good one is read with its rules, amounts in minor units and
 * one canonical text; every malformed one is refused naming the place (a JSON pointer, or the line
 * and column of bad JSON) and what was expected there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/approvals/errors.js';
import { canonicalJson, parsePolicy } from '../../src/approvals/policy.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from './ssh-keygen.js';

type Json = ReturnType<typeof JSON.parse>;

describe.skipIf(!HAS_SSH_KEYGEN)(`an approval policy${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;
  let keys: Record<'alice' | 'bob' | 'carol' | 'dave', TestKey>;
  /** The policy of a team of four, as a fresh object each time (a case changes it). */
  let team: () => Json;

  beforeAll(() => {
    folder = new KeyFolder();
    keys = {
      alice: folder.key('alice', { type: 'ed25519' }),
      bob: folder.key('bob', { type: 'ed25519' }),
      carol: folder.key('carol', { type: 'ecdsa', bits: 256 }),
      dave: folder.key('dave', { type: 'ed25519' }),
    };
    team = () => ({
      signers: Object.entries(keys).map(([name, key]) => `${name}@corp ${key.publicKey}`),
      groups: {
        approvers: ['alice@corp', 'bob@corp'],
        treasury: ['carol@corp'],
        admins: ['alice@corp', 'dave@corp'],
      },
      rules: [
        { name: 'every batch', require: 1, from: 'approvers' },
        { name: 'large batches', when: { sendTotalOver: { USD: '1000.00' } }, require: 2, from: 'approvers' },
        {
          name: 'new bank details',
          when: { warnings: ['changedBankDetails'] },
          require: 1,
          from: 'treasury',
        },
      ],
      admins: { require: 2, from: 'admins' },
    });
  });
  afterAll(() => folder?.cleanup());

  it('reads the rules, amounts in minor units, and gives one canonical text and digest', () => {
    const policy = parsePolicy(JSON.stringify(team(), null, 2), 'team.json');
    expect(policy.rules.map((r) => [r.name, r.require, r.from])).toEqual([
      ['every batch', 1, 'approvers'],
      ['large batches', 2, 'approvers'],
      ['new bank details', 1, 'treasury'],
    ]);
    expect(policy.rules[1]!.when.sendTotalOver).toEqual(new Map([['USD', 100000n]]));
    expect(policy.rules[2]!.when.warnings).toEqual(['changedBankDetails']);
    expect(policy.admins).toEqual({ require: 2, from: 'admins' });
    expect(policy.signers.signers.map((s) => s.principals)).toEqual([
      ['alice@corp'],
      ['bob@corp'],
      ['carol@corp'],
      ['dave@corp'],
    ]);
    // The same policy written otherwise (keys in another order, other spacing): the same text.
    const reordered = Object.fromEntries(Object.entries(team()).reverse());
    const again = parsePolicy(JSON.stringify(reordered), 'other.json');
    expect(again.canonical).toBe(policy.canonical);
    expect(again.digest).toBe(policy.digest);
    expect(policy.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalJson({ b: [2, { d: 1, c: 'x' }], a: null })).toBe('{"a":null,"b":[2,{"c":"x","d":1}]}');
  });

  /** Each case: a change to the team's policy, the place named, and words of what was expected. */
  const malformed: [what: string, change: (p: Json) => Json | string, place: string, expected: RegExp][] = [
    ['bad JSON', () => '{"signers": [}', 'the policy', /not JSON \(line 1, column \d+\)/],
    [
      'bad JSON on a later line',
      () => '{\n  "signers": [\n    alice\n  ]\n}',
      'the policy',
      /not JSON \(line 3, column 5\)/,
    ],
    ['an empty file', () => '', 'the policy', /not JSON .*expected one JSON object/],
    ['an array, not an object', () => [], 'the policy', /expected an object, found an array/],
    ['a missing key', (p) => ({ ...p, admins: undefined }), 'the policy', /expected the key "admins"/],
    [
      'an unknown key',
      (p) => ({ ...p, approvers: [] }),
      '/approvers',
      /unknown key "approvers": expected one of/,
    ],
    [
      'signers not an array',
      (p) => ({ ...p, signers: 'alice' }),
      '/signers',
      /expected an array, found string/,
    ],
    [
      'a signer line that is no key',
      (p) => ({ ...p, signers: [...p.signers.slice(0, 3), 'dave@corp ssh-ed25519'] }),
      '/signers/3',
      /expected an allowed-signers line.*no key after the key type/,
    ],
    [
      'a principal pattern',
      (p) => ({ ...p, signers: [p.signers[0].replace('alice@corp', '*@corp'), ...p.signers.slice(1)] }),
      '/signers/0',
      /principal patterns are not accepted/,
    ],
    [
      'an empty group',
      (p) => ({ ...p, groups: { ...p.groups, treasury: [] } }),
      '/groups/treasury',
      /expected at least one entry, found an empty array/,
    ],
    [
      'an unknown principal',
      (p) => ({ ...p, groups: { ...p.groups, treasury: ['erin@corp'] } }),
      '/groups/treasury/0',
      /unknown principal "erin@corp": expected one that a line of "signers" names/,
    ],
    [
      'a principal twice in a group',
      (p) => ({ ...p, groups: { ...p.groups, approvers: ['alice@corp', 'alice@corp'] } }),
      '/groups/approvers',
      /listed twice/,
    ],
    [
      'an unknown group',
      (p) => ({ ...p, rules: [{ ...p.rules[0], from: 'approver' }] }),
      '/rules/0/from',
      /unknown group "approver": expected one of approvers, treasury, admins/,
    ],
    [
      'a negative require',
      (p) => ({ ...p, rules: [{ ...p.rules[0], require: -1 }] }),
      '/rules/0/require',
      /expected a whole number of signatures, 1 or more, found number -1/,
    ],
    [
      'a fractional require',
      (p) => ({ ...p, rules: [{ ...p.rules[0], require: 1.5 }] }),
      '/rules/0/require',
      /expected a whole number/,
    ],
    [
      'a require as text',
      (p) => ({ ...p, rules: [{ ...p.rules[0], require: '1' }] }),
      '/rules/0/require',
      /found string "1"/,
    ],
    [
      'a rule asking more than its group',
      (p) => ({ ...p, rules: [{ ...p.rules[0], require: 3 }] }),
      '/rules/0/require',
      /3 signatures can never be met by the group "approvers" of 2: expected at most 2/,
    ],
    [
      'admins asking more than their group',
      (p) => ({ ...p, admins: { require: 3, from: 'admins' } }),
      '/admins/require',
      /can never be met .* expected at most 2/,
    ],
    [
      'duplicate rule names',
      (p) => ({ ...p, rules: [p.rules[0], { ...p.rules[1], name: 'every batch' }] }),
      '/rules/1/name',
      /the rule name "every batch" is used twice/,
    ],
    [
      'a rule without a name',
      (p) => ({ ...p, rules: [{ require: 1, from: 'approvers' }] }),
      '/rules/0/name',
      /expected a non-empty string, found nothing/,
    ],
    [
      'an unknown key in a rule',
      (p) => ({ ...p, rules: [{ ...p.rules[0], requires: 1 }] }),
      '/rules/0/requires',
      /unknown key "requires"/,
    ],
    ['no rules', (p) => ({ ...p, rules: [] }), '/rules', /expected at least one entry/],
    [
      'an amount with three decimals',
      (p) => ({ ...p, rules: [{ ...p.rules[1], when: { sendTotalOver: { USD: '1000.001' } } }] }),
      '/rules/0/when/sendTotalOver/USD',
      /decimal string with at most two decimals/,
    ],
    [
      'an amount as a JSON number',
      (p) => ({ ...p, rules: [{ ...p.rules[1], when: { rowOver: { USD: 1000 } } }] }),
      '/rules/0/when/rowOver/USD',
      /found number 1000/,
    ],
    [
      'a negative amount',
      (p) => ({ ...p, rules: [{ ...p.rules[1], when: { rowOver: { USD: '-5.00' } } }] }),
      '/rules/0/when/rowOver/USD',
      /decimal string/,
    ],
    [
      'an unknown currency',
      (p) => ({ ...p, rules: [{ ...p.rules[1], when: { sendTotalOver: { EUR: '10.00' } } }] }),
      '/rules/0/when/sendTotalOver/EUR',
      /unknown currency "EUR": expected one of USD, MXN, BRL, COP/,
    ],
    [
      'an unknown warning',
      (p) => ({ ...p, rules: [{ ...p.rules[2], when: { warnings: ['changedBank'] } }] }),
      '/rules/0/when/warnings/0',
      /unknown warning "changedBank": expected one of newPayee/,
    ],
    [
      'an unknown rail',
      (p) => ({ ...p, rules: [{ ...p.rules[2], when: { rails: ['SEPA'] } }] }),
      '/rules/0/when/rails/0',
      /unknown rail "SEPA"/,
    ],
    [
      'an unknown condition',
      (p) => ({ ...p, rules: [{ ...p.rules[2], when: { totalOver: {} } }] }),
      '/rules/0/when/totalOver',
      /unknown key "totalOver": expected one of sendTotalOver, rowOver, warnings, rails/,
    ],
    [
      'an empty when',
      (p) => ({ ...p, rules: [{ ...p.rules[2], when: {} }] }),
      '/rules/0/when',
      /at least one condition/,
    ],
    ['admins not an object', (p) => ({ ...p, admins: 2 }), '/admins', /expected an object, found number 2/],
  ];

  it.each(malformed)('refuses %s, naming the place and what was expected', (_, change, place, expected) => {
    const changed = change(team());
    const text = typeof changed === 'string' ? changed : JSON.stringify(changed);
    let thrown: unknown;
    try {
      parsePolicy(text, 'team.json');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PolicyError);
    const error = thrown as PolicyError;
    expect(error.code).toBe('CONFIG');
    expect(error.message.startsWith(`team.json: ${place}: `), error.message).toBe(true);
    expect(error.message).toMatch(expected);
  });

  it('holds a table of at least fifteen malformed policies', () => {
    expect(malformed.length).toBeGreaterThanOrEqual(15);
  });
});
