/**
 * What `payouts approve` checks of a signature before the register keeps it, and the files it
 * reads and writes (approval.md "Signing an approval"): a signature that does not verify, or a
 * statement that does not name this sheet now, is exit 4; a file that cannot be read or written
 * is exit 2, said in words. Nothing is recorded in either case.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, errnoInWords, errnoOf, GuardError, systemErrorInWords, UsageError } from '../errors.js';
import type { Register } from '../register/types.js';
import { SignatureError, StatementError } from './errors.js';
import { APPROVAL_NAMESPACE, verifyArmoredSignature } from './sshsig.js';
import { parseStatement } from './statement.js';
import { withoutWithdrawn } from './withdrawals.js';

/** The fingerprint of the key whose signature over `text` verifies; `over` names the text (exit 4 otherwise). */
export function signerOf(signature: string, text: string, over: string): string {
  try {
    return verifyArmoredSignature(signature, text, APPROVAL_NAMESPACE).publicKey.fingerprint;
  } catch (error) {
    if (!(error instanceof SignatureError)) throw error;
    throw new GuardError(
      `the signature does not verify over ${over}: ${error.message}. Nothing was recorded`,
      {
        cause: error,
      },
    );
  }
}

/** A signed text must name this sheet's current digest and this service (exit 4 otherwise). */
export function coversThisSheet(
  text: string,
  current: { digest: string; origin: string; sheet: string },
  file: string,
): void {
  let signed: ReturnType<typeof parseStatement>;
  try {
    signed = parseStatement(text);
  } catch (error) {
    if (!(error instanceof StatementError)) throw error;
    throw new GuardError(`${file}: ${error.message}. Nothing was recorded`, { cause: error });
  }
  if (signed.origin !== current.origin) {
    throw new GuardError(
      `${file} approves ${signed.sheet} for ${signed.origin}, not ${current.origin}: sign the statement payouts approve ${current.sheet} --statement prints for this service. Nothing was recorded`,
    );
  }
  if (signed.digest !== current.digest) {
    throw new GuardError(
      `${file} names the digest ${signed.digest}, and ${current.sheet} now has ${current.digest}: the sheet (or what the register knows of its payees) changed since it was signed, or another sheet was signed - sign the statement payouts approve ${current.sheet} --statement prints now. Nothing was recorded`,
    );
  }
}

/**
 * The approvals `register` holds of this digest for this service, as recorded (principals as
 * the allowed-signers file named them when recorded): what validate's report shows. `run`
 * checks each signature again before counting it.
 */
export async function approvalsOf(
  register: Register,
  digest: string,
  origin: string,
): Promise<{ principal: string; fingerprint: string; recordedAt: string }[]> {
  // A register an older payouts wrote, read without migrating it, holds no approvals.
  const records = withoutWithdrawn(
    await register.approvals({ digest }).catch(() => []),
    await register.withdrawals({ digest }).catch(() => []),
  );
  return records
    .filter((record) => record.origin === origin)
    .flatMap((record) =>
      (record.principals.length > 0 ? record.principals : ['(key not checked against allowed signers)']).map(
        (principal) => ({ principal, fingerprint: record.fingerprint, recordedAt: record.recordedAt }),
      ),
    );
}

/**
 * `--out FILE` checked before signing: its folder exists and may be written, and it is not a
 * folder itself. A ConfigError (exit 2): nothing was signed, nothing recorded.
 */
export async function checkSignatureOut(out: string): Promise<void> {
  const refuse = (code: string, cause?: unknown): never => {
    throw signatureOutError(out, code, 'Nothing was signed, and nothing was recorded in the register', cause);
  };
  const target = await stat(out).catch(() => undefined);
  if (target?.isDirectory()) refuse('EISDIR');
  const folder = path.dirname(path.resolve(out));
  try {
    if (!(await stat(folder)).isDirectory()) refuse('ENOTDIR');
    await access(folder, constants.W_OK);
  } catch (cause) {
    if (cause instanceof ConfigError) throw cause;
    refuse(errnoOf(cause) ?? 'EIO', cause);
  }
}

/**
 * Writes the armored signature to `--out` under a temporary name beside it, then renames it
 * into place: a failure leaves no half-written file, and an older file stays as it was.
 */
export async function writeSignatureOut(out: string, signature: string): Promise<void> {
  const temp = path.join(
    path.dirname(out),
    `.${path.basename(out)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`,
  );
  try {
    await writeFile(temp, signature, { flag: 'wx' });
    await rename(temp, out);
  } catch (cause) {
    await rm(temp, { force: true }).catch(() => {});
    throw signatureOutError(
      out,
      errnoOf(cause) ?? 'EIO',
      'The signature was made but not recorded in the register: sign again with an --out that can be written, or without --out',
      cause,
    );
  }
}

/** The words of an --out that cannot be written: the path, why, what to do, what was left undone. */
function signatureOutError(out: string, code: string, undone: string, cause?: unknown): ConfigError {
  const advice: Record<string, string> = {
    ENOENT: 'its folder does not exist: create it, or give --out a file in a folder that exists',
    ENOTDIR: 'a part of its path is a file, not a folder: give --out a file in a folder that exists',
    EISDIR: 'give --out a file name, not a folder',
  };
  return new ConfigError(
    `cannot write the signature to ${out}: ${errnoInWords(code)} (${code}) - ${advice[code] ?? 'give --out a file in a folder you can write'}. ${undone}`,
    cause === undefined ? undefined : { cause },
  );
}

/** The text of a signature or of the statement it signs (`approve --signature`); exit 2 when it cannot be read. */
export async function readSignedFile(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new UsageError(`cannot read ${what} ${file}: ${systemErrorInWords(cause)}`, { cause });
  }
}
