/**
 * OpenSSH's SSHSIG signatures, what `ssh-keygen -Y sign` writes: the armor, the blob (magic
 * "SSHSIG", version 1, public key, namespace, reserved, hash algorithm, signature) and the
 * check of a signature over a message, in-process with node:crypto. Read strictly: a damaged,
 * unknown or mismatched signature is a SignatureError saying what is wrong, never a crash and
 * never an accepted signature (docs/approval.md, "Signing an approval").
 */
import { constants, createHash, verify as cryptoVerify } from 'node:crypto';
import { SignatureError } from './errors.js';
import { curveOf, isCanonicalBase64, parsePublicKeyBlob, printable, type SshPublicKey } from './keys.js';
import { WireReader, WireWriter } from './wire.js';

/** The namespace of a payouts approval: `ssh-keygen -Y sign -n payouts-approval`. */
export const APPROVAL_NAMESPACE = 'payouts-approval';

const MAGIC = 'SSHSIG';
const VERSION = 1;
const BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';
/** A signature is a few hundred bytes (4 KB with a 16384-bit RSA key): more is not one. */
const MAX_ARMORED_CHARS = 64 * 1024;

/** The hash of the message SSHSIG signs (PROTOCOL.sshsig allows these two). */
export type SshsigHash = 'sha256' | 'sha512';

/** A security key's report on its signature: bit 0x01 says the user touched the key. */
export interface SecurityKeyDetails {
  readonly flags: number;
  readonly counter: number;
}

/** An SSHSIG signature, read but not yet checked. */
export interface SshSignature {
  readonly publicKey: SshPublicKey;
  readonly namespace: string;
  readonly hashAlgorithm: SshsigHash;
  /** The signature algorithm: the key type, or rsa-sha2-256 / rsa-sha2-512 for an RSA key. */
  readonly algorithm: string;
  /** The raw signature: 64 bytes for Ed25519, r and s side by side for ECDSA, the RSA block. */
  readonly signature: Buffer;
  readonly securityKey?: SecurityKeyDetails;
}

/** The FIDO user-presence flag (OpenSSH's SSH_SK_USER_PRESENCE_REQD). */
export const USER_PRESENT = 0x01;

/**
 * The blob inside the armor, read as ssh-keygen -Y verify reads it (sshsig.c sshsig_dearmor):
 * the file starts with the header line ending in a bare LF; the first LF followed by the footer
 * ends the Base64, which may hold blank space anywhere; what follows the footer is ignored.
 * Anything ssh-keygen refuses is refused, saying why in words.
 */
export function dearmor(text: string): Buffer {
  if (text.length > MAX_ARMORED_CHARS) {
    throw new SignatureError(
      'armor',
      `this is not an SSH signature: ${text.length} characters is far more than one holds`,
    );
  }
  refuseHeader(text);
  const body = text.slice(BEGIN.length + 1);
  const end = body.indexOf(`\n${END}`);
  if (end < 0) {
    throw new SignatureError(
      'armor',
      `this SSH signature is cut short: its last line ${END} is missing (ssh-keygen -Y verify refuses it too)`,
    );
  }
  const base64 = body.slice(0, end).replace(/[\t\n\v\f\r ]/g, '');
  if (!isCanonicalBase64(base64)) {
    throw new SignatureError(
      'armor',
      'this SSH signature is damaged: its lines are not Base64 (was it edited?)',
    );
  }
  return Buffer.from(base64, 'base64');
}

/**
 * Refuses a file that does not start with the header line as ssh-keygen writes it: ssh-keygen
 * compares the file's first bytes with the header and its LF, so text or blank space before it,
 * or a CR LF after it, make the signature one it refuses.
 */
function refuseHeader(text: string): void {
  if (text.startsWith(`${BEGIN}\n`)) return;
  const redo = 'give the .sig file exactly as ssh-keygen -Y sign wrote it';
  if (text.startsWith(`${BEGIN}\r\n`)) {
    throw new SignatureError(
      'armor',
      `this SSH signature has Windows line ends (CR LF), which ssh-keygen -Y verify refuses: ${redo}, or save it with Unix line ends (LF)`,
    );
  }
  if (text.startsWith(BEGIN)) {
    throw new SignatureError(
      'armor',
      `this SSH signature is damaged: ${BEGIN} must be alone on its line, as ssh-keygen -Y verify requires`,
    );
  }
  const at = text.indexOf(BEGIN);
  if (at < 0) {
    throw new SignatureError(
      'armor',
      `this is not an SSH signature: it does not start with ${BEGIN} (give the .sig file ssh-keygen -Y sign wrote)`,
    );
  }
  const before = text.slice(0, at).trim() === '' ? 'blank space' : 'text';
  throw new SignatureError(
    'armor',
    `this SSH signature has ${before} before its first line ${BEGIN}, which ssh-keygen -Y verify refuses (it reads a signature only from the file's first byte): ${redo}`,
  );
}

