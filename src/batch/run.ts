/**
 * `payouts run`: read the sheet once, check the batch guards, then pay its valid rows with
 * bounded concurrency under a rate limit, each reference claimed in the register before it is
 * sent, and write the results file from what was read. README "Never pay twice: the
 * register".
 */
import { basename } from 'node:path';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { createClient, type PayoutsClient } from '../api/client.js';
import type { Credentials } from '../api/token.js';
import { readAllowedSigners } from '../approvals/allowed-signers.js';
import { type ApprovalGate, checkGateCanPass, judgeApprovals } from '../approvals/gate.js';
import { type Clock, systemClock } from '../clock.js';
import {
  ConfigError,
  GuardError,
  InterruptedError,
  type NetworkError,
  ScratchError,
  ServiceError,
  UsageError,
} from '../errors.js';
import { chooseScope, declaredService } from '../register/choose.js';
import type { PayoutDetails } from '../register/details.js';
import { type ScopeIdentity, serviceOf } from '../register/identity.js';
import { type RegisterSource, shownLocation } from '../register/location.js';
import { openRegister } from '../register/open.js';
import { RegisterOutageError } from '../register/outage.js';
import type { OriginDeclaration, Register, RunApproval, ScopeStore } from '../register/types.js';
import type { SheetFormat } from '../sheet/types.js';
import { checkEventsFile } from '../webhooks/events-file.js';
import { readTransactionOutcomes, transactionOutcomeOf } from '../webhooks/reconcile.js';
import { BatchDigest } from './digest.js';
import { earlierResult } from './earlier.js';
import { afterSending, runExitCode, serviceFailureOf } from './exit-code.js';
import { type ControlTotals, checkControlTotals } from './guards.js';
import { InOrder, type Place } from './in-order.js';
import { type JudgedWarnings, JudgedWarningsWriter } from './judged.js';
import type { PreparedRow, SheetOptions } from './prepare.js';
import { type JudgedRow, type ReadSheet, readOnce, replayBatches, replayJudged } from './read-once.js';
import { RegisterCheck } from './register-check.js';
import { type ResultSpool, ResultSpoolWriter, type SpooledRow } from './result-spool.js';
import { type PayeeOfRow, type RowResult, RowSteps } from './row-steps.js';
import { RunHolder } from './run-holder.js';
import { type SentRow, type StopReason, writeResults } from './run-results.js';
import {
  compareChoiceOf,
  LISTED_SHOWN,
  type SincePrevious,
  sinceCandidates,
  sinceOf,
} from './since-previous.js';
import { STOP_GRACE_MS, StopGrace } from './stop-grace.js';
import { BatchSummary } from './summary.js';
import type { RowSample } from './validate.js';
import { applyWebhookOutcomes, awaitOutcomes, type Settle } from './wait.js';
import { encodeWarnings, heldReason, NO_WARNINGS, PayeeWarnings, type WarningTally } from './warnings.js';

/** Where the service is and who we are to it (README "Options": `--base-url`, `--auth-url`, env). */
export interface Connection {
  baseUrl: string;
  authUrl: string;
  credentials: Partial<Credentials>;
}

