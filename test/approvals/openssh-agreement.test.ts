/**
 * payouts against `ssh-keygen -Y verify`, row by row: the same signature, allowed-signers file,
 * namespace and instant given to both, and the same decision from both, or the row names the
 * difference payouts makes on purpose and why. ssh-keygen runs as a child process under
 * TZ=Europe/Berlin with `-O verify-time`; payouts is given the same zone and the same instant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedSigners } from '../../src/approvals/allowed-signers.js';
import { AllowedSignersError } from '../../src/approvals/errors.js';
import { approvalStatement } from '../../src/approvals/statement.js';
import { verifyApproval } from '../../src/approvals/verify.js';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from './ssh-keygen.js';
import { handKey, handSign, publicKeyLine } from './vectors.js';

const ZONE = 'Europe/Berlin';
const PRINCIPAL = 'alice@example.com';
const NAMESPACE = 'payouts-approval';
const STATEMENT = approvalStatement({
  digest: 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00',
  origin: 'https://payments.example.com',
  sheet: 'payouts-2026-11.csv',
  validRows: 3,
  validTotals: new Map([['EUR', 125_050n]]),
  day: '2026-11-26',
});
/** An instant after every time a row names. */
const LATER = Date.parse('2027-03-01T12:00:00Z');
const SECOND = 1000;

type Decision = 'good' | 'refused';
type KeyName = 'ed25519' | 'ecdsa' | 'rsa';
type SecurityKeyType = 'sk-ssh-ed25519@openssh.com' | 'sk-ecdsa-sha2-nistp256@openssh.com';

/** One row of the table: what is signed and listed, when it is checked, what each side decides. */
interface Row {
  readonly name: string;
  /** The key made by ssh-keygen that signs (ed25519 unless told), or a security key built by hand. */
  readonly key?: KeyName | { readonly type: SecurityKeyType; readonly touched: boolean };
  /** The namespace it is signed for (payouts-approval unless told). */
  readonly signedFor?: string;
  /** The key the allowed-signers line lists, when another than the signing one. */
  readonly listed?: KeyName;
  /** The allowed-signers line's options. */
  readonly options?: string;
  /** The armored signature changed (the armor rows). */
  readonly armor?: (armored: string) => string;
  /** Milliseconds since the epoch: `now` for payouts, `-O verify-time` for ssh-keygen. */
  readonly at?: number;
  /** What ssh-keygen decides (checked too: an OpenSSH that decides otherwise fails the row). */
  readonly openssh: Decision;
  /** Where payouts decides otherwise on purpose: its decision, why, and what its message says. */
  readonly payouts?: { readonly decision: Decision; readonly why: string; readonly says: RegExp };
}

const TOUCH_RULE = {
  decision: 'refused',
  why: "payouts' own rule: an approval is a person's act, so the security key must have been touched; ssh-keygen -Y verify does not look at the flag",
  says: /payouts requires the touch, although ssh-keygen -Y verify would accept it/,
} as const;

const NOT_IN_CALENDAR = {
  decision: 'refused',
  why: 'payouts refuses the file, naming the line: a date not in the calendar is a mistake to fix, which ssh-keygen would move into the next month or minute',
  says: /^allowed_signers:1: valid-after="[^"]+" is not a real date and time/,
} as const;

const SPACE_FOR_ZERO = {
  decision: 'refused',
  why: "payouts reads only the digits of the forms ssh-keygen documents; ssh-keygen's strptime also takes a space where a zero belongs",
  says: /^allowed_signers:1: valid-after="2026 701" is not a time written YYYYMMDD/,
} as const;

