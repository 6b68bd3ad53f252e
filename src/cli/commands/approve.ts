/**
 * `payouts approve <sheet>` (README "Commands", docs/approval.md "Signing an approval"): the
 * sheet's approval statement, computed offline as `validate` computes its digest; signed with
 * the approver's SSH key through ssh-keygen, or a signature made elsewhere; checked, and kept in
 * the register for `run --require-approvals` to count.
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, constants, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { parseServiceUrl } from '../../api/service-url.js';
import { readAllowedSigners } from '../../approvals/allowed-signers.js';
import { SignatureError, StatementError } from '../../approvals/errors.js';
import { signStatement } from '../../approvals/sign.js';
import { APPROVAL_NAMESPACE, verifyArmoredSignature } from '../../approvals/sshsig.js';
import { approvalStatement, parseStatement, utcDay } from '../../approvals/statement.js';
import { verifyApproval } from '../../approvals/verify.js';
import { outcomeCode } from '../../batch/exit-code.js';
import type { SheetOptions } from '../../batch/prepare.js';
import { validateSheet } from '../../batch/validate.js';
import { type Clock, systemClock } from '../../clock.js';
import { fromEnvironment } from '../../environment.js';
import { ConfigError, errnoInWords, errnoOf, GuardError, UsageError } from '../../errors.js';
import { serviceOf } from '../../register/identity.js';
import { type RegisterSource, registerLocationText, shownLocation } from '../../register/location.js';
import { openExistingRegister, openNamedRegister, openRegister } from '../../register/open.js';
import type { ApprovalRecord } from '../../register/types.js';
import { formatByExtension } from '../../sheet/results-path.js';
import type { ArgsOf } from '../command.js';
import type { CliIo } from '../io.js';
import { type CommandLog, type LogArgs, logOptions, logSettingsOf, openCommandLog } from '../logging.js';
import {
  registerHint,
  registerOption,
  resolveFrom,
  sheetReadingOf,
  sheetReadingOptions,
} from '../options.js';

/** The sheet and the register a statement is computed from. */
export interface StatementSource extends SheetOptions {
  /** The register to read (as validate reads it) and its scope hint. */
  register: { location: string; from?: RegisterSource; service: string; login?: string };
  clock?: Clock;
}

/** A sheet's approval statement now, and what it names. */
export interface CurrentStatement {
  text: string;
  digest: string;
  origin: string;
  /** The sheet's file name, without its folder, in NFC. */
  sheet: string;
}

/**
 * The sheet's approval statement as of today: the digest exactly as `validate` computes it
 * (validateSheet, reading the register read-only; its results file goes to a folder removed
 * after), the valid rows and their totals, the service's origin and the UTC day.
 */
