/**
 * The judge stage of `payouts run`, before anything is sent: the approval gate, the batch digest
 * with the approver's warnings on each valid row, what changed since the previous batch, and
 * the totals this run would send. Guards that refuse end the run here (exit 4, nothing sent).
 */
import { basename } from 'node:path';
import { readAllowedSigners } from '../../approvals/allowed-signers.js';
import {
  type ApprovalGate,
  checkGateCanPass,
  DEFAULT_APPROVAL_MAX_AGE_DAYS,
  judgeApprovals,
} from '../../approvals/gate.js';
import { parsePolicy } from '../../approvals/policy.js';
import {
  judgePolicy,
  type PolicyGate,
  type PolicyView,
  type SendFacts,
  SendFactsTally,
} from '../../approvals/policy-gate.js';
import { withoutWithdrawn } from '../../approvals/withdrawals.js';
import type { Clock } from '../../clock.js';
import { ConfigError, GuardError } from '../../errors.js';
import { chooseScope, declaredService } from '../../register/choose.js';
import { serviceOf } from '../../register/identity.js';
import type { Register, RunApproval, ScopeStore } from '../../register/types.js';
import { BatchDigest } from '../digest.js';
import { RegisterCheck } from '../register-check.js';
import {
  compareChoiceOf,
  LISTED_SHOWN,
  type SincePrevious,
  sinceCandidates,
  sinceOf,
} from '../since-previous.js';
import { heldReason, NO_WARNINGS, PayeeWarnings } from '../warnings.js';
import { type JudgedWarnings, JudgedWarningsWriter } from './judged.js';
import type { RunOptions } from './options.js';
import { type ReadSheet, replayBatches } from './read-once.js';

/** What the judge stage reads of the run's options. */
type JudgeOptions = Pick<
  RunOptions,
  | 'connection'
  | 'origin'
  | 'compareWith'
  | 'retryUnknown'
  | 'holdChangedPayees'
  | 'warnedReferences'
  | 'sheetPath'
  | 'approvals'
> &
  Parameters<typeof replayBatches>[0];

/** The batch as judged before sending. */
export interface Judgement {
  /** The batch digest `validate` prints and `--approve` names. */
  digest: string;
  /** Per currency, in minor units: the rows this run would send now. */
  sendTotals: Map<string, bigint>;
  /** What an approval policy's conditions look at: the rows this run would send now. */
  facts: SendFacts;
  /** Each row's warnings, kept for the passes after this one (with `keep` only). */
  judged?: JudgedWarnings;
  /** What changed since the previous batch this register paid; null without one. */
  sincePrevious: SincePrevious | null;
}

/**
 * `--require-approvals N --allowed-signers FILE`: the gate the run must pass, read before the
 * sheet. A gate that can never pass is a mistake in the configuration, said first (exit 2).
 */
export async function approvalGateOf(
  options: Pick<RunOptions, 'approvals'>,
  clock: Clock,
): Promise<ApprovalGate | undefined> {
  const file = options.approvals?.allowedSigners;
  // Without a file, the register's policy names the signers, or the run is refused (policyGateOf).
  if (options.approvals === undefined || file === undefined) return undefined;
  const gate: ApprovalGate = {
    required: options.approvals.required,
    maxAgeDays: options.approvals.maxAgeDays,
    allowedSigners: await readAllowedSigners(file),
  };
  checkGateCanPass(gate, clock.now());
  return gate;
}

/**
 * The register's approval policy for the service, enforced whatever the flags say (docs/approval.md
 * "The policy"): `--allowed-signers` (or its variable) beside it is exit 2, since the policy names
 * the signers, and `--require-approvals N` only adds N of all its signers. Without a policy,
 * `--require-approvals` without an allowed-signers file names no signer: exit 2 as well.
 */
export async function policyGateOf(
  register: Register,
  service: string,
  options: Pick<RunOptions, 'approvals'>,
): Promise<PolicyGate | undefined> {
  const held = await register.policy(service);
  const { approvals } = options;
  if (held === undefined) {
    if (approvals !== undefined && approvals.allowedSigners === undefined)
      throw new ConfigError(
        `--require-approvals ${approvals.required} (or PAYOUTS_REQUIRE_APPROVALS) needs the allowed-signers file that says whose keys count: --allowed-signers FILE (or PAYOUTS_ALLOWED_SIGNERS), or an approval policy in the register for ${service} (payouts policy set), which it does not hold`,
      );
    return undefined;
  }
  if (approvals?.allowedSigners !== undefined)
    throw new ConfigError(
      `--allowed-signers (or PAYOUTS_ALLOWED_SIGNERS) names who may approve, but the register holds an approval policy for ${service} (version ${held.version}) that names its signers: leave it out (payouts policy show prints the policy)`,
    );
  return {
    policy: parsePolicy(held.policy, `the policy version ${held.version} of ${service}`),
    version: held.version,
    maxAgeDays: approvals?.maxAgeDays ?? DEFAULT_APPROVAL_MAX_AGE_DAYS,
    ...(approvals === undefined ? {} : { alsoRequired: approvals.required }),
  };
}

/** The batch judged under the policy: the approvals it relies on, or exit 4 naming each unmet rule. */
export async function approvedUnderPolicy(
  register: Register,
  gate: PolicyGate,
  options: Pick<RunOptions, 'sheetPath'>,
  origin: string,
  judgement: Pick<Judgement, 'digest' | 'facts'>,
  now: number,
): Promise<{ view: PolicyView; approvals: RunApproval[] }> {
  const sheet = basename(options.sheetPath).normalize('NFC');
  const { digest } = judgement;
  const recorded = withoutWithdrawn(
    await register.approvals({ digest, sheet }),
    await register.withdrawals({ digest, sheet }),
    gate.policy.signers,
  );
  return judgePolicy(recorded, gate, judgement.facts, { digest, origin, sheet, now });
}

