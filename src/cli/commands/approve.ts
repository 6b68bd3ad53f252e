/**
 * `payouts approve <sheet>` (README "Commands", docs/approval.md "Signing an approval"): the
 * sheet's approval statement, computed offline as `validate` computes its digest; signed with
 * the approver's SSH key through ssh-keygen, or a signature made elsewhere; checked, and kept in
 * the register for `run --require-approvals` to count.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { parseServiceUrl } from '../../api/service-url.js';
import { type AllowedSigners, readAllowedSigners } from '../../approvals/allowed-signers.js';
import { parsePolicy } from '../../approvals/policy.js';
import type { SendFacts } from '../../approvals/policy-gate.js';
import {
  approvalsOf,
  checkSignatureOut,
  coversThisSheet,
  readSignedFile,
  signerOf,
  writeSignatureOut,
} from '../../approvals/record.js';
import { signStatement } from '../../approvals/sign.js';
import {
  approvalStatement,
  parseStatement,
  REVOKED_HEADER,
  revokedStatement,
  utcDay,
  withdrawnStatement,
} from '../../approvals/statement.js';
import { verifyApproval } from '../../approvals/verify.js';
import type { SheetOptions } from '../../batch/prepare.js';
import { validateSheet } from '../../batch/validate/validate.js';
import { type Clock, systemClock } from '../../clock.js';
import { fromEnvironment } from '../../environment.js';
import { ConfigError, GuardError, UsageError } from '../../errors.js';
import { serviceOf } from '../../register/identity.js';
import { type RegisterSource, registerLocationText, shownLocation } from '../../register/location.js';
import { openExistingRegister, openNamedRegister, openRegister } from '../../register/open.js';
import type { ApprovalRecord, WithdrawalRecord } from '../../register/types.js';
import { formatByExtension } from '../../sheet/results-path.js';
import type { ArgsOf } from '../command.js';
import { outcomeCode } from '../exit-code.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions } from '../logging.js';
import {
  registerHint,
  registerOption,
  resolveFrom,
  sheetReadingOf,
  sheetReadingOptions,
} from '../options.js';
import { sendFactsOf } from '../policy-shown.js';

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
  /** What an approval policy's conditions look at: the rows a run would send now. */
  facts: SendFacts;
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
    return { text, digest: report.digest, origin, sheet, facts: sendFactsOf(report) };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The approvals recorded at `location` of this digest for this service (approvalsOf); none without a register. */
