import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  linesForKey,
  matchPatternList,
  parseAllowedSigners,
  principalsOf,
  readAllowedSigners,
  signerRefusal,
} from '../../src/approvals/allowed-signers.js';
import { AllowedSignersError } from '../../src/approvals/errors.js';
import { parsePublicKeyBlob } from '../../src/approvals/keys.js';
import { WireWriter } from '../../src/approvals/wire.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { handKey, publicKeyLine } from './vectors.js';

const FILE = 'approvers.allowed_signers';
const alice = publicKeyLine(handKey('ssh-ed25519'));
const bob = publicKeyLine(handKey('sk-ssh-ed25519@openssh.com'));
const carol = publicKeyLine(handKey('ssh-rsa'));

function refusedWith(text: string, message: RegExp, line?: number): AllowedSignersError {
  let error: unknown;
  try {
    parseAllowedSigners(text, FILE);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(AllowedSignersError);
  const refused = error as AllowedSignersError;
  expect(refused.message).toMatch(message);
  if (line !== undefined) {
    expect(refused.line).toBe(line);
    expect(refused.message.startsWith(`${FILE}:${line}: `)).toBe(true);
  }
  return refused;
}

describe('parseAllowedSigners', () => {
  it('reads principals, options, key and comment; skips comments and blank lines', () => {
    const text = [
      '# Finance approvers',
      '',
      `alice@example.com,treasury@example.com ${alice} alice's laptop`,
      `  bob@example.com namespaces="payouts-approval",valid-after="20260101",VALID-BEFORE="20261231235959Z" ${bob}`,
      `carol@example.com\t${carol}\r`,
      '   # indented comment',
    ].join('\n');
    const allowed = parseAllowedSigners(text, FILE);
    expect(allowed.file).toBe(FILE);
    expect(allowed.signers.map((s) => [s.line, s.principals, s.key.type])).toEqual([
      [3, ['alice@example.com', 'treasury@example.com'], 'ssh-ed25519'],
      [4, ['bob@example.com'], 'sk-ssh-ed25519@openssh.com'],
      [5, ['carol@example.com'], 'ssh-rsa'],
    ]);
    const b = allowed.signers[1]!;
    expect(b.namespaces).toBe('payouts-approval');
    // valid-after without Z is the machine's local standard time, as ssh-keygen reads it (on
    // 1 January, standard time is the local time).
    expect(b.validAfter).toBe(new Date(2026, 0, 1).getTime() / 1000);
    expect(b.validBefore).toBe(Date.parse('2026-12-31T23:59:59Z') / 1000);
    expect(principalsOf(allowed)).toEqual([
      'alice@example.com',
      'treasury@example.com',
      'bob@example.com',
      'carol@example.com',
    ]);
  });

  it('reads a principals field in double quotes as ssh-keygen does', () => {
    const allowed = parseAllowedSigners(`"alice@example.com,bob@example.com" ${alice}`, FILE);
    expect(allowed.signers[0]!.principals).toEqual(['alice@example.com', 'bob@example.com']);
  });

  it('reads the three timestamp forms, in UTC with Z or UTC', () => {
    const at = (value: string) =>
      parseAllowedSigners(`a@x valid-before="${value}" ${alice}`, FILE).signers[0]!.validBefore;
    expect(at('20270102Z')).toBe(Date.parse('2027-01-02T00:00:00Z') / 1000);
    expect(at('202701021530Z')).toBe(Date.parse('2027-01-02T15:30:00Z') / 1000);
    expect(at('20270102153045z')).toBe(Date.parse('2027-01-02T15:30:45Z') / 1000);
    expect(at('20270102153045UTC')).toBe(Date.parse('2027-01-02T15:30:45Z') / 1000);
    expect(at('202701021530')).toBe(new Date(2027, 0, 2, 15, 30).getTime() / 1000);
  });

  it('reads a time without Z in local standard time, summer or not, as ssh-keygen does', () => {
    const at = (value: string, timeZone?: string) =>
      parseAllowedSigners(`a@x valid-after="${value}" ${alice}`, FILE, timeZone ? { timeZone } : {})
        .signers[0]!.validAfter;
    // Berlin is UTC+1 in winter and UTC+2 in summer; ssh-keygen takes UTC+1 all year.
    expect(at('20260115', 'Europe/Berlin')).toBe(Date.parse('2026-01-14T23:00:00Z') / 1000);
    expect(at('20260701', 'Europe/Berlin')).toBe(Date.parse('2026-06-30T23:00:00Z') / 1000);
    expect(at('202607011230', 'Europe/Berlin')).toBe(Date.parse('2026-07-01T11:30:00Z') / 1000);
    // The hour summer time skips and the hour it repeats: standard time has each once.
    expect(at('20260329023000', 'Europe/Berlin')).toBe(Date.parse('2026-03-29T01:30:00Z') / 1000);
    expect(at('20261025023000', 'Europe/Berlin')).toBe(Date.parse('2026-10-25T01:30:00Z') / 1000);
    // Southern summer is in January: Sydney is UTC+10 standard, UTC+11 in summer.
    expect(at('20260115', 'Australia/Sydney')).toBe(Date.parse('2026-01-14T14:00:00Z') / 1000);
    expect(at('20260715', 'Australia/Sydney')).toBe(Date.parse('2026-07-14T14:00:00Z') / 1000);
    expect(at('20260701', 'America/New_York')).toBe(Date.parse('2026-07-01T05:00:00Z') / 1000);
    // Moscow left UTC+4 for UTC+3 on 2014-10-26, with no summer time either side.
    expect(at('20141101', 'Europe/Moscow')).toBe(Date.parse('2014-10-31T21:00:00Z') / 1000);
    // With Z the zone does not matter; without a zone named, the machine's own is read.
    expect(at('20260701Z', 'Europe/Berlin')).toBe(Date.parse('2026-07-01T00:00:00Z') / 1000);
    const machine = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(at('20260701')).toBe(at('20260701', machine));
  });

  it('finds every line of a key, whatever line lists it', () => {
    const key = handKey('ssh-ed25519');
    const allowed = parseAllowedSigners(
      `a@x ${publicKeyLine(key)}\nb@x ${bob}\nc@x ${publicKeyLine(key)} again\n`,
      FILE,
    );
    expect(linesForKey(allowed, parsePublicKeyBlob(key.blob)).map((line) => line.line)).toEqual([1, 3]);
  });

  it('refuses principal patterns by name', () => {
    refusedWith(`*@example.com ${alice}`, /principal patterns are not accepted \("\*@example.com"\)/, 1);
    refusedWith(
      `# ok\nalice@example.com,bo?@example.com ${alice}`,
      /principal patterns .*"bo\?@example.com"/,
      2,
    );
    refusedWith(`!mallory@example.com ${alice}`, /principal patterns/, 1);
    refusedWith(`alice@example.com,,bob@x ${alice}`, /empty principal/, 1);
  });

  it('refuses cert-authority by name, and unknown options', () => {
    refusedWith(`*@example.com cert-authority ${alice}`, /principal patterns/);
    refusedWith(`alice@example.com cert-authority ${alice}`, /cert-authority is not supported/, 1);
    refusedWith(
      `alice@example.com namespaces="git",cert-authority ${alice}`,
      /cert-authority is not supported/,
      1,
    );
    refusedWith(`alice@example.com no-touch-required ${alice}`, /unknown option "no-touch-required"/, 1);
  });

  it('says what a line lacks where a comma stands for a space, naming the line and its form', () => {
    const [type, key] = alice.split(' ') as [string, string];
    refusedWith(
      `# approvers\nalice@example.com,${type} ${key}`,
      new RegExp(
        `the key type ${type} is joined to the principals by a comma: a line is "principals \\[options\\] keytype base64key \\[comment\\]"`,
      ),
      2,
    );
    refusedWith(
      `alice@example.com ${key}`,
      /expected a key type such as ssh-ed25519 before the key, found the key itself/,
      1,
    );
  });

  it('refuses options ssh-keygen would refuse: no quotes, twice, a stray comma, an open quote', () => {
    refusedWith(`a@x valid-before=20270101 ${alice}`, /must be in double quotes/, 1);
    refusedWith(`a@x namespaces="a",namespaces="b" ${alice}`, /namespaces is given twice/, 1);
    refusedWith(`a@x namespaces="a", ${alice}`, /end with a comma|separated by commas/, 1);
    refusedWith(`a@x namespaces="a ${alice}`, /double quote is not closed/, 1);
    refusedWith(`a@x namespaces="" ${alice}`, /allows no namespace/, 1);
  });

  it('refuses timestamps that are not times, and a validity that ends before it starts', () => {
    refusedWith(`a@x valid-before="2027-01-01" ${alice}`, /not a time written YYYYMMDD/, 1);
    refusedWith(`a@x valid-before="20270230Z" ${alice}`, /not a real date/, 1);
    refusedWith(`a@x valid-before="202701012460Z" ${alice}`, /not a real date/, 1);
    refusedWith(`a@x valid-before="19700101Z" ${alice}`, /not after 1970/, 1);
    refusedWith(
      `a@x valid-after="20270101Z",valid-before="20260101Z" ${alice}`,
      /valid-before is not after valid-after/,
      1,
    );
  });

  it('refuses a missing, damaged or mismatched key, naming the line', () => {
    refusedWith('alice@example.com', /no key/, 1);
    refusedWith('alice@example.com ssh-ed25519', /no key after the key type ssh-ed25519/, 1);
    refusedWith(`alice@example.com ${alice.slice(0, -8)}`, /not Base64|cut short|damaged/, 1);
    refusedWith(
      `alice@example.com ecdsa-sha2-nistp256 ${alice.split(' ')[1]}`,
      /says ecdsa-sha2-nistp256 but its key is ssh-ed25519/,
      1,
    );
    refusedWith(`alice@example.com ssh-dss AAAAB3NzaC1kc3MAAACBAP`, /DSA keys are no longer accepted/, 1);
    refusedWith(
      `alice@example.com ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29t`,
      /certificate/,
      1,
    );
  });

  it('refuses a key blob that claims a huge length, or carries bytes after the key', () => {
    const huge = new WireWriter().string('ssh-ed25519').uint32(0xfffffff0).raw(Buffer.alloc(32)).bytes();
    refusedWith(`alice@example.com ssh-ed25519 ${huge.toString('base64')}`, /claims 4294967280 bytes/, 1);
    const blob = handKey('ssh-ed25519').blob;
    const longer = Buffer.concat([blob, Buffer.from([0])]).toString('base64');
    refusedWith(`# x\nalice@example.com ssh-ed25519 ${longer}`, /1 unexpected bytes/, 2);
  });

  it('refuses a file without any key, and one with a byte-order mark', () => {
    refusedWith('# nobody yet\n\n', /lists no key/);
    refusedWith(`\ufeffalice@example.com ${alice}`, /byte-order mark/, 1);
  });

  it('reads a file from disk, and names a file it cannot read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payouts-allowed-'));
    try {
      const path = join(dir, 'allowed_signers');
      writeFileSync(path, `alice@example.com ${alice}\n`);
      expect((await readAllowedSigners(path)).signers).toHaveLength(1);
      await expect(readAllowedSigners(join(dir, 'missing'))).rejects.toThrow(
        /missing: cannot read the allowed-signers file: no such file or directory$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses every truncation and 2000 seeded mutations of a line with an AllowedSignersError, never a crash', () => {
    const line = `alice@example.com,bob@example.com namespaces="payouts-approval",valid-before="20301231Z" ${carol} laptop`;
    for (let length = 0; length <= line.length; length += 1) {
      try {
        parseAllowedSigners(line.slice(0, length), FILE);
      } catch (error) {
        expect(error).toBeInstanceOf(AllowedSignersError);
      }
    }
    const random = mulberry32(7);
    const alphabet = ' \t",=*?!#\\azAZ09+/-@\n';
    for (let round = 0; round < 2000; round += 1) {
      const chars = [...line];
      for (let n = 1 + Math.floor(random() * 3); n > 0; n -= 1) {
        chars[Math.floor(random() * chars.length)] = alphabet[Math.floor(random() * alphabet.length)]!;
      }
      try {
        parseAllowedSigners(chars.join(''), FILE);
      } catch (error) {
        expect(error).toBeInstanceOf(AllowedSignersError);
      }
    }
  });
});