export async function currentStatement(source: StatementSource): Promise<CurrentStatement> {
  const folder = await mkdtemp(path.join(tmpdir(), 'payouts-approve-'));
  try {
    const format = formatByExtension(source.sheetPath);
    const report = await validateSheet({
      sheetPath: source.sheetPath,
      sheetName: source.sheetName,
      delimiter: source.delimiter,
      encoding: source.encoding,
      columnsFile: source.columnsFile,
      outPath: path.join(folder, `results.${format}`),
      register: source.register,
      warnedReferences: false,
    });
    const { summary } = report;
    const sheet = path.basename(source.sheetPath).normalize('NFC');
    // Under a URL declared the same service as another, the statement names the other (the
    // scope whose history the digest was computed with, as run will compute it).
    const origin = report.service ?? source.register.service;
    const text = approvalStatement({
      digest: report.digest,
      origin,
      sheet,
      validRows: summary.rows - summary.byStatus.invalid,
      validTotals: summary.validTotals,
      day: utcDay((source.clock ?? systemClock).now()),
    });
    return { text, digest: report.digest, origin, sheet };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * The approvals the register holds of this digest for this service, as recorded (principals as
 * the allowed-signers file named them when recorded): what validate's report shows. `run`
 * checks each signature again before counting it.
 */
export async function recordedApprovals(
  location: string,
  digest: string,
  origin: string,
): Promise<{ principal: string; fingerprint: string; recordedAt: string }[]> {
  const register = await openExistingRegister(location);
  if (register === undefined) return [];
  try {
    // A register an older payouts wrote, read without migrating it, holds no approvals.
    const records = await register.approvals({ digest }).catch(() => []);
    return records
      .filter((record) => record.origin === origin)
      .flatMap((record) =>
        (record.principals.length > 0
          ? record.principals
          : ['(key not checked against allowed signers)']
        ).map((principal) => ({ principal, fingerprint: record.fingerprint, recordedAt: record.recordedAt })),
      );
  } finally {
    await register.close();
  }
}

export interface ApproveCommandOptions extends StatementSource {
  /** What to do: print the statement, sign it with a key, or record a signature made elsewhere. */
  action:
    | { kind: 'statement' }
    | { kind: 'sign'; keyPath: string; out?: string }
    | { kind: 'record'; signatureFile: string; statementFile: string };
  /** `--allowed-signers FILE`: whose key signed, said and recorded. */
  allowedSigners?: string;
  json: boolean;
}

/** `payouts approve <sheet>`: prints, signs or records; returns the exit code. */
export async function approveCommand(
  options: ApproveCommandOptions,
  io: CliIo,
  log: CommandLog = openCommandLog(logSettingsOf({}, io), io),
): Promise<number> {
  try {
    const clock = options.clock ?? systemClock;
    // The register keeps the approval, and its payee history is part of the digest: one that
    // is not there (a typo, a volume not mounted) is said before anything is read or signed.
    await (await openNamedRegister(options.register.location, options.register.from)).close();
    // A missing or unreadable allowed-signers file is said before anything is signed.
    const allowed = options.allowedSigners ? await readAllowedSigners(options.allowedSigners) : undefined;
    const current = await currentStatement(options);
    const { action } = options;
    if (action.kind === 'statement') {
      io.stdout.write(current.text);
      return outcomeCode(true);
    }
    let text: string;
    let signature: string;
    if (action.kind === 'sign') {
      // Before the key is asked for (a passphrase, a touch of a security key): an --out that
      // cannot be written would waste the signature.
      if (action.out) await checkSignatureOut(action.out);
      log.tell([
        'Signing this approval statement:',
        ...current.text
          .trimEnd()
          .split('\n')
          .map((l) => `  ${l}`),
      ]);
      text = current.text;
      signature = await signStatement({ statement: text, keyPath: action.keyPath, messages: io.stderr });
    } else {
      signature = await readText(action.signatureFile, 'the signature');
      text = await readText(action.statementFile, 'the signed statement');
      coversThisSheet(text, current, action.statementFile);
    }
    // The signature is checked against its text before the register keeps it.
    let fingerprint: string;
    try {
      fingerprint = verifyArmoredSignature(signature, text, APPROVAL_NAMESPACE).publicKey.fingerprint;
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      throw new GuardError(
        `the signature does not verify over ${action.kind === 'record' ? action.statementFile : 'the statement'}: ${error.message}. Nothing was recorded`,
        { cause: error },
      );
    }
    let principals: string[] = [];
    if (allowed) {
      const verdict = verifyApproval({
        statementText: text,
        armoredSignature: signature,
        allowedSigners: allowed,
        now: clock.now(),
      });
      if (!verdict.ok) throw new GuardError(`${verdict.message}. Nothing was recorded`);
      principals = [...verdict.principals];
    }
    const statement = parseStatement(text);
    const record: ApprovalRecord = {
      statementDigest: createHash('sha256').update(text).digest('hex'),
      fingerprint,
      origin: statement.origin,
      digest: statement.digest,
      sheet: statement.sheet,
      statement: text,
      signature,
      principals,
      recordedAt: new Date(clock.now()).toISOString(),
    };
    // Written before the register keeps the approval: a file that cannot be written leaves
    // nothing recorded, and the message can say so.
    if (action.kind === 'sign' && action.out) await writeSignatureOut(action.out, signature);
    const register = await openRegister(options.register.location, {
      ...(options.register.from ? { from: options.register.from } : {}),
      warn: (m) => log.logger.warn(m),
    });
    let added: boolean;
    // What the register holds: this record, or the one it kept when the same key first recorded
    // the same text (its time and principals, not this call's).
    let kept: ApprovalRecord = record;
    try {
      added = await register.recordApproval(record);
      if (!added) {
        const held = await register.approvals({ digest: record.digest });
        kept =
          held.find((r) => r.statementDigest === record.statementDigest && r.fingerprint === fingerprint) ??
          record;
      }
    } finally {
      await register.close();
    }
    principals = kept.principals;
    // Never the signature itself: who, which key, what, where.
    const fields = {
      sheet: record.sheet,
      digest: record.digest,
      origin: record.origin,
      fingerprint,
      principals,
      statementDigest: record.statementDigest,
      register: shownLocation(options.register.location),
      recorded: added,
    };
    log.logger.info(fields, added ? 'approval recorded' : 'approval already recorded');
    const who =
      principals.length > 0 ? `${principals.join(', ')} (${fingerprint})` : `the key ${fingerprint}`;
    log.tell([
      `${added ? 'Recorded' : `Already recorded on ${kept.recordedAt}`}: the approval by ${who} of ${record.sheet} (digest ${record.digest}) for ${record.origin}, in ${fields.register}`,
      ...(allowed ? [] : ['Give --allowed-signers FILE to check whose key it is.']),
      ...(action.kind === 'sign' && action.out ? [`Signature written to ${action.out}`] : []),
    ]);
    if (options.json)
      io.stdout.write(`${JSON.stringify({ command: 'approve', ...fields, recordedAt: kept.recordedAt })}\n`);
    return outcomeCode(true);
  } catch (error) {
    log.fail(error);
    throw error;
  } finally {
    await log.close();
  }
}

/** A signed text must name this sheet's current digest and this service (exit 4 otherwise). */
function coversThisSheet(text: string, current: CurrentStatement, file: string): void {
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
 * `--out FILE` checked before signing: its folder exists and may be written, and it is not a
 * folder itself. A ConfigError (exit 2): nothing was signed, nothing recorded.
 */
async function checkSignatureOut(out: string): Promise<void> {
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

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`cannot read ${what} ${file} (${code})`, { cause });
  }
}

/** approve's options: the sheet's reading options, the register's, the service, and what to do. */
function options(y: Argv) {
  return sheetReadingOptions(logOptions(registerOption(y)))
    .positional('file', { type: 'string', demandOption: true, describe: 'the payout sheet (.csv or .xlsx)' })
    .option('statement', {
      type: 'boolean',
      describe:
        'print the approval statement on stdout, to sign elsewhere with ssh-keygen -Y sign -n payouts-approval',
    })
    .option('key', {
      type: 'string',
      describe:
        'sign with this SSH key (its private key, or its .pub when it is in ssh-agent or on a security key), through ssh-keygen, and record the signature',
    })
    .option('signature', {
      type: 'string',
      describe: 'record a signature made elsewhere (FILE.sig: the signed text is read from FILE)',
    })
    .option('statement-file', {
      type: 'string',
      describe: 'with --signature: the signed text, when it is not the signature file without .sig',
    })
    .option('out', { type: 'string', describe: 'with --key: also write the armored signature to this file' })
    .option('allowed-signers', {
      type: 'string',
      describe:
        'an OpenSSH allowed-signers file: check whose key signed, and record the approver (or PAYOUTS_ALLOWED_SIGNERS)',
    })
    .option('base-url', {
      type: 'string',
      describe: 'the payments service the approval is for (default PAYOUTS_BASE_URL)',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'print what was recorded as one JSON object on stdout',
    });
}

export const builder = options;

/** Parses approve's options into its typed options and runs it. */
export async function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  const log = openCommandLog(logSettingsOf(args as LogArgs, io), io);
  let parsed: ApproveCommandOptions;
  try {
    parsed = approveOptionsOf(args, io);
  } catch (error) {
    log.fail(error);
    await log.close();
    throw error;
  }
  return approveCommand(parsed, io, log);
}