export async function recordedApprovals(location: string, digest: string, origin: string) {
  const register = await openExistingRegister(location);
  if (register === undefined) return [];
  try {
    return await approvalsOf(register, digest, origin);
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
  /** `--revoke`: withdraw the approval of the sheet's statement instead (a signed withdrawal). */
  revoke?: boolean;
  json: boolean;
}

/** `payouts approve <sheet>`: prints, signs or records; says how it ended (lifecycle.ts). */
export async function approveCommand(
  options: ApproveCommandOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const clock = options.clock ?? systemClock;
  // The register keeps the approval, and its payee history is part of the digest: one that
  // is not there (a typo, a volume not mounted) is said before anything is read or signed.
  await (await openNamedRegister(options.register.location, options.register.from)).close();
  // A missing or unreadable allowed-signers file is said before anything is signed; with an
  // approval policy in the register, its signers say whose key it is, and no file may.
  const policy = await policySigners(options, log);
  const allowed = options.allowedSigners ? await readAllowedSigners(options.allowedSigners) : policy;
  const current = await currentStatement(options);
  const { action } = options;
  if (action.kind === 'statement') {
    io.stdout.write(options.revoke ? revokedStatement(current.text) : current.text);
    return { exitCode: outcomeCode(true) };
  }
  if (options.revoke) return withdrawApproval(options, action, current, io, log);
  const { text, signature } = await signedStatement(action, current, io, log);
  const record = recordOf(text, signature, allowed, clock, action);
  // Written before the register keeps the approval: a file that cannot be written leaves
  // nothing recorded, and the message can say so.
  if (action.kind === 'sign' && action.out) await writeSignatureOut(action.out, signature);
  const { added, kept } = await keepApproval(options, record, log);
  const { fingerprint } = record;
  const { principals } = kept;
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
  const who = principals.length > 0 ? `${principals.join(', ')} (${fingerprint})` : `the key ${fingerprint}`;
  return {
    exitCode: outcomeCode(true),
    tell: () => [
      `${added ? 'Recorded' : `Already recorded on ${kept.recordedAt}`}: the approval by ${who} of ${record.sheet} (digest ${record.digest}) for ${record.origin}, in ${fields.register}`,
      ...(allowed ? [] : ['Give --allowed-signers FILE to check whose key it is.']),
      ...(action.kind === 'sign' && action.out ? [`Signature written to ${action.out}`] : []),
    ],
    print: ({ exitCode }) => {
      if (options.json)
        io.stdout.write(
          `${JSON.stringify({ command: 'approve', ...fields, recordedAt: kept.recordedAt, exitCode })}\n`,
        );
    },
  };
}

/**
 * `approve --revoke`: the approver's signed withdrawal of the sheet's approval statement (the
 * same text under `payouts approval revoked v1`), kept in the register; from then on that
 * approval counts nowhere. Signed here, or made elsewhere over what `--revoke --statement` prints.
 */
async function withdrawApproval(
  options: ApproveCommandOptions,
  action: Exclude<ApproveCommandOptions['action'], { kind: 'statement' }>,
  current: CurrentStatement,
  io: CliIo,
  log: CommandLog,
): Promise<Ending> {
  const clock = options.clock ?? systemClock;
  let text: string;
  let signature: string;
  if (action.kind === 'record') {
    signature = await readSignedFile(action.signatureFile, 'the signature');
    text = await readSignedFile(action.statementFile, 'the signed withdrawal');
    const withdrawn = withdrawnStatement(text);
    if (withdrawn === undefined)
      throw new GuardError(
        `${action.statementFile} is not a withdrawal: its first line is not "${REVOKED_HEADER}" - sign the text payouts approve ${current.sheet} --revoke --statement prints. Nothing was recorded`,
      );
    coversThisSheet(withdrawn, current, action.statementFile);
  } else {
    text = revokedStatement(current.text);
    log.tell([
      'Signing this withdrawal:',
      ...text
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    ]);
    signature = await signStatement({ statement: text, keyPath: action.keyPath, messages: io.stderr });
  }
  const fingerprint = signerOf(
    signature,
    text,
    action.kind === 'record' ? action.statementFile : 'the withdrawal',
  );
  const approvalText = withdrawnStatement(text)!;
  const record: WithdrawalRecord = {
    statementDigest: sha256(text),
    approvalDigest: sha256(approvalText),
    fingerprint,
    origin: current.origin,
    digest: current.digest,
    sheet: current.sheet,
    statement: text,
    signature,
    recordedAt: new Date(clock.now()).toISOString(),
  };
  const register = await openRegister(options.register.location, {
    ...(options.register.from ? { from: options.register.from } : {}),
    warn: (m) => log.logger.warn(m),
  });
  let added: boolean;
  try {
    added = await register.recordWithdrawal(record);
  } finally {
    await register.close();
  }
  const fields = {
    sheet: record.sheet,
    digest: record.digest,
    origin: record.origin,
    fingerprint,
    statementDigest: record.approvalDigest,
    register: shownLocation(options.register.location),
    recorded: added,
    revoked: true,
  };
  log.logger.info(fields, added ? 'approval withdrawn' : 'withdrawal already recorded');
  return {
    exitCode: outcomeCode(true),
    tell: () => [
      `${added ? 'Recorded' : 'Already recorded'}: the withdrawal by the key ${fingerprint} of its approval of ${record.sheet} (digest ${record.digest}) for ${record.origin}, in ${fields.register}: that approval counts no more`,
    ],
    print: ({ exitCode }) => {
      if (options.json) io.stdout.write(`${JSON.stringify({ command: 'approve', ...fields, exitCode })}\n`);
    },
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The signers of the register's approval policy for the service, where it holds one; with one,
 * `--allowed-signers` (or its variable) is exit 2: the policy names the signers.
 */
async function policySigners(
  options: Pick<ApproveCommandOptions, 'register' | 'allowedSigners'>,
  log: CommandLog,
): Promise<AllowedSigners | undefined> {
  const register = await openRegister(options.register.location, {
    ...(options.register.from ? { from: options.register.from } : {}),
    warn: (m) => log.logger.warn(m),
  });
  let held: Awaited<ReturnType<typeof register.policy>>;
  try {
    held = await register.policy(options.register.service);
  } finally {
    await register.close();
  }
  if (held === undefined) return undefined;
  if (options.allowedSigners !== undefined)
    throw new ConfigError(
      `--allowed-signers (or PAYOUTS_ALLOWED_SIGNERS) names who may approve, but the register holds an approval policy for ${options.register.service} (version ${held.version}) that names its signers: leave it out`,
    );
  return parsePolicy(held.policy, `the policy version ${held.version}`).signers;
}

/** The statement and its signature: signed here with a key, or made elsewhere and read. */
async function signedStatement(
  action: Exclude<ApproveCommandOptions['action'], { kind: 'statement' }>,
  current: Awaited<ReturnType<typeof currentStatement>>,
  io: CliIo,
  log: CommandLog,
): Promise<{ text: string; signature: string }> {
  if (action.kind === 'record') {
    const signature = await readSignedFile(action.signatureFile, 'the signature');
    const text = await readSignedFile(action.statementFile, 'the signed statement');
    coversThisSheet(text, current, action.statementFile);
    return { text, signature };
  }
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
  const signature = await signStatement({
    statement: current.text,
    keyPath: action.keyPath,
    messages: io.stderr,
  });
  return { text: current.text, signature };
}

/**
 * The approval as the register keeps it. The signature is checked against its text first, and
 * with `--allowed-signers` against the file: whose key it is (a GuardError when none).
 */
function recordOf(
  text: string,
  signature: string,
  allowed: AllowedSigners | undefined,
  clock: Clock,
  action: ApproveCommandOptions['action'],
): ApprovalRecord {
  const fingerprint = signerOf(
    signature,
    text,
    action.kind === 'record' ? action.statementFile : 'the statement',
  );
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
  return {
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
}

/**
 * The approval kept in the register. What it holds: this record, or the one it kept when the
 * same key first recorded the same text (its time and principals, not this call's).
 */
async function keepApproval(
  options: Pick<ApproveCommandOptions, 'register'>,
  record: ApprovalRecord,
  log: CommandLog,
): Promise<{ added: boolean; kept: ApprovalRecord }> {
  const register = await openRegister(options.register.location, {
    ...(options.register.from ? { from: options.register.from } : {}),
    warn: (m) => log.logger.warn(m),
  });
  try {
    if (await register.recordApproval(record)) return { added: true, kept: record };
    const held = await register.approvals({ digest: record.digest });
    const kept = held.find(
      (r) => r.statementDigest === record.statementDigest && r.fingerprint === record.fingerprint,
    );
    return { added: false, kept: kept ?? record };
  } finally {
    await register.close();
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
    .option('revoke', {
      type: 'boolean',
      describe:
        'withdraw the approval instead: --key signs the withdrawal, --statement prints it (format payouts approval revoked v1), --signature records one made elsewhere',
    })
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
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return runLifecycle(args as LogArgs, io, (log) => approveCommand(approveOptionsOf(args, io), io, log));
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
  if (args.out !== undefined && args.revoke)
    throw new UsageError(
      '--out writes an approval signature: a withdrawal (--revoke) is kept in the register only',
    );
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
    ...(args.revoke ? { revoke: true } : {}),
    json: args.json,
  };
}
