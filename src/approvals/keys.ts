/**
 * SSH public keys as approvers hold them (`~/.ssh/id_ed25519.pub`, a line of the allowed-signers
 * file, the key inside a signature): the wire blob, read strictly, turned into a node:crypto
 * KeyObject, and fingerprinted as `ssh-keygen -l` prints it. Private keys never come here: only
 * ssh-keygen reads them (sign.ts).
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { SignatureError } from './errors.js';
import { WireReader } from './wire.js';

/** The key types an approval may be signed with (docs/approval.md, "Signing an approval"). */
export type SshKeyType =
  | 'ssh-ed25519'
  | 'ecdsa-sha2-nistp256'
  | 'ecdsa-sha2-nistp384'
  | 'ecdsa-sha2-nistp521'
  | 'ssh-rsa'
  | 'sk-ssh-ed25519@openssh.com'
  | 'sk-ecdsa-sha2-nistp256@openssh.com';

export const SSH_KEY_TYPES: readonly SshKeyType[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];

/** An approver's public key. */
export interface SshPublicKey {
  readonly type: SshKeyType;
  /** The wire encoding: what a signature carries and what the fingerprint hashes. */
  readonly blob: Buffer;
  readonly key: KeyObject;
  /** `SHA256:` and the unpadded Base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  /** A security key's FIDO application (`ssh:` unless chosen otherwise), which it signs over. */
  readonly application?: string;
}

/** An ECDSA curve: its SSH name, its JWK name, its coordinate size and the hash it signs with. */
export interface Curve {
  readonly name: 'nistp256' | 'nistp384' | 'nistp521';
  readonly jwk: 'P-256' | 'P-384' | 'P-521';
  readonly bytes: number;
  readonly hash: 'sha256' | 'sha384' | 'sha512';
}

export const CURVES: Readonly<Record<Curve['name'], Curve>> = {
  nistp256: { name: 'nistp256', jwk: 'P-256', bytes: 32, hash: 'sha256' },
  nistp384: { name: 'nistp384', jwk: 'P-384', bytes: 48, hash: 'sha384' },
  nistp521: { name: 'nistp521', jwk: 'P-521', bytes: 66, hash: 'sha512' },
};

/** The curve of an ECDSA key type (plain or security key), undefined for other types. */
export function curveOf(type: SshKeyType): Curve | undefined {
  if (type === 'sk-ecdsa-sha2-nistp256@openssh.com') return CURVES.nistp256;
  const match = /^ecdsa-sha2-(nistp256|nistp384|nistp521)$/.exec(type);
  return match ? CURVES[match[1] as Curve['name']] : undefined;
}

// OpenSSH's bounds on RSA moduli (SSH_RSA_MINIMUM_MODULUS_SIZE, SSHBUF_MAX_BIGNUM).
const RSA_MIN_BITS = 1024;
const RSA_MAX_BYTES = 16384 / 8;

/** Key types refused by name, with what to do instead. */
const REFUSED_TYPES: Readonly<Record<string, string>> = {
  'ssh-dss': 'DSA keys are no longer accepted by OpenSSH: make an Ed25519 key (ssh-keygen -t ed25519)',
  'webauthn-sk-ecdsa-sha2-nistp256@openssh.com':
    'web-browser security key signatures are not accepted: sign with ssh-keygen -Y sign',
};

/** `SHA256:` and the unpadded Base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
export function fingerprintOf(blob: Uint8Array): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Why a key type is not accepted, in words; undefined when it is. */
export function keyTypeRefusal(type: string): string | undefined {
  if ((SSH_KEY_TYPES as readonly string[]).includes(type)) return undefined;
  const refused = REFUSED_TYPES[type];
  if (refused !== undefined) return `key type ${type} is not accepted: ${refused}`;
  if (type.includes('-cert-v01@openssh.com')) {
    return `key type ${type} is an OpenSSH certificate, which approvals do not accept: list and sign with the key itself`;
  }
  return `key type ${printable(type)} is not accepted (accepted: ${SSH_KEY_TYPES.join(', ')})`;
}