export interface RunOptions extends SheetOptions {
  connection: Connection;
  outPath?: string;
  /** Where the register lives (README `--register`): a file path or a PostgreSQL URL. */
  register: string;
  /** `--compare-with SHEET|DIGEST`: the earlier batch `sincePrevious` compares with. */
  compareWith?: string;
  /** Where that location came from, said when there is no register there. */
  registerFrom?: RegisterSource;
  controls?: ControlTotals;
  /** `--approve DIGEST`: refuse unless the batch digest matches. */
  approve?: string;
  /**
   * `--require-approvals N --allowed-signers FILE --approval-max-age DAYS`: refuse unless N
   * approvers signed this sheet's current statement (docs/approval.md "What counts").
   */
  approvals?: { required: number; allowedSigners: string; maxAgeDays: number };
  /** `run --sandbox`: a rehearsal, whose default results file is `<sheet>.sandbox.results.<ext>`. */
  rehearsal?: boolean;
  /** `--same-service-as ORIGIN` or `--separate-service`: what the service this run reaches is. */
  origin?: OriginDeclaration;
  /** `--retry-unknown`: re-send rows whose outcome is unknown, with the same key. */
  retryUnknown?: boolean;
  /** `--hold-changed-payees`: rows whose payee's bank details changed are not sent (`skipped`). */
  holdChangedPayees?: boolean;
  /** Keep every warned reference (`--json` lists them all); else counts and the first rows. */
  warnedReferences?: boolean;
  concurrency: number;
  /** Requests per second, all endpoints together; unlimited when omitted. */
  rate?: number;
  /** After sending, check transaction statuses for up to this many seconds (0: don't). */
  waitSeconds?: number;
  /** Webhook events recorded by `payouts webhooks listen --events FILE`: confirm outcomes. */
  eventsFile?: string;
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM/SIGHUP: stop taking rows, finish those under way, write results. */
  signal?: AbortSignal;
  /** Aborted by a second signal: cut the requests under way now, without the grace. */
  abandonSignal?: AbortSignal;
  /** `--max-outage S`: how long an outage of the service is waited through (breaker.ts). */
  maxOutageSeconds?: number;
  /** Progress as rows finish: done of total valid rows. */
  onProgress?: (done: number, total: number) => void;
  /** Replaces the client (tests); by default one is built from `connection`. */
  client?: PayoutsClient;
  /** Time (tests drive a whole run with a fake clock); the wall clock by default. */
  clock?: Clock;
}

export interface RunReport {
  sheetPath: string;
  format: SheetFormat;
  summary: BatchSummary;
  digest: string;
  runId: string;
  resultsPath: string;
  /** The register, as it may be shown (no password). */
  register: string;
  unknownColumns: string[];
  samples: RowSample[];
  interrupted: boolean;
  /** The service stayed unavailable past --max-outage: rows not sent are `skipped` (exit 6). */
  unavailable: boolean;
  /** What kept the service away, in words (the breaker's), when `unavailable`. */
  unavailableReason?: string;
  /** Whether any request for a row left (the exit code can then no longer be 2, 3 or 4). */
  sent: boolean;
  /** The approver's warnings (warnings.ts), on the rows this run would send. */
  warnings: WarningTally;
  /** What changed since the previous batch this register paid; null without one. */
  sincePrevious: SincePrevious | null;
  /** The signed approvals the run relied on (`--require-approvals`), none without the gate. */
  approvals: RunApproval[];
}

/**
 * Runs the batch. Throws before sending anything for an unreadable sheet or an unusable
 * register (exit 2), a batch guard (exit 4: control totals, approval) or refused credentials
 * (exit 3). Row failures are in the report and the results file.
 */