/** Reads an SSHSIG blob strictly, field by field, with nothing after the last. */
export function parseSshSignatureBlob(blob: Uint8Array): SshSignature {
  const reader = new WireReader(blob, 'the signature');
  if (
    blob.length < MAGIC.length ||
    Buffer.from(blob.subarray(0, MAGIC.length)).toString('latin1') !== MAGIC
  ) {
    throw new SignatureError('magic', 'this is not an SSH signature: its data does not start with SSHSIG');
  }
  reader.take(MAGIC.length, 'magic');
  const version = reader.uint32('version');
  if (version !== VERSION) {
    throw new SignatureError(
      'version',
      `this SSH signature has format version ${version}, but payouts reads version ${VERSION}, what ssh-keygen writes`,
    );
  }
  const publicKey = parsePublicKeyBlob(reader.string('public key'), "the signature's public key");
  const namespace = reader.name('namespace');
  reader.string('reserved field'); // PROTOCOL.sshsig: reserved for future use, ignored when not empty.
  const hash = reader.name('hash algorithm');
  const inner = reader.string('signature');
  reader.end();
  if (namespace === '') throw new SignatureError('namespace', 'this SSH signature has an empty namespace');
  if (hash !== 'sha256' && hash !== 'sha512') {
    throw new SignatureError(
      'algorithm',
      `this SSH signature hashes with ${printable(hash)}, but only sha256 and sha512 are accepted`,
    );
  }
  return { publicKey, namespace, hashAlgorithm: hash, ...parseInnerSignature(inner, publicKey) };
}

/** Reads an armored signature (the text of a .sig file). */
export function parseArmoredSignature(text: string): SshSignature {
  return parseSshSignatureBlob(dearmor(text));
}

/**
 * Checks the signature over `message` (the exact bytes that were signed) for `namespace`:
 * returns quietly when it holds, throws a SignatureError saying why when it does not.
 */
export function verifySshSignature(
  signature: SshSignature,
  message: Uint8Array | string,
  namespace: string = APPROVAL_NAMESPACE,
): void {
  if (signature.namespace !== namespace) {
    throw new SignatureError(
      'namespace',
      `this signature was made for "${printable(signature.namespace)}", not "${namespace}": sign with ssh-keygen -Y sign -n ${namespace}`,
    );
  }
  const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  const signed = new WireWriter()
    .raw(MAGIC)
    .string(namespace)
    .string('')
    .string(signature.hashAlgorithm)
    .string(createHash(signature.hashAlgorithm).update(bytes).digest())
    .bytes();
  const { publicKey, securityKey } = signature;
  const curve = curveOf(publicKey.type);
  const rsa = publicKey.type === 'ssh-rsa' ? rsaBlock(signature.signature, publicKey) : undefined;
  let valid: boolean;
  try {
    if (publicKey.type === 'ssh-ed25519') {
      valid = cryptoVerify(null, signed, publicKey.key, signature.signature);
    } else if (securityKey !== undefined) {
      // A FIDO key signs the hash of its application, its flags and counter, and the hash of
      // the data (OpenSSH ssh-ed25519-sk.c and ssh-ecdsa-sk.c).
      const data = new WireWriter()
        .raw(
          createHash('sha256')
            .update(publicKey.application ?? '', 'utf8')
            .digest(),
        )
        .uint8(securityKey.flags)
        .uint32(securityKey.counter)
        .raw(createHash('sha256').update(signed).digest())
        .bytes();
      valid =
        curve === undefined
          ? cryptoVerify(null, data, publicKey.key, signature.signature)
          : cryptoVerify(
              'sha256',
              data,
              { key: publicKey.key, dsaEncoding: 'ieee-p1363' },
              signature.signature,
            );
    } else if (curve !== undefined) {
      valid = cryptoVerify(
        curve.hash,
        signed,
        { key: publicKey.key, dsaEncoding: 'ieee-p1363' },
        signature.signature,
      );
    } else {
      const hash = signature.algorithm === 'rsa-sha2-256' ? 'sha256' : 'sha512';
      valid = cryptoVerify(
        hash,
        signed,
        { key: publicKey.key, padding: constants.RSA_PKCS1_PADDING },
        rsa ?? signature.signature,
      );
    }
  } catch (cause) {
    // OpenSSL refusing the signature's shape: as wrong as a signature that does not match.
    throw new SignatureError(
      'invalid',
      'this signature does not match the text: the text was changed or another key signed',
      {
        cause,
      },
    );
  }
  if (!valid) {
    throw new SignatureError(
      'invalid',
      'this signature does not match the text: the text was changed or another key signed',
    );
  }
  // payouts' own rule, stricter than ssh-keygen -Y verify, which does not look at the flags: an
  // approval is a person's act, so the key must have been touched (docs/approval.md, "Hardware
  // keys"). ssh-keygen makes security keys that require the touch unless told otherwise.
  if (securityKey !== undefined && (securityKey.flags & USER_PRESENT) === 0) {
    throw new SignatureError(
      'presence',
      `this security key signature was made without touching the key (flags 0x${securityKey.flags.toString(16).padStart(2, '0')}): payouts requires the touch, although ssh-keygen -Y verify would accept it, so sign again and touch the key`,
    );
  }
}