/** Reads a public key's wire blob strictly: its type, its fields, nothing after them. */
export function parsePublicKeyBlob(blob: Uint8Array, what = 'the public key'): SshPublicKey {
  const reader = new WireReader(blob, what);
  const type = reader.name('key type');
  const refusal = keyTypeRefusal(type);
  if (refusal !== undefined) throw new SignatureError('algorithm', refusal);
  const keyType = type as SshKeyType;
  let key: KeyObject;
  let application: string | undefined;
  const curve = curveOf(keyType);
  if (keyType === 'ssh-ed25519' || keyType === 'sk-ssh-ed25519@openssh.com') {
    const point = reader.string('Ed25519 key');
    if (point.length !== 32) {
      throw new SignatureError(
        'key',
        `${what} is damaged: an Ed25519 key is 32 bytes, this one ${point.length}`,
      );
    }
    key = importJwk({ kty: 'OKP', crv: 'Ed25519', x: point.toString('base64url') }, what);
  } else if (curve !== undefined) {
    const named = reader.name('curve name');
    if (named !== curve.name) {
      throw new SignatureError('mismatch', `${what} is damaged: a ${keyType} key names curve ${named}`);
    }
    const point = reader.string('curve point');
    // Only the uncompressed form (0x04, x, y), the one OpenSSH writes.
    if (point.length !== 1 + 2 * curve.bytes || point[0] !== 0x04) {
      throw new SignatureError(
        'key',
        `${what} is damaged: its ${curve.name} point is not ${1 + 2 * curve.bytes} bytes from 0x04`,
      );
    }
    key = importJwk(
      {
        kty: 'EC',
        crv: curve.jwk,
        x: point.subarray(1, 1 + curve.bytes).toString('base64url'),
        y: point.subarray(1 + curve.bytes).toString('base64url'),
      },
      what,
    );
  } else {
    const exponent = reader.mpint('RSA exponent', RSA_MAX_BYTES);
    const modulus = reader.mpint('RSA modulus', RSA_MAX_BYTES);
    const bits = bitLength(modulus);
    if (bits < RSA_MIN_BITS) {
      throw new SignatureError(
        'key',
        `${what} is an RSA key of ${bits} bits, fewer than the ${RSA_MIN_BITS} OpenSSH accepts: make an Ed25519 key`,
      );
    }
    // An even exponent or 1 is no RSA key (with e = 1 anyone could forge its signatures).
    const lowest = exponent.length === 0 ? 0 : exponent[exponent.length - 1]!;
    if ((lowest & 1) === 0 || (exponent.length === 1 && lowest < 3)) {
      throw new SignatureError(
        'key',
        `${what} is damaged: its RSA exponent is not an odd number of at least 3`,
      );
    }
    key = importJwk(
      { kty: 'RSA', n: modulus.toString('base64url'), e: exponent.toString('base64url') },
      what,
    );
  }
  if (keyType.startsWith('sk-')) application = reader.name('security key application');
  reader.end();
  const copy = Buffer.from(blob);
  return {
    type: keyType,
    blob: copy,
    key,
    fingerprint: fingerprintOf(copy),
    ...(application === undefined ? {} : { application }),
  };
}

/** A key as a `.pub` file or an allowed-signers line writes it: its type and its Base64 blob. */
export function parsePublicKeyText(type: string, base64: string, what = 'the public key'): SshPublicKey {
  const refusal = keyTypeRefusal(type);
  if (refusal !== undefined) throw new SignatureError('algorithm', refusal);
  if (!isCanonicalBase64(base64)) {
    throw new SignatureError('armor', `${what} is not Base64: copy the whole line of the .pub file`);
  }
  const parsed = parsePublicKeyBlob(Buffer.from(base64, 'base64'), what);
  if (parsed.type !== type) {
    throw new SignatureError('mismatch', `${what} says ${type} but its key is ${parsed.type}`);
  }
  return parsed;
}

/** Strict Base64: the standard alphabet, padded, with no bits beyond the data. */
export function isCanonicalBase64(text: string): boolean {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return false;
  return Buffer.from(text, 'base64').toString('base64') === text;
}

function importJwk(jwk: Record<string, string>, what: string): KeyObject {
  try {
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch (cause) {
    throw new SignatureError(
      'key',
      `${what} is not a valid ${jwk['kty'] === 'RSA' ? 'RSA' : 'elliptic curve'} key`,
      {
        cause,
      },
    );
  }
}

function bitLength(magnitude: Buffer): number {
  if (magnitude.length === 0) return 0;
  return (magnitude.length - 1) * 8 + (32 - Math.clz32(magnitude[0]!));
}

/** A name from a blob, safe to show: at most 60 characters of printable ASCII. */
export function printable(text: string): string {
  const shown = text.replace(/[^\x20-\x7e]/g, '?');
  return shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
}
