import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignatureError, type SignatureProblem } from '../../src/approvals/errors.js';
import { fingerprintOf, parsePublicKeyText } from '../../src/approvals/keys.js';
import {
  dearmor,
  parseArmoredSignature,
  parseSshSignatureBlob,
  verifyArmoredSignature,
  verifySshSignature,
} from '../../src/approvals/sshsig.js';
import { WireReader, WireWriter } from '../../src/approvals/wire.js';
import { mulberry32 } from '../../src/sandbox/prng.js';
import { HAS_SSH_KEYGEN, KeyFolder, type KeySpec, SSH_KEYGEN_NOTE, type TestKey } from './ssh-keygen.js';
import {
  armor,
  handKey,
  handSign,
  handSignatureFields,
  publicKeyLine,
  type SshsigFields,
  sshsigBlob,
} from './vectors.js';

const STATEMENT = [
  'payouts approval v1',
  'digest: 5f0c7a3a4be61c1c7b3e1e0a4a0d2f0f5f0c7a3a4be61c1c7b3e1e0a4a0d2f0f',
  'origin: https://payments.example.com',
  'sheet: payouts-2026-11.csv',
  'valid rows: 3',
  'total EUR: 1250.00',
  'total USD: 99.95',
  'day: 2026-11-26',
  '',
].join('\n');

