/**
 * `payouts policy set FILE` and `payouts policy show` (docs/approval.md "The policy"): the
 * approval rules a register holds for a service. A proposal is read strictly (exit 2, nothing
 * recorded, when it does not parse or could never be met), signed by admins of the policy in
 * force (for the first policy, its own) and takes effect once as many signed as `admins`
 * requires; until then exit 4 says who must still sign.
 */

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { parseServiceUrl } from '../../api/service-url.js';
import { type ApprovalPolicy, parsePolicy } from '../../approvals/policy.js';
import {
  type AdminCount,
  countAdmins,
  POLICY_NAMESPACE,
  policySigner,
  policyStatement,
} from '../../approvals/policy-signing.js';
import { readSignedFile } from '../../approvals/record.js';
import { signStatement } from '../../approvals/sign.js';
import { type Clock, systemClock } from '../../clock.js';
import { fromEnvironment } from '../../environment.js';
import { ConfigError, EXIT, GuardError, systemErrorInWords, UsageError } from '../../errors.js';
import { serviceOf } from '../../register/identity.js';
import {
  type RegisterSource,
  registerLocationText,
  registerSourceOf,
  shownLocation,
} from '../../register/location.js';
import { openNamedRegister, openRegister } from '../../register/open.js';
import type { PolicyVersion, Register } from '../../register/types.js';
import type { ArgsOf } from '../command.js';
import type { CliIo } from '../io.js';
import { type Ending, runLifecycle } from '../lifecycle.js';
import { type CommandLog, defaultLog, type LogArgs, logOptions } from '../logging.js';
import { registerOption, resolveFrom } from '../options.js';

/** The register and the service a policy command works on. */
export interface PolicyPlace {
  register: { location: string; from?: RegisterSource };
  /** The service's origin. */
  service: string;
  clock?: Clock;
  json: boolean;
}

export interface PolicySetOptions extends PolicyPlace {
  file: string;
  /** Print the statement, sign it here, record a signature made elsewhere, or only propose. */
  action:
    | { kind: 'statement' }
    | { kind: 'sign'; keyPath: string }
    | { kind: 'record'; signatureFile: string }
    | { kind: 'propose' };
}

/** The policy in force for a service, read back as payouts reads a proposal. */
export function policyInForce(version: PolicyVersion | undefined): ApprovalPolicy | undefined {
  return version === undefined ? undefined : parsePolicy(version.policy, `policy version ${version.version}`);
}

/** Opens the register named, refusing one that does not exist (exit 2), for writing. */
async function openPolicyRegister(place: PolicyPlace, log: CommandLog): Promise<Register> {
  await (await openNamedRegister(place.register.location, place.register.from)).close();
  return openRegister(place.register.location, {
    ...(place.register.from ? { from: place.register.from } : {}),
    warn: (m) => log.logger.warn(m),
  });
}

/** The policy file's text; one that cannot be read is exit 2, said in words. */
async function readPolicyFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new ConfigError(`cannot read the policy file ${file}: ${systemErrorInWords(cause)}`, { cause });
  }
}

/** `payouts policy set FILE`: proposes, signs or records, and puts the policy in force once enough admins signed. */
export async function policySetCommand(
  options: PolicySetOptions,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const clock = options.clock ?? systemClock;
  const proposed = parsePolicy(await readPolicyFile(options.file), options.file);
  const register = await openPolicyRegister(options, log);
  try {
    const current = await register.policy(options.service);
    const replaces = current?.version ?? 0;
    const statement = policyStatement({ origin: options.service, digest: proposed.digest, replaces });
    const { action } = options;
    if (action.kind === 'statement') {
      io.stdout.write(statement);
      return { exitCode: EXIT.ok };
    }
    const judge = policyInForce(current) ?? proposed;
    const signature = await signatureOf(action, statement, io, log);
    const now = clock.now();
    const at = new Date(now).toISOString();
    const key = { service: options.service, digest: proposed.digest, replaces };
    const signer =
      signature === undefined ? undefined : policySigner(judge, { statement, signature }, statement, now);
    if (signer !== undefined && !signer.ok)
      throw new GuardError(
        `this signature cannot count for the policy of ${options.service}: ${signer.message}. Nothing was recorded`,
      );
    await register.recordPolicyProposal({ ...key, policy: proposed.canonical, proposedAt: at });
    if (signer?.ok)
      await register.recordPolicySignature({
        ...key,
        statementDigest: createHash('sha256').update(statement).digest('hex'),
        fingerprint: signer.fingerprint,
        statement,
        signature: signature!,
        recordedAt: at,
      });
    const count = countAdmins(judge, await register.policySignatures(key), statement, now);
    let version = replaces;
    let enacted = false;
    if (count.missing === 0) {
      enacted = await register.enactPolicy({
        ...key,
        version: replaces + 1,
        policy: proposed.canonical,
        signedBy: [...count.signedBy],
        since: at,
      });
      if (!enacted)
        throw new GuardError(
          `another change of the policy of ${options.service} took effect while this one was signed: it replaces version ${replaces}, which is no longer in force. Propose it again (payouts policy show says what is)`,
        );
      version = replaces + 1;
    }
    return setEnding(options, io, { proposed, replaces, version, enacted, count });
  } finally {
    await register.close();
  }
}

