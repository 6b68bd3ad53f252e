/**
 * The SSH wire encoding (RFC 4251 section 5) as SSHSIG signatures and public keys use it:
 * big-endian uint32, length-prefixed strings and mpints. Every read is bounded by what is left,
 * so a damaged or hostile blob is refused with a SignatureError naming the field, never read
 * past its end and never allocated to the size it claims.
 */
import { SignatureError } from './errors.js';

/** Reads fields front to back from one blob; `what` names the blob in messages. */
export class WireReader {
  private offset = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {}

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  /** Takes `length` raw bytes. */
  take(length: number, field: string): Buffer {
    if (length > this.remaining) {
      throw new SignatureError(
        'truncated',
        `${this.what} is cut short: it ends before its ${field} (${length} bytes wanted, ${this.remaining} left)`,
      );
    }
    const start = this.offset;
    this.offset += length;
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + start, length);
  }

  uint8(field: string): number {
    return this.take(1, field)[0]!;
  }

  uint32(field: string): number {
    return this.take(4, field).readUInt32BE(0);
  }

  /** A length-prefixed byte string. */
  string(field: string): Buffer {
    if (this.remaining < 4) {
      throw new SignatureError(
        'truncated',
        `${this.what} is cut short: it ends in the length of its ${field}`,
      );
    }
    const length = this.take(4, field).readUInt32BE(0);
    if (length > this.remaining) {
      throw new SignatureError(
        'truncated',
        `${this.what} is damaged: its ${field} claims ${length} bytes but only ${this.remaining} follow`,
      );
    }
    return this.take(length, field);
  }

  /** A length-prefixed name: printable ASCII, as SSH names its algorithms and namespaces. */
  name(field: string): string {
    const bytes = this.string(field);
    for (const byte of bytes) {
      if (byte < 0x20 || byte > 0x7e) {
        throw new SignatureError('armor', `${this.what} is damaged: its ${field} is not printable text`);
      }
    }
    return bytes.toString('latin1');
  }

  /**
   * A non-negative mpint with its leading zeros removed (OpenSSH's sshbuf_get_bignum2_bytes_direct):
   * a negative one, or one longer than `maxBytes`, is refused.
   */
  mpint(field: string, maxBytes: number): Buffer {
    const bytes = this.string(field);
    if (bytes.length > 0 && (bytes[0]! & 0x80) !== 0) {
      throw new SignatureError('key', `${this.what} is damaged: its ${field} is a negative number`);
    }
    let start = 0;
    while (start < bytes.length && bytes[start] === 0) start += 1;
    const trimmed = bytes.subarray(start);
    if (trimmed.length > maxBytes) {
      throw new SignatureError(
        'key',
        `${this.what} is damaged: its ${field} is larger than ${maxBytes} bytes`,
      );
    }
    return trimmed;
  }

  /** Refuses bytes left after the last field. */
  end(): void {
    if (this.remaining !== 0) {
      throw new SignatureError(
        'trailing',
        `${this.what} is damaged: ${this.remaining} unexpected bytes follow its last field`,
      );
    }
  }
}

/** Builds wire-encoded blobs: the data a signature covers, and test vectors. */
export class WireWriter {
  private readonly parts: Buffer[] = [];

  raw(bytes: Uint8Array | string): this {
    this.parts.push(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes));
    return this;
  }

  uint8(value: number): this {
    this.parts.push(Buffer.from([value & 0xff]));
    return this;
  }

  uint32(value: number): this {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(value >>> 0, 0);
    this.parts.push(bytes);
    return this;
  }

  string(bytes: Uint8Array | string): this {
    const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes);
    return this.uint32(body.length).raw(body);
  }

  /** A non-negative integer given as big-endian bytes, with the zero byte that keeps it positive. */
  mpint(magnitude: Uint8Array): this {
    let start = 0;
    while (start < magnitude.length && magnitude[start] === 0) start += 1;
    const trimmed = Buffer.from(magnitude.subarray(start));
    const body =
      trimmed.length > 0 && (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
    return this.string(body);
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}