/** The refusal a call throws; fails the test when it returns or throws anything else. */
function refusal(call: () => unknown): SignatureError {
  try {
    call();
  } catch (error) {
    if (error instanceof SignatureError) return error;
    throw new Error(`expected a SignatureError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a SignatureError, but the signature was accepted');
}

function expectRefused(call: () => unknown, problem: SignatureProblem, message?: RegExp): SignatureError {
  const error = refusal(call);
  expect(error.problem, error.message).toBe(problem);
  if (message) expect(error.message).toMatch(message);
  return error;
}

const KEY_TYPES: [label: string, spec: KeySpec, sshType: string, algorithm: string][] = [
  ['Ed25519', { type: 'ed25519' }, 'ssh-ed25519', 'ssh-ed25519'],
  ['ECDSA P-256', { type: 'ecdsa', bits: 256 }, 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp256'],
  ['ECDSA P-384', { type: 'ecdsa', bits: 384 }, 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp384'],
  ['ECDSA P-521', { type: 'ecdsa', bits: 521 }, 'ecdsa-sha2-nistp521', 'ecdsa-sha2-nistp521'],
  // rsa-sha2-512 is what ssh-keygen -Y sign uses for an RSA key.
  ['RSA 2048', { type: 'rsa', bits: 2048 }, 'ssh-rsa', 'rsa-sha2-512'],
];

describe.skipIf(!HAS_SSH_KEYGEN)(`signatures made by ssh-keygen -Y sign${SSH_KEYGEN_NOTE}`, () => {
  let folder: KeyFolder;
  const keys = new Map<string, TestKey>();

  beforeAll(() => {
    folder = new KeyFolder();
    for (const [label, spec] of KEY_TYPES) keys.set(label, folder.key(label.replace(/\W/g, ''), spec));
  });
  afterAll(() => folder?.cleanup());

  for (const [label, , sshType, algorithm] of KEY_TYPES) {
    it(`verifies a ${label} signature over a statement, with ssh-keygen's fingerprint`, () => {
      const key = keys.get(label)!;
      const signature = verifyArmoredSignature(folder.sign(key, STATEMENT), STATEMENT);
      expect(signature.publicKey.type).toBe(sshType);
      expect(signature.algorithm).toBe(algorithm);
      expect(signature.hashAlgorithm).toBe('sha512');
      expect(signature.namespace).toBe('payouts-approval');
      expect(signature.publicKey.fingerprint).toBe(key.fingerprint);
      const [type, base64] = key.publicKey.split(' ') as [string, string];
      expect(parsePublicKeyText(type, base64).fingerprint).toBe(key.fingerprint);
    });

    it(`refuses a ${label} signature over a statement changed by one character`, () => {
      const armored = folder.sign(keys.get(label)!, STATEMENT);
      expectRefused(
        () => verifyArmoredSignature(armored, STATEMENT.replace('1250.00', '1250.01')),
        'invalid',
        /does not match the text/,
      );
    });
  }

  it('verifies a signature whose message hash is sha256 (ssh-keygen -O hashalg=sha256)', () => {
    const armored = folder.sign(keys.get('RSA 2048')!, STATEMENT, 'payouts-approval', [
      '-O',
      'hashalg=sha256',
    ]);
    expect(verifyArmoredSignature(armored, STATEMENT).hashAlgorithm).toBe('sha256');
  });

  it('refuses an rsa-sha2-512 signature relabelled rsa-sha2-256', () => {
    const fields = fieldsOf(dearmor(folder.sign(keys.get('RSA 2048')!, STATEMENT)));
    const inner = new WireReader(fields.signature, 'inner');
    expect(inner.name('algorithm')).toBe('rsa-sha2-512');
    fields.signature = new WireWriter().string('rsa-sha2-256').string(inner.string('value')).bytes();
    expectRefused(() => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT), 'invalid');
  });

  it('verifies an rsa-sha2-256 signature (as an agent may make), which ssh-keygen accepts too', () => {
    const key = handKey('ssh-rsa');
    const armored = handSign(key, STATEMENT, { rsa: 'rsa-sha2-256' });
    expect(verifyArmoredSignature(armored, STATEMENT).algorithm).toBe('rsa-sha2-256');
    const result = folder.verify(
      `carol@example.com ${publicKeyLine(key)}\n`,
      'carol@example.com',
      armored,
      STATEMENT,
    );
    expect(result.status, result.output).toBe(0);
  });

  it('refuses a signature made for another namespace, naming both', () => {
    const armored = folder.sign(keys.get('Ed25519')!, STATEMENT, 'git');
    expectRefused(
      () => verifyArmoredSignature(armored, STATEMENT),
      'namespace',
      /"git", not "payouts-approval"/,
    );
  });

  it('refuses a signature whose key was swapped for another key of the same type', () => {
    const fields = fieldsOf(dearmor(folder.sign(keys.get('ECDSA P-256')!, STATEMENT)));
    const other = folder.key('other256', { type: 'ecdsa', bits: 256 });
    fields.publicKey = Buffer.from(other.publicKey.split(' ')[1]!, 'base64');
    expectRefused(() => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT), 'invalid');
  });

  it('refuses a signature algorithm that does not belong to the key type', () => {
    const fields = fieldsOf(dearmor(folder.sign(keys.get('Ed25519')!, STATEMENT)));
    fields.publicKey = Buffer.from(keys.get('ECDSA P-384')!.publicKey.split(' ')[1]!, 'base64');
    expectRefused(
      () => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT),
      'mismatch',
      /made with ssh-ed25519, which a ecdsa-sha2-nistp384 key does not sign with/,
    );
  });

  it('refuses a legacy SHA-1 RSA signature (ssh-rsa) by name', () => {
    const fields = fieldsOf(dearmor(folder.sign(keys.get('RSA 2048')!, STATEMENT)));
    const inner = new WireReader(fields.signature, 'inner');
    inner.name('algorithm');
    fields.signature = new WireWriter().string('ssh-rsa').string(inner.string('value')).bytes();
    expectRefused(() => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT), 'algorithm', /SHA-1/);
  });
});