const KEYS_AND_NAMESPACES: Row[] = [
  ...(['ed25519', 'ecdsa', 'rsa'] as const).flatMap((key): Row[] => [
    { name: `${key}, signed for payouts-approval`, key, openssh: 'good' },
    { name: `${key}, signed for git`, key, signedFor: 'git', openssh: 'refused' },
  ]),
  {
    name: 'the line allows namespaces="payouts-approval"',
    options: 'namespaces="payouts-approval"',
    openssh: 'good',
  },
  {
    name: 'the line allows namespaces="payouts-*,!git"',
    options: 'namespaces="payouts-*,!git"',
    openssh: 'good',
  },
  {
    name: 'the line allows namespaces="git,file" only',
    options: 'namespaces="git,file"',
    openssh: 'refused',
  },
  { name: 'the file lists another key', listed: 'ecdsa', openssh: 'refused' },
  ...(['sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com'] as const).flatMap(
    (type): Row[] => [
      { name: `${type}, touched`, key: { type, touched: true }, openssh: 'good' },
      { name: `${type}, not touched`, key: { type, touched: false }, openssh: 'good', payouts: TOUCH_RULE },
    ],
  ),
];

/** A valid-after boundary: refused a second before, good at it. */
function validAfter(value: string, boundary: string, season: string): Row[] {
  const at = Date.parse(boundary);
  const options = `valid-after="${value}"`;
  return [
    {
      name: `${season} ${options}, a second before ${boundary}`,
      options,
      at: at - SECOND,
      openssh: 'refused',
    },
    { name: `${season} ${options}, at ${boundary}`, options, at, openssh: 'good' },
  ];
}

/** A valid-before boundary: good at it, refused a second after. */
function validBefore(value: string, boundary: string, season: string): Row[] {
  const at = Date.parse(boundary);
  const options = `valid-before="${value}"`;
  return [
    { name: `${season} ${options}, at ${boundary}`, options, at, openssh: 'good' },
    {
      name: `${season} ${options}, a second after ${boundary}`,
      options,
      at: at + SECOND,
      openssh: 'refused',
    },
  ];
}

// Berlin's standard time is UTC+1 and its summer time UTC+2. ssh-keygen reads a time without Z
// in standard time all year: "20260701" is 00:00 UTC+1, 01:00 by the clocks of a Berlin summer.
const TIMES: Row[] = [
  ...validAfter('20260701', '2026-06-30T23:00:00Z', 'summer'),
  {
    name: 'summer valid-after="20260701", at midnight by summer clocks (an hour before ssh-keygen counts it)',
    options: 'valid-after="20260701"',
    at: Date.parse('2026-06-30T22:00:00Z'),
    openssh: 'refused',
  },
  ...validAfter('20260701Z', '2026-07-01T00:00:00Z', 'summer'),
  ...validAfter('202607011230', '2026-07-01T11:30:00Z', 'summer'),
  ...validAfter('20260701123045', '2026-07-01T11:30:45Z', 'summer'),
  ...validBefore('20260701', '2026-06-30T23:00:00Z', 'summer'),
  {
    name: 'summer valid-before="20260701", half an hour after midnight by summer clocks',
    options: 'valid-before="20260701"',
    at: Date.parse('2026-06-30T22:30:00Z'),
    openssh: 'good',
  },
  ...validBefore('20260701Z', '2026-07-01T00:00:00Z', 'summer'),
  ...validBefore('202607011230Z', '2026-07-01T12:30:00Z', 'summer'),
  ...validAfter('20260115', '2026-01-14T23:00:00Z', 'winter'),
  ...validAfter('20260115Z', '2026-01-15T00:00:00Z', 'winter'),
  ...validAfter('202601151230', '2026-01-15T11:30:00Z', 'winter'),
  ...validBefore('20260115', '2026-01-14T23:00:00Z', 'winter'),
  ...validBefore('20260115Z', '2026-01-15T00:00:00Z', 'winter'),
  ...validBefore('20260115123045Z', '2026-01-15T12:30:45Z', 'winter'),
  // The night summer time ends, 02:30 comes twice: standard time has it once.
  ...validAfter('20261025023000', '2026-10-25T01:30:00Z', 'autumn'),
  ...validAfter('20260701z', '2026-07-01T00:00:00Z', 'lower-case z:'),
  ...validAfter('20260701UTC', '2026-07-01T00:00:00Z', 'UTC suffix:'),
  ...[
    '2026070',
    '2026070112',
    '2026070112304',
    '202607011230456',
    '2026-07-01',
    '202607012400',
    '20260732Z',
    '20261301Z',
    '20260700Z',
    '19700101Z',
    '19700101010000',
  ].map(
    (value): Row => ({
      name: `valid-after="${value}" is not a time`,
      options: `valid-after="${value}"`,
      openssh: 'refused',
    }),
  ),
  ...['20260230Z', '20260431', '20260701235960Z'].map(
    (value): Row => ({
      name: `valid-after="${value}", which ssh-keygen rolls over into another date`,
      options: `valid-after="${value}"`,
      openssh: 'good',
      payouts: NOT_IN_CALENDAR,
    }),
  ),
  {
    name: 'valid-after="2026 701", which ssh-keygen reads as 20260701',
    options: 'valid-after="2026 701"',
    at: Date.parse('2026-06-30T23:00:00Z'),
    openssh: 'good',
    payouts: SPACE_FOR_ZERO,
  },
];

