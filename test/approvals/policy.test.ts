/**
 * The approval policy read strictly: a good one is read with its rules, amounts in minor units and
 * one canonical text; every malformed one is refused naming the place (a JSON pointer, or the line
 * and column of bad JSON) and what was expected there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/approvals/errors.js';
import { canonicalJson, parsePolicy } from '../../src/approvals/policy.js';
import { MALFORMED_POLICIES } from './malformed-policies.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE } from './ssh-keygen.js';
import { type Team, teamKeys, teamPolicy } from './team-policy.js';

type Json = ReturnType<typeof JSON.parse>;

describe.skipIf(!HAS_SSH_KEYGEN)(`an approval policy${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;
  let keys: Team;
  /** The policy of a team of four, as a fresh object each time (a case changes it). */
  let team: () => Json;

  beforeAll(() => {
    folder = new KeyFolder();
    keys = teamKeys(folder);
    team = () => teamPolicy(keys) as Json;
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

  it.each(MALFORMED_POLICIES)(
    'refuses %s, naming the place and what was expected',
    (_, change, place, expected) => {
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
    },
  );

  it('holds a table of at least fifteen malformed policies', () => {
    expect(MALFORMED_POLICIES.length).toBeGreaterThanOrEqual(15);
  });
});