describe('security key signatures (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256), built by hand', () => {
  for (const type of ['sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com'] as const) {
    it(`verifies a touched ${type} signature and reads its flags and counter`, () => {
      const key = handKey(type);
      const signature = verifyArmoredSignature(handSign(key, STATEMENT, { counter: 42 }), STATEMENT);
      expect(signature.publicKey.type).toBe(type);
      expect(signature.publicKey.application).toBe('ssh:');
      expect(signature.securityKey).toEqual({ flags: 0x01, counter: 42 });
      expect(signature.publicKey.fingerprint).toBe(fingerprintOf(key.blob));
    });

    it(`refuses a ${type} signature whose flags byte was changed`, () => {
      const key = handKey(type);
      const fields = handSignatureFields(key, STATEMENT);
      // The flags byte stands 5 bytes from the end (flags, then the 4-byte counter).
      const flagsAt = fields.signature.length - 5;
      expect(fields.signature[flagsAt]).toBe(0x01);
      fields.signature = Buffer.from(fields.signature);
      fields.signature[flagsAt] = 0x05;
      expectRefused(() => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT), 'invalid');
    });

    it(`refuses a ${type} signature made without touching the key`, () => {
      const key = handKey(type);
      expectRefused(
        () => verifyArmoredSignature(handSign(key, STATEMENT, { flags: 0x00 }), STATEMENT),
        'presence',
        /without touching the key \(flags 0x00\): payouts requires the touch, although ssh-keygen -Y verify would accept it/,
      );
    });

    it(`refuses a ${type} signature checked against another application`, () => {
      const key = handKey(type, 'ssh:');
      const fields = handSignatureFields(key, STATEMENT);
      // The same key and signature, the key blob naming another application than the one signed.
      fields.publicKey = new WireWriter()
        .raw(key.blob.subarray(0, key.blob.length - 4 - 'ssh:'.length))
        .string('ssh:other')
        .bytes();
      expect(parseSshSignatureBlob(sshsigBlob(fields)).publicKey.application).toBe('ssh:other');
      expectRefused(() => verifyArmoredSignature(armor(sshsigBlob(fields)), STATEMENT), 'invalid');
    });
  }

  it.skipIf(!HAS_SSH_KEYGEN)(
    `is what ssh-keygen -Y verify accepts, with ssh-keygen's fingerprint${SSH_KEYGEN_NOTE}`,
    () => {
      const folder = new KeyFolder();
      try {
        for (const type of ['sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com'] as const) {
          const key = handKey(type);
          const line = publicKeyLine(key);
          const result = folder.verify(
            `alice@example.com ${line}\n`,
            'alice@example.com',
            handSign(key, STATEMENT),
            STATEMENT,
          );
          expect(result.output).toContain('Good "payouts-approval" signature for alice@example.com');
          expect(result.status).toBe(0);
          expect(folder.fingerprint(line)).toBe(fingerprintOf(key.blob));
          const [keyType, base64] = line.split(' ') as [string, string];
          expect(parsePublicKeyText(keyType, base64).fingerprint).toBe(fingerprintOf(key.blob));
        }
      } finally {
        folder.cleanup();
      }
    },
  );
});