export async function runBatch(options: RunOptions): Promise<RunReport> {
  const { logger } = options;
  const signal = options.signal ?? new AbortController().signal;
  const clock = options.clock ?? systemClock;
  const grace = new StopGrace(signal, options.abandonSignal, STOP_GRACE_MS);
  // Pass 1: the one read of the sheet; the guards see every row before any is sent.
  // A gate that can never pass is a mistake in the configuration, said before the sheet is read.
  const gate: ApprovalGate | undefined = options.approvals && {
    required: options.approvals.required,
    maxAgeDays: options.approvals.maxAgeDays,
    allowedSigners: await readAllowedSigners(options.approvals.allowedSigners),
  };
  if (gate !== undefined) checkGateCanPass(gate, clock.now());
  const read = await readOnce(options);
  let register: Register | undefined;
  let client: PayoutsClient | undefined;
  let run: RunHolder | undefined;
  try {
    if (options.controls) checkControlTotals(read.summary, options.controls);
    if (options.eventsFile) await checkEventsFile(options.eventsFile);
    try {
      register = await openRegister(options.register, {
        // Only a rehearsal's throwaway register is made here; a real run's is made on purpose.
        create: options.rehearsal === true,
        ...(options.registerFrom ? { from: options.registerFrom } : {}),
        ...(options.clock ? { clock } : {}),
        warn: (message) => logger.warn(message),
        // A register that fails is waited through like the service (docs/register.md "When the
        // register fails"); a stop past its grace ends its operations at once.
        ...(options.maxOutageSeconds === undefined ? {} : { maxOutageMs: options.maxOutageSeconds * 1000 }),
        abandon: grace.abandoned,
        // A stop while another process holds the register locked ends the wait at once.
        stop: signal,
        onOutage: (words) =>
          logger.warn(
            { register: shownLocation(options.register) },
            `the register does not answer (${words}): sending paused until it does, for up to --max-outage`,
          ),
      });
    } catch (error) {
      if (!(error instanceof InterruptedError && signal.aborted)) throw error;
      // Stopped before anything was sent: the results file says so as for a stop before the
      // first row (every row `skipped`, exit 5).
      logger.warn({ register: shownLocation(options.register) }, error.message);
      const how = { interrupted: true, unavailable: false, sent: false };
      const written = await writeResults(options, read, undefined, how);
      return report(options, written, { ...how, digest: read.digest, approvals: [] });
    }
    const asOf = clock.now();
    if (options.approve !== undefined || gate !== undefined) {
      // Before any request: the scope `validate` read for the same service and user, offline.
      // Checked again below against the scope the service names (the same one, as a rule).
      const { service, digest } = await judgeOffline(options, read, register, asOf);
      if (options.approve !== undefined) checkApproval(options.approve, digest);
      if (gate !== undefined) await approvedBy(register, gate, options, service, digest, clock.now());
    }

    client =
      options.client ??
      createClient({
        ...options.connection,
        rate: options.rate,
        concurrency: options.concurrency,
        logger,
        clock: options.clock,
        stopSignal: signal,
        abandonSignal: grace.abandoned,
        ...(options.maxOutageSeconds === undefined
          ? {}
          : { breaker: { maxOutageMs: options.maxOutageSeconds * 1000 } }),
      });
    const { breaker } = client;
    // Credentials first: refused ones end the run (exit 3) before any row is touched. Then who
    // we are to the service: the register's scope.
    const integratorId = await whoAmI(client, signal, options.connection);
    if (integratorId === undefined) {
      // Stopped, or the service out of reach, before the first row: the results file still
      // says why no row was sent (every row `skipped`, exit 5 or 6).
      const how = {
        interrupted: signal.aborted,
        unavailable: breaker.gaveUp,
        unavailableReason: breaker.gaveUpBecause,
        sent: false,
      };
      if (how.interrupted) {
        // A stop keeps to its grace: no pass over the sheet for the warnings first.
        const written = await writeResults(options, read, undefined, how);
        return report(options, written, { ...how, digest: read.digest, approvals: [] });
      }
      // The summary still gives the batch digest, warnings and totals to send that `validate`
      // gave: judged offline, against the scope `validate` reads for this service and user.
      // A register that fails here leaves the summary the rows' digest: the results come first.
      const offline = await judgeOffline(
        options,
        read,
        register,
        asOf,
        read.snapshot.sidecar('warnings.jsonl'),
      ).catch((error: unknown) => {
        logger.warn({ err: error }, 'the batch could not be judged against the register');
        return undefined;
      });
      const written = await writeResults(options, read, undefined, how, offline?.judged);
      for (const [currency, minor] of offline?.sendTotals ?? [])
        BatchSummary.add(written.summary.sendTotals, currency, minor);
      return report(options, written, {
        ...how,
        digest: offline?.digest ?? read.digest,
        sincePrevious: offline?.sincePrevious ?? null,
        approvals: [],
      });
    }
    const scope = await scopeOf(
      register,
      { service: serviceOf(options.connection.baseUrl), integratorId },
      options,
    );
    const store = await register.openScope(scope, options.connection.credentials.username);
    // The digest covers the approver's warnings, which need the register: checked here, still
    // before anything is sent (exit 4).
    const approval = await judgeBatch(options, read, store, asOf, read.snapshot.sidecar('warnings.jsonl'));
    if (options.approve !== undefined) checkApproval(options.approve, approval.digest);
    const approvals =
      gate === undefined
        ? []
        : await approvedBy(register, gate, options, scope.service, approval.digest, clock.now());
    run = await RunHolder.start(store, options, approval.digest, clock, client.limiter);
    if (approvals.length > 0) {
      // The run's record names the approvals it relied on (status, register copy).
      await store.recordRunApprovals(run.self.runId, approvals);
      logger.info(
        { approvals: approvals.map(({ principal, fingerprint }) => ({ principal, fingerprint })) },
        'signed approvals counted',
      );
    }
    logger.info(
      {
        register: register.location,
        service: scope.service,
        integrator: scope.integratorId,
        run: run.self.runId,
      },
      'register scope opened',
    );
    // A rehearsal's register is its own and new every time: nothing to say of it.
    if (!options.rehearsal && (await store.recentPayouts(1)).length === 0) {
      // A lost volume or a new container starts from nothing: say so, once, where it shows.
      logger.warn(
        { register: register.location, service: scope.service, integrator: scope.integratorId },
        'the register has no payouts of this service and integrator yet: if they were paid from another register, stop and copy it first (payouts register copy --from OLD --to NEW)',
      );
    }

    const steps = new RowSteps({ client, store, scope, runId: run.self.runId, signal });
    // Pass 2: claim and send, at most `concurrency` rows in flight, fed from what pass 1 read.
    const sent = await sendRows(options, read, run, steps, approval.judged, signal, () => breaker.gaveUp);
    // In the snapshot's private folder: removed with it, whatever ends the run.
    const { spool } = sent;
    // A register unreachable past --max-outage or a scratch space that filled, or a register
    // abandoned after a stop, ends the run as an outage of the service or a stop does: reported
    // (exit 6 or 5, the summary printed), not thrown.
    const outage =
      sent.fatal instanceof RegisterOutageError || sent.fatal instanceof ScratchError
        ? sent.fatal
        : undefined;
    const registerEnded = outage !== undefined || (signal.aborted && sent.fatal instanceof InterruptedError);
    const unavailable = breaker.gaveUp || outage !== undefined;
    const unavailableReason = breaker.gaveUpBecause ?? outage?.message;
    const settle: Settle = (reference, result) =>
      store.settle(
        reference,
        result.transactionId!,
        result.status === 'completed' ? 'completed' : 'failed',
        result.status === 'failed' ? result.errors.join(' | ') : undefined,
      );
    if (!sent.fatal && !unavailable) await settleAfterSending(options, client, store, spool, settle, signal);

    // Pass 3: the results file, in sheet order, from what pass 1 read and the row outcomes.
    const stop: StopReason = {
      interrupted: signal.aborted,
      unavailable,
      unavailableReason,
      // A stop that abandoned the register leaves its rows as any stop does.
      stoppedBy: registerEnded && signal.aborted ? undefined : sent.fatal,
    };
    const written = await writeResults(options, read, spool, stop, approval.judged);
    for (const [currency, minor] of approval.sendTotals)
      BatchSummary.add(written.summary.sendTotals, currency, minor);
    const exitCode = runExitCode({
      sent: run.sentAnything,
      interrupted: signal.aborted,
      unavailable,
      rowsOk: written.summary.allOk,
    });
    // The results are written: a register that fails now (or a stop past its grace) costs the
    // run's own record its outcome, not the report.
    await run
      .finish(written.summary, sent.fatal && !registerEnded ? undefined : exitCode)
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'the run could not be marked finished in the register');
      });
    if (sent.fatal && !registerEnded) throw afterSending(sent.fatal);
    return report(options, written, {
      interrupted: signal.aborted,
      unavailable,
      unavailableReason,
      sent: run.sentAnything,
      runId: run.self.runId,
      digest: approval.digest,
      sincePrevious: approval.sincePrevious,
      approvals,
    });
  } catch (error) {
    throw run?.sentAnything ? afterSending(error) : error;
  } finally {
    await run?.close().catch(() => {});
    await register?.close().catch(() => {});
    // After a stop the pool is destroyed, not closed: closing would wait for a stalled answer.
    if (!options.client) await (signal.aborted ? client?.destroy() : client?.close());
    grace.dispose();
    await read.snapshot.dispose();
  }
}