/** The signature a set brings: made here with a key, read from a file, or none (a proposal only). */
async function signatureOf(
  action: PolicySetOptions['action'],
  statement: string,
  io: CliIo,
  log: CommandLog,
): Promise<string | undefined> {
  if (action.kind === 'record') return readSignedFile(action.signatureFile, 'the signature');
  if (action.kind !== 'sign') return undefined;
  log.tell([
    'Signing this policy statement:',
    ...statement
      .trimEnd()
      .split('\n')
      .map((line) => `  ${line}`),
  ]);
  return signStatement({
    statement,
    keyPath: action.keyPath,
    namespace: POLICY_NAMESPACE,
    messages: io.stderr,
  });
}

/** How a set ended: in force (exit 0), or waiting on admins (exit 4, naming them). */
function setEnding(
  options: PolicySetOptions,
  io: CliIo,
  outcome: {
    proposed: ApprovalPolicy;
    replaces: number;
    version: number;
    enacted: boolean;
    count: AdminCount;
  },
): Ending {
  const { count, enacted } = outcome;
  const exitCode = enacted ? EXIT.ok : EXIT.guard;
  const signed =
    count.signedBy.length > 0 ? `signed by ${count.signedBy.join(', ')}` : 'signed by no admin yet';
  const lines = enacted
    ? [
        `Policy version ${outcome.version} of ${options.service} is in force (${signed}), in ${shownLocation(options.register.location)}`,
      ]
    : [
        `The policy proposed for ${options.service} (replacing version ${outcome.replaces}) is not in force: ${signed}; ${count.missing} more of the group "${count.from}" must sign (waiting on ${count.waitingOn.join(', ')})`,
        `Each signs with: payouts policy set ${options.file} --key PATH (or --signature over the text --statement prints)`,
      ];
  return {
    exitCode,
    finished: {
      msg: enacted ? 'policy in force' : 'policy awaits signatures',
      fields: { service: options.service },
    },
    tell: () => (options.json ? [] : lines),
    print: ({ exitCode: code }) => {
      if (!options.json) return;
      io.stdout.write(
        `${JSON.stringify({
          command: 'policy set',
          service: options.service,
          digest: outcome.proposed.digest,
          replaces: outcome.replaces,
          inForce: enacted,
          version: outcome.version,
          signedBy: count.signedBy,
          missing: count.missing,
          waitingOn: count.waitingOn,
          exitCode: code,
        })}\n`,
      );
    },
  };
}

/** `payouts policy show`: the policy in force for the service, its version, when and by whom it was signed. */
export async function policyShowCommand(
  options: PolicyPlace,
  io: CliIo,
  log: CommandLog = defaultLog(io),
): Promise<Ending> {
  const register = await openPolicyRegister(options, log);
  let current: PolicyVersion | undefined;
  try {
    current = await register.policy(options.service);
  } finally {
    await register.close();
  }
  const exitCode = EXIT.ok;
  if (options.json) {
    const shown = {
      command: 'policy show',
      service: options.service,
      version: current?.version ?? 0,
      policy: current === undefined ? null : (JSON.parse(current.policy) as unknown),
      signedBy: current?.signedBy ?? [],
      since: current?.since ?? null,
      exitCode,
    };
    io.stdout.write(`${JSON.stringify(shown)}\n`);
  } else if (current === undefined) {
    io.stdout.write(
      `No approval policy for ${options.service} in ${shownLocation(options.register.location)}: propose one with payouts policy set FILE\n`,
    );
  } else {
    io.stdout.write(
      `Policy version ${current.version} of ${options.service}, in force since ${current.since}, signed by ${current.signedBy.join(', ')}:\n${JSON.stringify(JSON.parse(current.policy), null, 2)}\n`,
    );
  }
  return { exitCode };
}