describe('malformed signatures: a clear refusal, never a crash or an acceptance', () => {
  const key = handKey('ssh-ed25519');
  const valid = () => handSignatureFields(key, STATEMENT);
  const blob = sshsigBlob(valid());
  /** Parsing the valid blob with some fields changed. */
  const parseWith = (changes: Partial<SshsigFields>) => () =>
    parseSshSignatureBlob(sshsigBlob({ ...valid(), ...changes }));

  it('accepts the untouched vector (the refusals below are about the damage alone)', () => {
    expect(verifyArmoredSignature(armor(blob), STATEMENT).publicKey.fingerprint).toBe(
      fingerprintOf(key.blob),
    );
  });

  it('refuses text that is not an armored signature', () => {
    expectRefused(
      () => parseArmoredSignature(''),
      'armor',
      /does not start with -----BEGIN SSH SIGNATURE-----/,
    );
    expectRefused(() => parseArmoredSignature('ssh-ed25519 AAAAC3Nza'), 'armor');
    expectRefused(
      () => parseArmoredSignature(armor(blob).replace('-----END SSH SIGNATURE-----', '')),
      'armor',
      /missing/,
    );
    expectRefused(() => parseArmoredSignature(armor(blob).replace('U1NI', 'U1N*')), 'armor', /not Base64/);
    expectRefused(
      () => parseArmoredSignature(`-----BEGIN SSH SIGNATURE-----${'A'.repeat(70_000)}`),
      'armor',
      /far more/,
    );
  });

  it('refuses CR LF line ends and anything before the header, as ssh-keygen -Y verify does, saying why', () => {
    expectRefused(
      () => parseArmoredSignature(armor(blob).replace(/\n/g, '\r\n')),
      'armor',
      /Windows line ends \(CR LF\), which ssh-keygen -Y verify refuses/,
    );
    expectRefused(
      () => parseArmoredSignature(`\n${armor(blob)}`),
      'armor',
      /blank space before its first line -----BEGIN SSH SIGNATURE-----, which ssh-keygen -Y verify refuses/,
    );
    expectRefused(
      () => parseArmoredSignature(`Here is my signature:\n${armor(blob)}`),
      'armor',
      /has text before its first line -----BEGIN SSH SIGNATURE-----/,
    );
    expectRefused(
      () => parseArmoredSignature(armor(blob).replace('-----\n', '----- \n')),
      'armor',
      /must be alone on its line/,
    );
  });

  it('reads what ssh-keygen -Y verify reads: blank space in the Base64, anything after the footer', () => {
    const spaced = armor(blob)
      .replace(/\n(?=[A-Za-z0-9+/])/g, '\n\n  ')
      .replace(/\n(?=-----END)/, '\r\n\n');
    expect(parseArmoredSignature(spaced).namespace).toBe('payouts-approval');
    // A footer followed by a note, or by a second signature: ssh-keygen reads the first and stops.
    const other = armor(sshsigBlob({ ...valid(), namespace: 'git' }));
    expect(parseArmoredSignature(`${armor(blob)}thanks, alice\n${other}`).namespace).toBe('payouts-approval');
    expect(parseArmoredSignature(armor(blob).trimEnd()).namespace).toBe('payouts-approval');
  });

  it('refuses a blob of another kind: wrong magic, wrong version', () => {
    expectRefused(parseWith({ magic: 'SSHSIH' }), 'magic', /SSHSIG/);
    expectRefused(parseWith({ version: 2 }), 'version', /version 2/);
    expectRefused(parseWith({ version: 0 }), 'version');
  });

  it('refuses every truncation of a valid blob', () => {
    for (let length = 0; length < blob.length; length += 1) {
      const error = refusal(() => verifyArmoredSignature(armor(blob.subarray(0, length)), STATEMENT));
      expect(['truncated', 'magic', 'armor', 'trailing', 'invalid']).toContain(error.problem);
    }
  });

  it('refuses trailing bytes after the blob and inside the signature value', () => {
    expectRefused(
      () => parseSshSignatureBlob(Buffer.concat([blob, Buffer.from([0])])),
      'trailing',
      /1 unexpected bytes/,
    );
    const fields = valid();
    fields.signature = Buffer.concat([fields.signature, Buffer.from([0, 0])]);
    expectRefused(() => parseSshSignatureBlob(sshsigBlob(fields)), 'trailing');
  });

  it('refuses a huge length without reading or allocating it', () => {
    const damaged = Buffer.from(blob);
    damaged.writeUInt32BE(0xffffffff, 10); // the public key's length, after magic and version
    expectRefused(() => parseSshSignatureBlob(damaged), 'truncated', /claims 4294967295 bytes/);
  });

  it('refuses unknown key types, hash algorithms, certificates and an empty namespace', () => {
    const unknownKey = new WireWriter().string('ssh-foo').string(Buffer.alloc(32)).bytes();
    expectRefused(parseWith({ publicKey: unknownKey }), 'algorithm', /ssh-foo/);
    const cert = new WireWriter().string('ssh-ed25519-cert-v01@openssh.com').bytes();
    expectRefused(parseWith({ publicKey: cert }), 'algorithm', /certificate/);
    const dsa = new WireWriter().string('ssh-dss').bytes();
    expectRefused(parseWith({ publicKey: dsa }), 'algorithm', /DSA/);
    expectRefused(parseWith({ hash: 'md5' }), 'algorithm', /md5/);
    expectRefused(parseWith({ namespace: '' }), 'namespace');
  });

  it('refuses keys that are not valid keys of their type', () => {
    const shortEd = new WireWriter().string('ssh-ed25519').string(Buffer.alloc(31)).bytes();
    expectRefused(parseWith({ publicKey: shortEd }), 'key', /32 bytes/);
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]);
    const ec = new WireWriter().string('ecdsa-sha2-nistp256').string('nistp256').string(offCurve).bytes();
    expectRefused(parseWith({ publicKey: ec }), 'key');
    const wrongCurve = new WireWriter()
      .string('ecdsa-sha2-nistp256')
      .string('nistp384')
      .string(offCurve)
      .bytes();
    expectRefused(parseWith({ publicKey: wrongCurve }), 'mismatch');
    const smallRsa = new WireWriter()
      .string('ssh-rsa')
      .mpint(Buffer.from([1, 0, 1]))
      .mpint(Buffer.alloc(64, 0xff))
      .bytes();
    expectRefused(parseWith({ publicKey: smallRsa }), 'key', /512 bits/);
    for (const exponent of [[1], [2], [1, 0]]) {
      const rsa = new WireWriter()
        .string('ssh-rsa')
        .mpint(Buffer.from(exponent))
        .mpint(Buffer.alloc(256, 0xff))
        .bytes();
      expectRefused(parseWith({ publicKey: rsa }), 'key', /exponent is not an odd number of at least 3/);
    }
  });

  it('refuses a signature of the right shape by another key', () => {
    const other = handKey('ssh-ed25519');
    const fields = { ...valid(), publicKey: other.blob };
    expectRefused(() => verifySshSignature(parseSshSignatureBlob(sshsigBlob(fields)), STATEMENT), 'invalid');
  });

  it('survives 4000 seeded random mutations of a valid blob: each one a SignatureError, none accepted', () => {
    const random = mulberry32(20261126);
    const pick = (n: number) => Math.floor(random() * n);
    let refused = 0;
    for (let round = 0; round < 4000; round += 1) {
      let mutated = Buffer.from(blob);
      const kind = round % 4;
      if (kind === 0) {
        // 1 to 4 bytes changed (XOR with a non-zero value: always a real change).
        for (let n = 1 + pick(4); n > 0; n -= 1) mutated[pick(mutated.length)]! ^= 1 + pick(255);
      } else if (kind === 1) {
        const at = pick(mutated.length + 1);
        mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([pick(256)]), mutated.subarray(at)]);
      } else if (kind === 2) {
        const at = pick(mutated.length);
        mutated = Buffer.concat([mutated.subarray(0, at), mutated.subarray(at + 1 + pick(8))]);
      } else {
        // A length field set to a random large value.
        const at = pick(mutated.length - 4);
        mutated.writeUInt32BE((pick(0x10000) << 16) >>> 0, at);
      }
      if (mutated.equals(blob)) continue;
      refusal(() => verifyArmoredSignature(armor(mutated), STATEMENT));
      refused += 1;
    }
    expect(refused).toBeGreaterThan(3900);
  });
});

/** The fields of an SSHSIG blob, to rebuild it with one changed. */
function fieldsOf(blob: Buffer): SshsigFields {
  const reader = new WireReader(blob, 'blob');
  const magic = reader.take(6, 'magic').toString('latin1');
  return {
    magic,
    version: reader.uint32('version'),
    publicKey: Buffer.from(reader.string('key')),
    namespace: reader.string('namespace').toString(),
    reserved: reader.string('reserved').toString(),
    hash: reader.string('hash').toString(),
    signature: Buffer.from(reader.string('signature')),
  };
}