/** The armored signature's lines: header, Base64 lines, footer. */
function armorLines(armored: string): { begin: string; body: string[]; end: string } {
  const lines = armored.trimEnd().split('\n');
  return { begin: lines[0]!, body: lines.slice(1, -1), end: lines.at(-1)! };
}

const lines = (parts: string[]) => `${parts.join('\n')}\n`;

const ARMOR: Row[] = (
  [
    ['as ssh-keygen wrote it', (a) => a, 'good'],
    ['without its last line break', (a) => a.trimEnd(), 'good'],
    ['with CR LF line ends', (a) => a.replace(/\n/g, '\r\n'), 'refused'],
    [
      'with CR LF ends on its Base64 lines only',
      (a) => {
        const { begin, body, end } = armorLines(a);
        return lines([begin, ...body.map((line) => `${line}\r`), end]);
      },
      'good',
    ],
    ['with text before the header', (a) => `Here is my approval:\n${a}`, 'refused'],
    ['with a blank line before the header', (a) => `\n${a}`, 'refused'],
    ['with a space before the header', (a) => ` ${a}`, 'refused'],
    ['with a space after the header', (a) => a.replace('-----\n', '----- \n'), 'refused'],
    ['with text after the footer', (a) => `${a}Thanks, Alice\n`, 'good'],
    ['with text after the footer on its line', (a) => `${a.trimEnd()} -- Alice\n`, 'good'],
    ['followed by a second signature', (a) => `${a}${a}`, 'good'],
    ['with blank lines after the footer', (a) => `${a}\n\n\n`, 'good'],
    [
      'without its footer',
      (a) => {
        const { begin, body } = armorLines(a);
        return lines([begin, ...body]);
      },
      'refused',
    ],
    [
      'with an indented footer',
      (a) => {
        const { begin, body, end } = armorLines(a);
        return lines([begin, ...body, ` ${end}`]);
      },
      'refused',
    ],
    [
      'with blank lines among its Base64 lines',
      (a) => {
        const { begin, body, end } = armorLines(a);
        return lines([begin, '', body[0]!, '', ...body.slice(1), '', end]);
      },
      'good',
    ],
    [
      'with indented Base64 lines',
      (a) => {
        const { begin, body, end } = armorLines(a);
        return lines([begin, ...body.map((line) => `\t ${line}`), end]);
      },
      'good',
    ],
    [
      'with its Base64 on one line',
      (a) => {
        const { begin, body, end } = armorLines(a);
        return lines([begin, body.join(''), end]);
      },
      'good',
    ],
    [
      'with a character of its Base64 changed',
      (a) => {
        const { body } = armorLines(a);
        return a.replace(body[1]!, `${body[1]!.slice(0, -1)}*`);
      },
      'refused',
    ],
    [
      'with its header in lower case',
      (a) => a.replace('BEGIN SSH SIGNATURE', 'begin ssh signature'),
      'refused',
    ],
  ] as [string, (armored: string) => string, Decision][]
).map(([name, armor, openssh]) => ({ name: `the signature ${name}`, armor, openssh }));