/**
 * The register scope of this run: the service as its URL is spelt, unless the operator
 * declared that spelling the same service as another (then the other's scope and keys, so
 * nothing paid under it is paid again). An integrator with payouts under another spelling and
 * no declaration stops the run before anything is sent (README "Never pay twice: the register": exit 2, both origins named).
 */
export async function scopeOf(
  register: Register,
  reached: ScopeIdentity,
  options: Pick<RunOptions, 'origin'>,
): Promise<ScopeIdentity> {
  if (options.origin !== undefined) {
    if ('sameAs' in options.origin && options.origin.sameAs === reached.service) {
      throw new UsageError(
        `--same-service-as ${options.origin.sameAs} names the service this run reaches itself`,
      );
    }
    await register.declareOrigin(reached, options.origin);
  }
  const declared = await register.origin(reached);
  if (declared !== undefined) {
    return 'sameAs' in declared ? { service: declared.sameAs, integratorId: reached.integratorId } : reached;
  }
  const others: string[] = [];
  for (const scope of await register.scopes()) {
    if (scope.integratorId !== reached.integratorId || scope.service === reached.service) continue;
    const store = await register.scopeStore(scope);
    if ((await store.recentPayouts(1)).length > 0) others.push(scope.service);
  }
  if (others.length === 0) return reached;
  throw new ConfigError(
    `integrator ${reached.integratorId} already has payouts in the register under ${others.join(' and ')}, and this run reaches it as ${reached.service}: if that is the same service under another name (localhost for 127.0.0.1, a second DNS name, a proxy), run again with --same-service-as ${others[0]}, so every payout it paid counts and none is paid twice - if it is another service with the same integrator id (a staging copy), run again with --separate-service. Nothing was sent`,
  );
}

