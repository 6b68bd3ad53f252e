/**
 * Why an approval is refused (docs/approval.md, "Signing an approval"). Each refusal is a
 * PayoutsError (src/errors.ts) with a reason from a closed union, so a caller can count,
 * report or map it to an exit code; its message says in words what is wrong and what to do.
 */
import { PayoutsError, type PayoutsErrorOptions } from '../errors.js';

/** What is wrong with a signature, before or after its cryptography is checked. */
export type SignatureProblem =
  /** Not a readable SSH signature: no header or footer, text that is not Base64, a name that is not text. */
  | 'armor'
  /** The bytes end before a field they announce, or a length is larger than what follows. */
  | 'truncated'
  /** Bytes left over after the last field. */
  | 'trailing'
  /** Not an SSHSIG blob (its first bytes are not "SSHSIG"). */
  | 'magic'
  /** An SSHSIG version this payouts does not read. */
  | 'version'
  /** A key type, signature algorithm or hash algorithm payouts does not accept. */
  | 'algorithm'
  /** A key that is not a valid key of its type (a point off its curve, a short RSA modulus). */
  | 'key'
  /** A signature algorithm that does not belong to the key type. */
  | 'mismatch'
  /** Signed for another purpose than approving payouts. */
  | 'namespace'
  /** A security key signature made without the user touching the key. */
  | 'presence'
  /** The cryptography says no: the text was changed, or another key signed. */
  | 'invalid';

/** A signature that cannot count: malformed, of another kind, or not matching its text. */
export class SignatureError extends PayoutsError {
  readonly problem: SignatureProblem;
  constructor(problem: SignatureProblem, message: string, options?: PayoutsErrorOptions) {
    super('USAGE', message, options);
    this.problem = problem;
  }
}

/** An approval statement that is not one payouts wrote (unknown version, missing field, ...). */
export class StatementError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('USAGE', message, options);
  }
}

/** An allowed-signers file payouts cannot read; the message names the file and the line. */
export class AllowedSignersError extends PayoutsError {
  readonly file: string;
  /** 1-based line number, or undefined for the file as a whole. */
  readonly line: number | undefined;
  constructor(file: string, line: number | undefined, message: string, options?: PayoutsErrorOptions) {
    super('CONFIG', `${file}${line === undefined ? '' : `:${line}`}: ${message}`, options);
    this.file = file;
    this.line = line;
  }
}

/** ssh-keygen could not sign: missing, refused the key or passphrase, or wrote no signature. */
export class SigningError extends PayoutsError {
  constructor(message: string, options?: PayoutsErrorOptions) {
    super('CONFIG', message, options);
  }
}

/**
 * An approval policy payouts refuses (does not parse, or could never be met): the message names
 * the file, the place in it (a JSON pointer such as `/rules/1/require`) and what was expected.
 */
export class PolicyError extends PayoutsError {
  readonly file: string;
  /** Where in the policy: a JSON pointer, '' for the whole document. */
  readonly pointer: string;
  constructor(file: string, pointer: string, message: string, options?: PayoutsErrorOptions) {
    super('CONFIG', `${file}: ${pointer === '' ? 'the policy' : pointer}: ${message}`, options);
    this.file = file;
    this.pointer = pointer;
  }
}
