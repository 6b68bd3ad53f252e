/**
 * Malformed approval policies, each a change to a team's good policy, with the place its
 * refusal names (a JSON pointer, or "the policy" for the document) and words of what was
 * expected: read by the parser's tests and, through the command line, by policy set's.
 */
// biome-ignore lint/suspicious/noExplicitAny: a policy is any JSON a person may write
type Json = any;

/** What is wrong, the change that makes it so, the place named and what the message must say. */
export type MalformedPolicy = [
  what: string,
  change: (policy: Json) => Json | string,
  place: string,
  expected: RegExp,
];

export const MALFORMED_POLICIES: MalformedPolicy[] = [
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