/**
 * The integrator id (GET /v1/integrators/me), after the token: refused credentials throw (exit
 * 3); undefined when the run was stopped, or the service stayed down past --max-outage, first.
 */
export async function whoAmI(
  client: PayoutsClient,
  signal: AbortSignal,
  connection: Pick<Connection, 'baseUrl' | 'authUrl'>,
): Promise<string | undefined> {
  const unreachable = (error: unknown, url: string, what: string): undefined => {
    if (signal.aborted || client.breaker.gaveUp) return undefined;
    const kind = serviceFailureOf(error);
    if (kind === 'certificate') {
      throw new ConfigError(
        `the certificate of ${new URL(url).origin} was refused (${(error as NetworkError).errorCode}): check the URL, or add the issuing authority with NODE_EXTRA_CA_CERTS. Nothing was sent`,
      );
    }
    // Any answer but refused credentials is one these two calls cannot act on: an outage too.
    if (kind === undefined && !(error instanceof ServiceError)) throw error;
    // Before the first row, an outage is one run error: every row `skipped` with it (exit 6).
    client.breaker.giveUp(`${what} (${(error as Error).message}) - run again later to resume`);
    return undefined;
  };
  try {
    await client.tokens.getToken(signal);
  } catch (error) {
    return unreachable(error, connection.authUrl, 'the identity endpoint could not issue a token');
  }
  try {
    return (await client.integrators.me({ signal })).id;
  } catch (error) {
    return unreachable(error, connection.baseUrl, 'the service could not be reached or understood');
  }
}

function report(
  options: RunOptions,
  written: Awaited<ReturnType<typeof writeResults>>,
  how: {
    interrupted: boolean;
    unavailable: boolean;
    unavailableReason?: string | undefined;
    sent: boolean;
    runId?: string;
    digest: string;
    sincePrevious?: SincePrevious | null;
    approvals: RunApproval[];
  },
): RunReport {
  return {
    sheetPath: options.sheetPath,
    format: written.format,
    summary: written.summary,
    digest: how.digest,
    warnings: written.warnings,
    sincePrevious: how.sincePrevious ?? null,
    runId: how.runId ?? '',
    resultsPath: written.resultsPath,
    register: shownLocation(options.register),
    unknownColumns: written.unknownColumns,
    samples: written.samples,
    interrupted: how.interrupted,
    unavailable: how.unavailable,
    ...(how.unavailableReason === undefined ? {} : { unavailableReason: how.unavailableReason }),
    sent: how.sent,
    approvals: how.approvals,
  };
}

