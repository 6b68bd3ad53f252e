/**
 * SSHSIG signatures built by hand with node:crypto, field by field as PROTOCOL.sshsig and
 * PROTOCOL.u2f lay them out: for the security-key types no hardware can make here, and for
 * damaging a valid signature one field at a time. Independent of src/approvals/sshsig.ts except
 * for the wire writer.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { WireWriter } from '../../src/approvals/wire.js';

export type HandKeyType =
  | 'ssh-ed25519'
  | 'ssh-rsa'
  | 'sk-ssh-ed25519@openssh.com'
  | 'sk-ecdsa-sha2-nistp256@openssh.com';

/** A key pair made with node:crypto, with its SSH public key blob. */
export interface HandKey {
  readonly type: HandKeyType;
  readonly privateKey: KeyObject;
  readonly blob: Buffer;
  readonly application: string;
}

/** The fields of an SSHSIG blob, each replaceable to build a damaged one. */
export interface SshsigFields {
  magic: string;
  version: number;
  publicKey: Buffer;
  namespace: string;
  reserved: string;
  hash: string;
  signature: Buffer;
}

export function handKey(type: HandKeyType, application = 'ssh:'): HandKey {
  if (type === 'sk-ecdsa-sha2-nistp256@openssh.com') {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const point = Buffer.concat([
      Buffer.from([4]),
      Buffer.from(jwk.x!, 'base64url'),
      Buffer.from(jwk.y!, 'base64url'),
    ]);
    const blob = new WireWriter().string(type).string('nistp256').string(point).string(application).bytes();
    return { type, privateKey, blob, application };
  }
  if (type === 'ssh-rsa') {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' });
    const blob = new WireWriter()
      .string(type)
      .mpint(Buffer.from(jwk.e!, 'base64url'))
      .mpint(Buffer.from(jwk.n!, 'base64url'))
      .bytes();
    return { type, privateKey, blob, application };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const writer = new WireWriter().string(type).string(raw);
  if (type !== 'ssh-ed25519') writer.string(application);
  return { type, privateKey, blob: writer.bytes(), application };
}

/** The bytes SSHSIG signs (PROTOCOL.sshsig section 3). */
export function signedData(message: string | Buffer, namespace: string, hash: 'sha256' | 'sha512'): Buffer {
  return new WireWriter()
    .raw('SSHSIG')
    .string(namespace)
    .string('')
    .string(hash)
    .string(createHash(hash).update(message).digest())
    .bytes();
}

export interface HandSignOptions {
  namespace?: string;
  hash?: 'sha256' | 'sha512';
  /** Security keys: the flags the authenticator reports (0x01 = user present). */
  flags?: number;
  counter?: number;
  /** RSA: the signature algorithm (ssh-keygen uses rsa-sha2-512; an agent may use rsa-sha2-256). */
  rsa?: 'rsa-sha2-256' | 'rsa-sha2-512';
}

/** The fields of a valid signature of `message` by `key`. */
export function handSignatureFields(
  key: HandKey,
  message: string | Buffer,
  options: HandSignOptions = {},
): SshsigFields {
  const namespace = options.namespace ?? 'payouts-approval';
  const hash = options.hash ?? 'sha512';
  const data = signedData(message, namespace, hash);
  if (key.type === 'ssh-rsa') {
    const algorithm = options.rsa ?? 'rsa-sha2-512';
    const value = sign(algorithm === 'rsa-sha2-256' ? 'sha256' : 'sha512', data, key.privateKey);
    const signature = new WireWriter().string(algorithm).string(value).bytes();
    return { magic: 'SSHSIG', version: 1, publicKey: key.blob, namespace, reserved: '', hash, signature };
  }
  const inner = new WireWriter().string(key.type);
  if (key.type === 'ssh-ed25519') {
    inner.string(sign(null, data, key.privateKey));
  } else {
    const flags = options.flags ?? 0x01;
    const counter = options.counter ?? 7;
    // What the authenticator signs (PROTOCOL.u2f): sha256(application) flags counter sha256(data).
    const toSign = new WireWriter()
      .raw(createHash('sha256').update(key.application).digest())
      .uint8(flags)
      .uint32(counter)
      .raw(createHash('sha256').update(data).digest())
      .bytes();
    if (key.type === 'sk-ssh-ed25519@openssh.com') {
      inner.string(sign(null, toSign, key.privateKey));
    } else {
      const rs = sign('sha256', toSign, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
      inner.string(new WireWriter().mpint(rs.subarray(0, 32)).mpint(rs.subarray(32)).bytes());
    }
    inner.uint8(flags).uint32(counter);
  }
  return {
    magic: 'SSHSIG',
    version: 1,
    publicKey: key.blob,
    namespace,
    reserved: '',
    hash,
    signature: inner.bytes(),
  };
}

/** An SSHSIG blob from its fields. */
export function sshsigBlob(fields: SshsigFields): Buffer {
  return new WireWriter()
    .raw(fields.magic)
    .uint32(fields.version)
    .string(fields.publicKey)
    .string(fields.namespace)
    .string(fields.reserved)
    .string(fields.hash)
    .string(fields.signature)
    .bytes();
}

/** The armor ssh-keygen writes: Base64 in lines of 70 characters. */
export function armor(blob: Buffer): string {
  const base64 = blob.toString('base64');
  const lines = base64.match(/.{1,70}/g) ?? [];
  return `-----BEGIN SSH SIGNATURE-----\n${lines.join('\n')}\n-----END SSH SIGNATURE-----\n`;
}

/** A valid armored signature of `message` by `key`. */
export function handSign(key: HandKey, message: string | Buffer, options: HandSignOptions = {}): string {
  return armor(sshsigBlob(handSignatureFields(key, message, options)));
}

/** The `.pub` line of a hand-made key: `type base64`. */
export function publicKeyLine(key: HandKey): string {
  return `${key.type} ${key.blob.toString('base64')}`;
}