/** approve's typed options, checked before anything is read or signed (usage errors: exit 2). */
function approveOptionsOf(args: ArgsOf<typeof options>, io: CliIo): ApproveCommandOptions {
  const asked = (['statement', 'key', 'signature'] as const).filter(
    (name) => args[name] !== undefined && args[name] !== false,
  );
  if (asked.length !== 1) {
    throw new UsageError(
      asked.length === 0
        ? 'payouts approve needs one of --statement (print the statement to sign elsewhere), --key PATH (sign it here) or --signature FILE.sig (record a signature made elsewhere)'
        : `payouts approve takes one of --statement, --key and --signature, not ${asked.map((n) => `--${n}`).join(' and ')}`,
    );
  }
  if (args.out !== undefined && args.key === undefined)
    throw new UsageError('--out writes the signature --key makes: give it with --key');
  if (args['statement-file'] !== undefined && args.signature === undefined)
    throw new UsageError('--statement-file names the text a --signature signs: give it with --signature');
  const baseUrl = args['base-url'] ?? fromEnvironment(io.env, 'PAYOUTS_BASE_URL');
  if (baseUrl === undefined) {
    throw new UsageError(
      'payouts approve needs the service the approval is for: --base-url URL (or PAYOUTS_BASE_URL), as run will use it',
    );
  }
  // The statement names this service: the same URL run would refuse is refused here (exit 2).
  parseServiceUrl(baseUrl, '--base-url');
  const hint = registerHint({ register: args.register, 'base-url': baseUrl }, io);
  const reading = sheetReadingOf(args.file, args, io);
  const allowedSigners = args['allowed-signers'] ?? fromEnvironment(io.env, 'PAYOUTS_ALLOWED_SIGNERS');
  let action: ApproveCommandOptions['action'];
  if (args.statement) action = { kind: 'statement' };
  else if (args.key !== undefined) {
    action = {
      kind: 'sign',
      keyPath: resolveFrom(io.cwd, args.key),
      ...(args.out !== undefined ? { out: resolveFrom(io.cwd, args.out) } : {}),
    };
  } else {
    const signatureFile = resolveFrom(io.cwd, String(args.signature));
    const given = args['statement-file'];
    if (given === undefined && !signatureFile.endsWith('.sig')) {
      throw new UsageError(
        `--signature ${args.signature} does not end in .sig, so the text it signs is not beside it: name that text with --statement-file FILE`,
      );
    }
    action = {
      kind: 'record',
      signatureFile,
      statementFile:
        given === undefined ? signatureFile.slice(0, -'.sig'.length) : resolveFrom(io.cwd, given),
    };
  }
  return {
    ...reading,
    register: {
      ...hint,
      location: registerLocationText(args.register, io.env, io.cwd),
      service: serviceOf(baseUrl),
    },
    action,
    ...(allowedSigners !== undefined ? { allowedSigners: resolveFrom(io.cwd, allowedSigners) } : {}),
    json: args.json,
  };
}