/**
 * The approvals this batch relies on (`--require-approvals`), judged from the register's
 * signatures for this service and digest (or this sheet name: the gate then says the sheet
 * changed since), each checked again in-process; a GuardError (exit 4) when too few count.
 * `origin` is the service of the run's scope: under a URL declared the same service as another,
 * the other, as approve names it in the statement.
 */
async function approvedBy(
  register: Register,
  gate: ApprovalGate,
  options: Pick<RunOptions, 'sheetPath'>,
  origin: string,
  digest: string,
  now: number,
): Promise<RunApproval[]> {
  const sheet = basename(options.sheetPath).normalize('NFC');
  const recorded = await register.approvals({ digest, sheet });
  return judgeApprovals(recorded, gate, { digest, origin, sheet, now });
}

/** `--approve DIGEST`: the batch digest must be the one approved (exit 4, nothing sent). */
function checkApproval(approved: string, digest: string): void {
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
async function judgeOffline(
  options: RunOptions,
  read: ReadSheet,
  register: Register,
  asOf: number,
  keep?: string,
): Promise<Awaited<ReturnType<typeof judgeBatch>> & { service: string }> {
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
async function judgeBatch(
  options: RunOptions,
  read: ReadSheet,
  store: ScopeStore | undefined,
  asOf: number,
  keep?: string,
): Promise<{
  digest: string;
  sendTotals: Map<string, bigint>;
  judged?: JudgedWarnings;
  sincePrevious: SincePrevious | null;
}> {
  const digest = new BatchDigest(read.prepared.header.index);
  const warnings = new PayeeWarnings(store, asOf, read.tag);
  const check = store === undefined ? undefined : new RegisterCheck(store);
  // What changed since the previous batch: read with the rows that decide what is sent.
  const comparisons =
    keep === undefined ? [] : await sinceCandidates(store, { choice: compareChoiceOf(options) });
  const sendTotals = new Map<string, bigint>();
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
          BatchSummary.add(sendTotals, currency, amount.minor);
      }
    }
    const judged = await writer?.seal();
    const { digest: batchDigest } = digest.finish();
    return {
      digest: batchDigest,
      sendTotals,
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

/**
 * Rows claimed in one register transaction: a few times the concurrency, taken just ahead of
 * sending, so that several runs of one sheet share its rows instead of one holding them all.
 */
export function claimAhead(concurrency: number): number {
  return Math.min(256, Math.max(16, 4 * concurrency));
}

/**
 * Rows whose results a run holds at most while an earlier row is still under way (in-order.ts):
 * several claims ahead, so that one slow row does not stall the sending behind it.
 */
function windowOf(concurrency: number): number {
  return Math.max(1024, 4 * claimAhead(concurrency));
}

/** A valid row on its way through the send pass, with its place in the results' order. */
interface Entry extends JudgedRow {
  place: Place<SpooledRow>;
}

/**
 * The send pass. A row's own failure is its result; an error that ends the run (refused
 * credentials mid-run, a register that cannot be written) stops the feeding, lets the rows
 * under way settle, and comes back as `fatal` so the results are still written. Results go to
 * the spool in sheet order as rows finish: memory holds the rows in the window, not the sheet.
 */
async function sendRows(
  options: RunOptions,
  read: ReadSheet,
  run: RunHolder,
  steps: RowSteps,
  judged: JudgedWarnings | undefined,
  signal: AbortSignal,
  unavailable: () => boolean,
): Promise<{ spool: ResultSpool; fatal?: unknown }> {
  const spooled = await ResultSpoolWriter.create(read.snapshot.sidecar('results.jsonl'));
  const window = new InOrder<SpooledRow>(windowOf(options.concurrency), (seq, { reference, row }) =>
    spooled.add(seq, reference, row),
  );
  const limit = pLimit(options.concurrency);
  const inFlight = new Set<Promise<void>>();
  let fatal: { error: unknown } | undefined;
  // A scratch space that fills stops the sending too: the rows under way settle, kept in memory.
  const stopped = () =>
    signal.aborted || fatal !== undefined || spooled.failure !== undefined || unavailable();
  // A stop while the feeder waits for room: rows behind a row never sent must not hold it.
  const nudge = () => window.nudge();
  signal.addEventListener('abort', nudge, { once: true });
  let done = 0;
  const finished = (entry: Entry, result: RowResult, decided?: 'fromRegister' | 'held') => {
    const { row } = entry;
    const sentRow: SentRow = {
      ...result,
      rowNumber: row.raw.rowNumber,
      ...(decided === undefined ? {} : { [decided]: true }),
    };
    delete sentRow.runError;
    window.settle(entry.place, { seq: entry.place.seq, reference: row.payout.reference, row: sentRow });
    logRow(options.logger, row, result);
    done += 1;
    options.onProgress?.(done, read.validRows);
  };
  let pending: Entry[] = [];
  const feed = async (entries: Entry[]) => {
    const batch: PreparedRow[] = [];
    // References are unique among valid rows (a repeated one makes every row with it invalid).
    const entryOf = new Map<string, Entry>();
    for (const entry of entries) {
      // --hold-changed-payees: a payee whose bank details changed is not paid, nor claimed.
      const held = options.holdChangedPayees ? heldReason(entry.warnings) : undefined;
      if (held === undefined) {
        batch.push(entry.row);
        entryOf.set(entry.row.payout.reference, entry);
      } else finished(entry, { status: 'skipped', errors: [held] }, 'held');
    }
    const claimed = await run.claim(batch);
    await steps.prefetch(
      [...claimed.values()]
        .filter((c) => c.verdict.kind === 'send' || c.verdict.kind === 'resend')
        .map((c) => c.row.payout),
    );
    for (const { verdict, row, details } of claimed.values()) {
      // An outage past --max-outage stops the feeding too: rows under way settle, the rest wait.
      if (stopped()) return;
      const entry = entryOf.get(row.payout.reference)!;
      const earlier = earlierResult(verdict, details);
      if (earlier) {
        finished(entry, earlier, 'fromRegister');
        continue;
      }
      const resend = verdict.kind === 'resend' ? verdict.record : undefined;
      const task = limit(async () => {
        if (fatal) return;
        try {
          run.sentAnything = true;
          const payee =
            row.payee === undefined
              ? undefined
              : { key: run.store.fingerprint(`payee:${row.payee.key}`), name: row.payee.name };
          const result = await steps.process(row.payout, resend, {
            payee,
            warnings: encodeWarnings(entry.warnings),
          });
          // The register failed after the service answered: the row keeps that answer, the run ends.
          if (result.runError !== undefined) fatal ??= { error: result.runError };
          else if (result.status === 'submitted' || result.status === 'completed') {
            await rememberPayment(options, run.store, payee, row.payout.reference, details, read.tag, result);
          }
          finished(entry, result);
        } catch (error) {
          fatal ??= { error };
        }
      });
      const tracked: Promise<void> = task.finally(() => {
        inFlight.delete(tracked);
        window.nudge();
      });
      inFlight.add(tracked);
      // Backpressure, so memory does not grow with the sheet: take the next row only when a slot
      // is free.
      if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    }
  };
  try {
    let seq = -1;
    for await (const judgedRow of replayJudged(options, read, judged)) {
      seq += 1;
      if (stopped()) break;
      const { row } = judgedRow;
      if (row.issues.length > 0 || row.totals !== undefined) continue;
      // The window is full while an earlier row is still under way: wait for it, not the sheet.
      await window.room(stopped);
      if (stopped()) break;
      pending.push({ ...judgedRow, place: window.take(seq) });
      if (pending.length >= claimAhead(options.concurrency)) {
        await feed(pending);
        pending = [];
      }
    }
    if (pending.length > 0 && !stopped()) await feed(pending);
  } catch (error) {
    // The register could not claim: nothing more is sent; rows under way still settle.
    fatal ??= { error };
  }
  await Promise.all(inFlight);
  signal.removeEventListener('abort', nudge);
  // Rows that finished behind one never sent are handed on too; the unsent have no result.
  window.close();
  let spool: ResultSpool;
  try {
    spool = await spooled.seal();
  } catch (error) {
    await spooled.abandon();
    throw fatal === undefined ? error : fatal.error;
  }
  if (spooled.failure !== undefined) fatal ??= { error: spooled.failure };
  return fatal ? { spool, fatal: fatal.error } : { spool };
}

/**
 * Outcomes that became known after sending, read into the results a chunk at a time: what
 * `payouts webhooks listen` recorded in the register while this run sent, the events of
 * `--events FILE`, and with `--wait` the service's answers to status checks, every chunk within
 * the one deadline. The results stand without them: a register or a file that fails here is
 * logged, and the results file says what the sending knew.
 */
async function settleAfterSending(
  options: RunOptions,
  client: PayoutsClient,
  store: ScopeStore,
  spool: ResultSpool,
  settle: Settle,
  signal: AbortSignal,
): Promise<void> {
  const { logger } = options;
  try {
    const outcomes = options.eventsFile ? await readTransactionOutcomes(options.eventsFile) : undefined;
    const deadline = options.waitSeconds ? systemClock.now() + options.waitSeconds * 1000 : undefined;
    let confirmed = 0;
    let pending = 0;
    await spool.rewrite(SETTLE_CHUNK, async (chunk) => {
      const results = new Map(chunk.map(({ reference, row }) => [reference, row]));
      await applyRecordedEvents(store, results, settle);
      if (outcomes) confirmed += await applyWebhookOutcomes(outcomes, settle, results);
      if (deadline !== undefined && !signal.aborted) {
        pending += await awaitOutcomes(client, settle, results, {
          seconds: options.waitSeconds!,
          deadline,
          logger,
          signal,
        });
      }
    });
    if (options.eventsFile)
      logger.info({ events: options.eventsFile, confirmed }, 'webhook outcomes applied');
    if (pending > 0) {
      logger.info({ pending }, 'transactions still pending when --wait ran out - they stay submitted');
    }
  } catch (error) {
    logger.warn(
      { err: error },
      'outcomes known after sending could not all be read: the results file says what the sending knew (payouts reconcile settles the rest)',
    );
  }
}

/** Results read, updated and written again at once after sending (settleAfterSending). */
const SETTLE_CHUNK = 1000;

/**
 * Adds a paid row to its payee's history, which the approver's warnings of later sheets read.
 * The payment stands whatever happens here: a history that cannot be written is logged, and the
 * row keeps its truth.
 */
async function rememberPayment(
  options: Pick<RunOptions, 'logger' | 'clock'>,
  store: ScopeStore,
  payee: PayeeOfRow | undefined,
  reference: string,
  details: PayoutDetails,
  batch: string,
  result: RowResult,
): Promise<void> {
  if (payee === undefined) return;
  try {
    await store.recordPayment(
      payee.key,
      {
        account: details.payee,
        accountHint: details.payeeHint,
        reference,
        rail: details.rail,
        paidAt: new Date((options.clock ?? systemClock).now()).toISOString(),
        amount: details.amount,
        currency: details.currency,
      },
      batch,
      payee.name,
    );
  } catch (error) {
    options.logger.warn(
      { err: error, transactionId: result.transactionId },
      'the payee history could not be recorded',
    );
  }
}

/**
 * Outcomes that `payouts webhooks listen` recorded in the register while this run sent: the
 * run's submitted rows whose transactions a webhook settled become completed or failed.
 */
async function applyRecordedEvents(store: ScopeStore, results: Map<string, SentRow>, settle: Settle) {
  const submitted = [...results.entries()].filter(([, r]) => r.status === 'submitted' && r.transactionId);
  if (submitted.length === 0) return;
  const events = await store.settledEvents(submitted.map(([, r]) => r.transactionId!));
  for (const [reference, result] of submitted) {
    const event = events.get(result.transactionId!);
    if (!event) continue;
    const settled = transactionOutcomeOf(JSON.parse(event.payload));
    if (!settled) continue;
    result.status = settled.outcome.status;
    result.errors =
      settled.outcome.status === 'failed' ? [settled.outcome.message ?? 'the transaction failed'] : [];
    await settle(reference, result);
  }
}

function logRow(logger: Logger, row: PreparedRow, result: RowResult): void {
  const fields = { row: row.raw.rowNumber, reference: row.payout.reference, status: result.status };
  if (result.status === 'failed' || result.status === 'unknown')
    logger.warn({ ...fields, errors: result.errors }, 'row not paid');
  else logger.debug({ ...fields, transactionId: result.transactionId }, 'row done');
}