/** Parses and checks an armored signature over `message` in one step. */
export function verifyArmoredSignature(
  armored: string,
  message: Uint8Array | string,
  namespace: string = APPROVAL_NAMESPACE,
): SshSignature {
  const signature = parseArmoredSignature(armored);
  verifySshSignature(signature, message, namespace);
  return signature;
}

/** The signature algorithms each key type signs with. */
function algorithmsFor(key: SshPublicKey): readonly string[] {
  return key.type === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256'] : [key.type];
}

type InnerSignature = Pick<SshSignature, 'algorithm' | 'signature' | 'securityKey'>;

/** The signature field: its algorithm, which must belong to the key, and its values. */
function parseInnerSignature(inner: Buffer, key: SshPublicKey): InnerSignature {
  const reader = new WireReader(inner, 'the signature value');
  const algorithm = reader.name('signature algorithm');
  if (!algorithmsFor(key).includes(algorithm)) {
    if (key.type === 'ssh-rsa' && algorithm === 'ssh-rsa') {
      throw new SignatureError(
        'algorithm',
        'this RSA signature uses SHA-1 (ssh-rsa), which SSH signatures do not accept: sign again with a current ssh-keygen (rsa-sha2-512)',
      );
    }
    throw new SignatureError(
      'mismatch',
      `this signature says it was made with ${printable(algorithm)}, which a ${key.type} key does not sign with`,
    );
  }
  const curve = curveOf(key.type);
  let signature: Buffer;
  if (curve !== undefined) {
    const values = new WireReader(reader.string('ECDSA signature'), 'the ECDSA signature');
    const r = values.mpint('r', curve.bytes);
    const s = values.mpint('s', curve.bytes);
    values.end();
    // r and s side by side, each padded to the curve's size (IEEE P1363, as node:crypto reads them).
    signature = Buffer.concat([
      Buffer.alloc(curve.bytes - r.length),
      r,
      Buffer.alloc(curve.bytes - s.length),
      s,
    ]);
  } else {
    signature = reader.string('signature value');
    if (key.type !== 'ssh-rsa' && signature.length !== 64) {
      throw new SignatureError(
        'invalid',
        `this Ed25519 signature is ${signature.length} bytes instead of 64`,
      );
    }
  }
  let securityKey: SecurityKeyDetails | undefined;
  if (key.type.startsWith('sk-')) {
    securityKey = {
      flags: reader.uint8('security key flags'),
      counter: reader.uint32('security key counter'),
    };
  }
  reader.end();
  return { algorithm, signature, ...(securityKey === undefined ? {} : { securityKey }) };
}

/** An RSA signature block padded to the modulus's length, as OpenSSH accepts a short one. */
function rsaBlock(signature: Buffer, key: SshPublicKey): Buffer {
  const bytes = Math.ceil((key.key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (signature.length > bytes) {
    throw new SignatureError(
      'invalid',
      `this RSA signature is ${signature.length} bytes, longer than its key's ${bytes}`,
    );
  }
  return signature.length === bytes
    ? signature
    : Buffer.concat([Buffer.alloc(bytes - signature.length), signature]);
}