describe('signerRefusal', () => {
  const allowed = parseAllowedSigners(
    [
      `any@x ${alice}`,
      `git@x namespaces="git,file" ${alice}`,
      `window@x valid-after="20260101Z",valid-before="20261231Z" ${alice}`,
      `not-payouts@x namespaces="*,!payouts-approval" ${alice}`,
    ].join('\n'),
    FILE,
  );
  const [any, git, window, notPayouts] = allowed.signers as [
    (typeof allowed.signers)[0],
    (typeof allowed.signers)[0],
    (typeof allowed.signers)[0],
    (typeof allowed.signers)[0],
  ];
  const now = Date.parse('2026-06-01T12:00:00Z');

  it('lets a key without options sign any namespace at any time', () => {
    expect(signerRefusal(any, 'payouts-approval', now, FILE)).toBeUndefined();
  });

  it('refuses a namespace the line does not allow, negations included', () => {
    expect(signerRefusal(git, 'payouts-approval', now, FILE)).toEqual({
      reason: 'namespace',
      message: `${FILE}:2 does not allow this key to sign "payouts-approval" (namespaces="git,file")`,
    });
    expect(signerRefusal(notPayouts, 'payouts-approval', now, FILE)?.reason).toBe('namespace');
    expect(signerRefusal(notPayouts, 'file', now, FILE)).toBeUndefined();
  });

  it('checks valid-after and valid-before to the second, both ends included', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const end = Date.parse('2026-12-31T00:00:00Z');
    expect(signerRefusal(window, 'payouts-approval', start - 1000, FILE)?.reason).toBe('not-yet-valid');
    expect(signerRefusal(window, 'payouts-approval', start, FILE)).toBeUndefined();
    expect(signerRefusal(window, 'payouts-approval', end + 999, FILE)).toBeUndefined();
    expect(signerRefusal(window, 'payouts-approval', end + 1000, FILE)).toEqual({
      reason: 'expired',
      message: `${FILE}:3: the key expired at 2026-12-31T00:00:00Z (valid-before)`,
    });
  });

  it('matches pattern-lists as OpenSSH does', () => {
    expect(matchPatternList('payouts-approval', 'payouts-*')).toBe(true);
    expect(matchPatternList('payouts-approval', 'git,file')).toBe(false);
    expect(matchPatternList('payouts-approval', 'payouts-approva?')).toBe(true);
    expect(matchPatternList('payouts-approval', '*,!payouts-*')).toBe(false);
    expect(matchPatternList('payouts-approval', '!git')).toBe(false);
    expect(matchPatternList('a.b', 'a?b')).toBe(true);
    expect(matchPatternList('axb', 'a.b')).toBe(false);
  });
});