/**
 * The approvals this batch relies on (`--require-approvals`), judged from the register's
 * signatures for this service and digest (or this sheet name: the gate then says the sheet
 * changed since), each checked again in-process; a GuardError (exit 4) when too few count.
 * `origin` is the service of the run's scope: under a URL declared the same service as another,
 * the other, as approve names it in the statement.
 */
export async function approvedBy(
  register: Register,
  gate: ApprovalGate,
  options: Pick<RunOptions, 'sheetPath'>,
  origin: string,
  digest: string,
  now: number,
): Promise<RunApproval[]> {
  const sheet = basename(options.sheetPath).normalize('NFC');
  const recorded = withoutWithdrawn(
    await register.approvals({ digest, sheet }),
    await register.withdrawals({ digest, sheet }),
    gate.allowedSigners,
  );
  return judgeApprovals(recorded, gate, { digest, origin, sheet, now });
}

/** `--approve DIGEST`: the batch digest must be the one approved (exit 4, nothing sent). */
export function checkApproval(approved: string, digest: string): void {
  if (approved.trim().toLowerCase() === digest) return;
  throw new GuardError(
    `--approve ${approved.trim()} does not match this sheet's batch digest ${digest}: the sheet (or what the register knows of its payees) changed since it was approved, or another sheet was approved, so validate it again and approve the new digest. Nothing was sent.`,
  );
}

/**
 * The batch judged before the service names the scope: against the scope `validate` reads for
 * the same service and user, offline; under a URL declared the same service as another (now or
 * before), the other's. `service` is the service of that scope.
 */
export async function judgeOffline(
  options: JudgeOptions,
  read: ReadSheet,
  register: Register,
  asOf: number,
  keep?: string,
): Promise<Judgement & { service: string }> {
  const reached = serviceOf(options.connection.baseUrl);
  const login = options.connection.credentials.username;
  const service =
    options.origin === undefined
      ? await declaredService(register, reached, login)
      : 'sameAs' in options.origin
        ? options.origin.sameAs
        : reached;
  const guess = chooseScope(await register.scopes(), { service, login });
  const seen = guess.scope ? await register.scopeStore(guess.scope) : undefined;
  return { ...(await judgeBatch(options, read, seen, asOf, keep)), service };
}

/**
 * The batch digest as `validate` prints it: the valid rows with the approver's warnings on
 * them, from the sheet and the register's payee history (warnings.ts), and the totals of the
 * rows this run would send now (valid, not known to the register, not held). A row the register
 * refuses (its reference was paid with other details) is invalid: no warnings, there or in the
 * digest. With `keep`, each row's warnings are written to that file for the passes after it
 * (judged.ts), which then need the register no more.
 */
export async function judgeBatch(
  options: JudgeOptions,
  read: ReadSheet,
  store: ScopeStore | undefined,
  asOf: number,
  keep?: string,
): Promise<Judgement> {
  const digest = new BatchDigest(read.prepared.header.index);
  const warnings = new PayeeWarnings(store, asOf, read.tag);
  const check = store === undefined ? undefined : new RegisterCheck(store);
  // What changed since the previous batch: read with the rows that decide what is sent.
  const comparisons =
    keep === undefined ? [] : await sinceCandidates(store, { choice: compareChoiceOf(options) });
  const facts = new SendFactsTally();
  const writer = keep === undefined ? undefined : await JudgedWarningsWriter.create(keep);
  try {
    for await (const batch of replayBatches(options, read)) {
      // A held row's warnings as it was sent with them, where the register kept them.
      const { earlier, stored } = (await check?.heldRows(batch)) ?? {};
      await warnings.load(batch, earlier, stored);
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i]!;
        const known = earlier?.[i];
        const valid = row.issues.length === 0 && row.totals === undefined;
        const found = valid && known?.status !== 'invalid' ? warnings.of(row, stored?.[i]) : NO_WARNINGS;
        if (valid) digest.add(row, found);
        const { amount, currency } = row.payout;
        if (comparisons.length > 0 && valid && known?.status !== 'invalid' && amount && currency) {
          const payee = comparisons.some((c) => c.needsPayees) ? warnings.payeeHash(row) : undefined;
          for (const comparison of comparisons) comparison.add(payee, amount.minor, currency);
        }
        const writing = writer?.add(found);
        if (writing) await writing;
        const sends = known === undefined || (known.status === 'unknown' && options.retryUnknown === true);
        const held = options.holdChangedPayees === true && heldReason(found) !== undefined;
        if (valid && sends && !held && amount && currency)
          facts.add(
            amount.minor,
            currency,
            row.payout.rail,
            found.map((w) => w.signal),
          );
      }
    }
    const judged = await writer?.seal();
    const { digest: batchDigest } = digest.finish();
    return {
      digest: batchDigest,
      sendTotals: facts.sendTotals,
      facts,
      ...(judged ? { judged } : {}),
      // Every payee listed only for the JSON summary; the terminal and the report show the first.
      sincePrevious: await sinceOf(
        comparisons,
        batchDigest,
        options.warnedReferences === false ? LISTED_SHOWN : undefined,
      ),
    };
  } catch (error) {
    await writer?.abandon();
    throw error;
  }
}