/** payouts' decision: the file read as `run` reads it, then the signature judged. */
function payoutsDecision(
  line: string,
  signature: string,
  at: number,
): { decision: Decision; message: string } {
  let allowedSigners: ReturnType<typeof parseAllowedSigners>;
  try {
    allowedSigners = parseAllowedSigners(`${line}\n`, 'allowed_signers', { timeZone: ZONE });
  } catch (error) {
    if (error instanceof AllowedSignersError) return { decision: 'refused', message: error.message };
    throw error;
  }
  const verdict = verifyApproval({
    statementText: STATEMENT,
    armoredSignature: signature,
    allowedSigners,
    now: at,
  });
  return verdict.ok
    ? { decision: 'good', message: `signed by ${verdict.principals.join(', ')}` }
    : { decision: 'refused', message: verdict.message };
}

describe.skipIf(!HAS_SSH_KEYGEN)(`payouts decides as ssh-keygen -Y verify does${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;
  const keys = new Map<KeyName, TestKey>();
  const signatures = new Map<string, string>();
  beforeAll(() => {
    folder = new KeyFolder();
    keys.set('ed25519', folder.key('ed25519', { type: 'ed25519' }));
    keys.set('ecdsa', folder.key('ecdsa', { type: 'ecdsa', bits: 256 }));
    keys.set('rsa', folder.key('rsa', { type: 'rsa', bits: 2048 }));
  });
  afterAll(() => folder?.cleanup());

  /** The signature and the public key line of a row's signer; ssh-keygen signs once per key. */
  const signed = (row: Row): { signature: string; publicKey: string } => {
    const key = row.key ?? 'ed25519';
    if (typeof key === 'object') {
      const hand = handKey(key.type);
      return {
        signature: handSign(hand, STATEMENT, { flags: key.touched ? 0x01 : 0x00 }),
        publicKey: publicKeyLine(hand),
      };
    }
    const namespace = row.signedFor ?? NAMESPACE;
    const cached = `${key} ${namespace}`;
    if (!signatures.has(cached)) signatures.set(cached, folder.sign(keys.get(key)!, STATEMENT, namespace));
    return { signature: signatures.get(cached)!, publicKey: keys.get(key)!.publicKey };
  };

  /** Gives the row to both verifiers and compares what each decides with the row. */
  const check = (row: Row) => {
    const { signature: armored, publicKey } = signed(row);
    const signature = row.armor ? row.armor(armored) : armored;
    const listed = row.listed ? keys.get(row.listed)!.publicKey : publicKey;
    const line = [PRINCIPAL, row.options, listed].filter(Boolean).join(' ');
    const at = row.at ?? LATER;
    const openssh = folder.verify(line, PRINCIPAL, signature, STATEMENT, NAMESPACE, { at, timeZone: ZONE });
    const byOpenssh: Decision = openssh.status === 0 ? 'good' : 'refused';
    const byPayouts = payoutsDecision(line, signature, at);
    const said = `ssh-keygen: ${openssh.output.trim()} | payouts: ${byPayouts.message}`;
    expect(byOpenssh, said).toBe(row.openssh);
    expect(byPayouts.decision, said).toBe(row.payouts?.decision ?? row.openssh);
    if (row.payouts) expect(byPayouts.message).toMatch(row.payouts.says);
  };

  const rowsOf = (rows: Row[]) => {
    for (const row of rows) {
      const verdict = row.payouts
        ? `ssh-keygen ${row.openssh}, payouts ${row.payouts.decision}: ${row.payouts.why}`
        : `both ${row.openssh}`;
      it(`${row.name}: ${verdict}`, () => check(row));
    }
  };

  describe('key types and namespaces', () => rowsOf(KEYS_AND_NAMESPACES));
  describe(`valid-after and valid-before, TZ=${ZONE}`, () => rowsOf(TIMES));
  describe('the armor', () => rowsOf(ARMOR));
});