/** policy's options: the action, the file, how to sign, the service, the register, the output. */
function options(y: Argv) {
  return logOptions(registerOption(y))
    .positional('action', {
      choices: ['show', 'set'] as const,
      describe:
        'show: the policy in force - set: propose FILE, sign it, put it in force once enough admins signed',
    })
    .positional('file', { type: 'string', describe: 'set: the policy (JSON)' })
    .option('statement', {
      type: 'boolean',
      describe: `set: print the proposal's statement, to sign elsewhere with ssh-keygen -Y sign -n ${POLICY_NAMESPACE}`,
    })
    .option('key', {
      type: 'string',
      describe: "set: sign the proposal's statement with this SSH key, through ssh-keygen",
    })
    .option('signature', {
      type: 'string',
      describe: 'set: record a signature made elsewhere over the text --statement prints',
    })
    .option('base-url', {
      type: 'string',
      describe: 'the payments service the policy is for (default PAYOUTS_BASE_URL)',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'print the outcome as one JSON object on stdout',
    });
}

export const builder = options;

/** Parses policy's options and runs the action. */
export function handler(args: ArgsOf<typeof options>, io: CliIo): Promise<number> {
  return runLifecycle(args as LogArgs, io, (log) => {
    const place = placeOf(args, io);
    if (args.action === 'show') {
      const given = (['statement', 'key', 'signature'] as const).filter((n) => args[n] !== undefined);
      if (args.file !== undefined || given.length > 0)
        throw new UsageError(
          'payouts policy show takes no file, --statement, --key or --signature: those are for policy set',
        );
      return policyShowCommand(place, io, log);
    }
    if (args.file === undefined)
      throw new UsageError(
        'payouts policy set needs the policy file: payouts policy set FILE [--key PATH | --signature SIG | --statement]',
      );
    return policySetCommand(
      { ...place, file: resolveFrom(io.cwd, args.file), action: actionOf(args, io) },
      io,
      log,
    );
  });
}

/** The register and service a policy command works on; without a service it is exit 2. */
function placeOf(args: ArgsOf<typeof options>, io: CliIo): PolicyPlace {
  const baseUrl = args['base-url'] ?? fromEnvironment(io.env, 'PAYOUTS_BASE_URL');
  if (baseUrl === undefined)
    throw new UsageError(
      `payouts policy ${args.action} needs the service the policy is for: --base-url URL (or PAYOUTS_BASE_URL), as run will use it`,
    );
  parseServiceUrl(baseUrl, '--base-url');
  return {
    register: {
      location: registerLocationText(args.register, io.env, io.cwd),
      from: registerSourceOf(args.register, io.env),
    },
    service: serviceOf(baseUrl),
    json: args.json,
  };
}

/** What `policy set` does: at most one of --statement, --key and --signature (none: propose only). */
function actionOf(args: ArgsOf<typeof options>, io: CliIo): PolicySetOptions['action'] {
  const asked = (['statement', 'key', 'signature'] as const).filter(
    (name) => args[name] !== undefined && args[name] !== false,
  );
  if (asked.length > 1)
    throw new UsageError(
      `payouts policy set takes one of --statement, --key and --signature, not ${asked.map((n) => `--${n}`).join(' and ')}`,
    );
  if (args.statement) return { kind: 'statement' };
  if (args.key !== undefined) return { kind: 'sign', keyPath: resolveFrom(io.cwd, args.key) };
  if (args.signature !== undefined)
    return { kind: 'record', signatureFile: resolveFrom(io.cwd, args.signature) };
  return { kind: 'propose' };
}
