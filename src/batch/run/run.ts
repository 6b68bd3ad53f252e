/**
 * `payouts run`: read the sheet once, judge the batch and check its guards, then pay its valid
 * rows with bounded concurrency under a rate limit, each reference claimed in the register
 * before it is sent, settle what became known after sending, and write the results file from
 * what was read. Each stage has its file beside this one (docs/architecture.md "The run").
 */
import { createClient, type PayoutsClient } from '../../api/client.js';
import type { ApprovalGate } from '../../approvals/gate.js';
import type { PolicyGate, PolicyView } from '../../approvals/policy-gate.js';
import { type Clock, systemClock } from '../../clock.js';
import { afterSending, InterruptedError, ScratchError } from '../../errors.js';
import { serviceOf } from '../../register/identity.js';
import { shownLocation } from '../../register/location.js';
import { openRegister } from '../../register/open.js';
import { RegisterOutageError } from '../../register/outage.js';
import type { Register, RunApproval } from '../../register/types.js';
import type { SheetFormat } from '../../sheet/types.js';
import { checkEventsFile } from '../../webhooks/events-file.js';
import { checkControlTotals } from '../guards.js';
import { scopeOf, whoAmI } from '../service-scope.js';
import type { SincePrevious } from '../since-previous.js';
import { STOP_GRACE_MS, StopGrace } from '../stop-grace.js';
import { BatchSummary } from '../summary.js';
import type { RowSample } from '../verdicts.js';
import type { WarningTally } from '../warnings.js';
import {
  approvalGateOf,
  approvedBy,
  approvedUnderPolicy,
  checkApproval,
  type Judgement,
  judgeBatch,
  judgeOffline,
  policyGateOf,
} from './judge.js';
import type { RunOptions } from './options.js';
import { type ReadSheet, readOnce } from './read-once.js';
import type { ResultSpool } from './result-spool.js';
import { type StopReason, writeResults } from './results.js';
import { RowSteps } from './row-steps.js';
import { RunHolder } from './run-holder.js';
import { sendRows } from './send.js';
import { settleAfterSending, settlerOf } from './settle.js';

export type { RunEnding, RunOptions } from './options.js';

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
  /** The register's approval policy as judged for this batch; null without one. */
  policy: PolicyView | null;
}

/**
 * Runs the batch. Throws before sending anything for an unreadable sheet or an unusable
 * register (exit 2), a batch guard (exit 4: control totals, approval) or refused credentials
 * (exit 3). Row failures are in the report and the results file, which is written in one place
 * (`endRun`) however the run ends: paid, stopped, or cut off from the service or the register.
 */
export async function runBatch(options: RunOptions): Promise<RunReport> {
  const signal = options.signal ?? new AbortController().signal;
  const clock = options.clock ?? systemClock;
  const grace = new StopGrace(signal, options.abandonSignal, STOP_GRACE_MS);
  const held: Held = {};
  try {
    const gate = await approvalGateOf(options, clock);
    // Pass 1: the one read of the sheet; the guards see every row before any is sent.
    held.read = await readOnce(options);
    const run: RunContext = { options, signal, clock, grace, gate, read: held.read, held };
    return await endRun(run, await payBatch(run));
  } catch (error) {
    throw held.run?.sentAnything ? afterSending(error) : error;
  } finally {
    await held.run?.close().catch(() => {});
    await held.register?.close().catch(() => {});
    // After a stop the pool is destroyed, not closed: closing would wait for a stalled answer.
    if (!options.client) await (signal.aborted ? held.client?.destroy() : held.client?.close());
    grace.dispose();
    await held.read?.snapshot.dispose();
  }
}

/** What every stage of one run shares. */
interface RunContext {
  options: RunOptions;
  signal: AbortSignal;
  clock: Clock;
  grace: StopGrace;
  gate: ApprovalGate | undefined;
  /** The register's approval policy for the service, once the register is open. */
  policy?: PolicyGate | undefined;
  read: ReadSheet;
  held: Held;
}

/** What a run opened, closed whatever ends it. */
interface Held {
  read?: ReadSheet;
  register?: Register;
  client?: PayoutsClient;
  run?: RunHolder;
}

/** How a run ended, whatever ended it: what its results file and its report are written from. */
interface Ended {
  stop: StopReason & { interrupted: boolean; unavailable: boolean };
  /** Whether any request for a row left. */
  sent: boolean;
  /** The rows' outcomes in sheet order; none when the run ended before sending. */
  spool?: ResultSpool;
  /** The batch as judged before sending; none when the run ended before judging it. */
  judgement?: Judgement | undefined;
  approvals: RunApproval[];
  /** The approval policy as judged for the batch, when the register holds one. */
  policy?: PolicyView;
  /** The run's record, marked finished once the results are written; none before it began. */
  run?: RunHolder;
  /** What ended the run as an error, thrown once the results are written. */
  rethrow?: unknown;
}

/**
 * The stages before the results: the guards, the register, the service, then the rows. A run
 * stopped or cut off before its first row still ends with a results file (every row `skipped`).
 */
async function payBatch(run: RunContext): Promise<Ended> {
  const { options, read, clock } = run;
  if (options.controls) checkControlTotals(read.summary, options.controls);
  if (options.eventsFile) await checkEventsFile(options.eventsFile);
  const register = await openRunRegister(run);
  // Stopped before anything was sent: the results file says so as for a stop before the first row.
  if (register === undefined) return notStarted({ interrupted: true, unavailable: false });
  run.held.register = register;
  const asOf = clock.now();
  // The register's approval policy holds whatever the flags say; read before any request.
  run.policy = await policyGateOf(register, serviceOf(options.connection.baseUrl), options);
  if (options.approve !== undefined || run.gate !== undefined || run.policy !== undefined) {
    // Before any request: the scope `validate` read for the same service and user, offline.
    // Checked again below against the scope the service names (the same one, as a rule).
    const offline = await judgeOffline(options, read, register, asOf);
    const { service, digest } = offline;
    if (options.approve !== undefined) checkApproval(options.approve, digest);
    if (run.gate !== undefined) await approvedBy(register, run.gate, options, service, digest, clock.now());
    if (run.policy !== undefined)
      await approvedUnderPolicy(register, run.policy, options, service, offline, clock.now());
  }
  const client = options.client ?? clientOf(run);
  run.held.client = client;
  // Credentials first: refused ones end the run (exit 3) before any row is touched. Then who
  // we are to the service: the register's scope.
  const integratorId = await whoAmI(client, run.signal, options.connection);
  if (integratorId === undefined) return await unreached(run, register, client, asOf);
  return await payScope(run, register, client, integratorId, asOf);
}

/** A run that ended before any row was sent or judged. */
function notStarted(stop: Ended['stop']): Ended {
  return { stop, sent: false, approvals: [] };
}

/**
 * The run's register, waited through like the service when it fails (docs/register.md "When
 * the register fails"); undefined when a stop came first.
 */
async function openRunRegister({ options, signal, grace, clock }: RunContext): Promise<Register | undefined> {
  const { logger } = options;
  try {
    return await openRegister(options.register, {
      // Only a rehearsal's throwaway register is made here; a real run's is made on purpose.
      create: options.rehearsal === true,
      ...(options.registerFrom ? { from: options.registerFrom } : {}),
      ...(options.clock ? { clock } : {}),
      warn: (message) => logger.warn(message),
      ...(options.maxOutageSeconds === undefined ? {} : { maxOutageMs: options.maxOutageSeconds * 1000 }),
      // A stop past its grace ends the register's operations at once.
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
    logger.warn({ register: shownLocation(options.register) }, error.message);
    return undefined;
  }
}

/** The client of the payments service, with the run's rate, concurrency, stop and outage budget. */
function clientOf({ options, signal, grace }: RunContext): PayoutsClient {
  return createClient({
    ...options.connection,
    rate: options.rate,
    concurrency: options.concurrency,
    logger: options.logger,
    clock: options.clock,
    stopSignal: signal,
    abandonSignal: grace.abandoned,
    ...(options.maxOutageSeconds === undefined
      ? {}
      : { breaker: { maxOutageMs: options.maxOutageSeconds * 1000 } }),
  });
}

/**
 * Stopped, or the service out of reach, before the first row. After an outage the summary
 * still gives the batch digest, warnings and totals to send that `validate` gave: judged
 * offline, against the scope `validate` reads for this service and user. A register that fails
 * here leaves the summary the rows' digest: the results come first.
 */
async function unreached(
  run: RunContext,
  register: Register,
  client: PayoutsClient,
  asOf: number,
): Promise<Ended> {
  const { breaker } = client;
  const stop = {
    interrupted: run.signal.aborted,
    unavailable: breaker.gaveUp,
    unavailableReason: breaker.gaveUpBecause,
  };
  // A stop keeps to its grace: no pass over the sheet for the warnings first.
  if (stop.interrupted) return notStarted(stop);
  const judgement = await judgeOffline(
    run.options,
    run.read,
    register,
    asOf,
    run.read.snapshot.sidecar('warnings.jsonl'),
  ).catch((error: unknown) => {
    run.options.logger.warn({ err: error }, 'the batch could not be judged against the register');
    return undefined;
  });
  return { ...notStarted(stop), judgement };
}

/**
 * The run under the register scope the service named: the batch judged against it (the digest
 * covers the approver's warnings, which need the register: still before anything is sent, exit
 * 4), the run's record started, the rows sent, then what became known after sending settled.
 */
async function payScope(
  run: RunContext,
  register: Register,
  client: PayoutsClient,
  integratorId: string,
  asOf: number,
): Promise<Ended> {
  const { options, signal, read } = run;
  const scope = await scopeOf(
    register,
    { service: serviceOf(options.connection.baseUrl), integratorId },
    options,
  );
  const store = await register.openScope(scope, options.connection.credentials.username);
  const judgement = await judgeBatch(options, read, store, asOf, read.snapshot.sidecar('warnings.jsonl'));
  if (options.approve !== undefined) checkApproval(options.approve, judgement.digest);
  const underPolicy =
    run.policy === undefined
      ? undefined
      : await approvedUnderPolicy(register, run.policy, options, scope.service, judgement, run.clock.now());
  const approvals =
    underPolicy !== undefined
      ? underPolicy.approvals
      : run.gate === undefined
        ? []
        : await approvedBy(register, run.gate, options, scope.service, judgement.digest, run.clock.now());
  const holder = await RunHolder.start(store, options, judgement.digest, run.clock, client.limiter);
  run.held.run = holder;
  await noteScopeOpened(options, register, holder, approvals);
  const steps = new RowSteps({ client, store, scope, runId: holder.self.runId, signal });
  // Pass 2: claim and send, at most `concurrency` rows in flight, fed from what pass 1 read.
  const sent = await sendRows(
    options,
    read,
    holder,
    steps,
    judgement.judged,
    signal,
    () => client.breaker.gaveUp,
  );
  // A register unreachable past --max-outage or a scratch space that filled, or a register
  // abandoned after a stop, ends the run as an outage of the service or a stop does: reported
  // (exit 6 or 5, the summary printed), not thrown.
  const outage =
    sent.fatal instanceof RegisterOutageError || sent.fatal instanceof ScratchError ? sent.fatal : undefined;
  const registerEnded = outage !== undefined || (signal.aborted && sent.fatal instanceof InterruptedError);
  const unavailable = client.breaker.gaveUp || outage !== undefined;
  if (!sent.fatal && !unavailable)
    await settleAfterSending(options, client, store, sent.spool, settlerOf(store), signal);
  return {
    stop: {
      interrupted: signal.aborted,
      unavailable,
      unavailableReason: client.breaker.gaveUpBecause ?? outage?.message,
      // A stop that abandoned the register leaves its rows as any stop does.
      stoppedBy: registerEnded && signal.aborted ? undefined : sent.fatal,
    },
    sent: holder.sentAnything,
    spool: sent.spool,
    judgement,
    approvals,
    ...(underPolicy ? { policy: underPolicy.view } : {}),
    run: holder,
    ...(sent.fatal && !registerEnded ? { rethrow: sent.fatal } : {}),
  };
}

/** The approvals the run relies on, kept in its record, and the register scope it opened, logged. */
async function noteScopeOpened(
  options: RunOptions,
  register: Register,
  holder: RunHolder,
  approvals: RunApproval[],
): Promise<void> {
  const { logger } = options;
  const { store } = holder;
  if (approvals.length > 0) {
    // The run's record names the approvals it relied on (status, register copy).
    await store.recordRunApprovals(holder.self.runId, approvals);
    logger.info(
      { approvals: approvals.map(({ principal, fingerprint }) => ({ principal, fingerprint })) },
      'signed approvals counted',
    );
  }
  const { service, integratorId } = store.scope;
  logger.info(
    { register: register.location, service, integrator: integratorId, run: holder.self.runId },
    'register scope opened',
  );
  // A rehearsal's register is its own and new every time: nothing to say of it.
  if (!options.rehearsal && (await store.recentPayouts(1)).length === 0) {
    // A lost volume or a new container starts from nothing: say so, once, where it shows.
    logger.warn(
      { register: register.location, service, integrator: integratorId },
      'the register has no payouts of this service and integrator yet: if they were paid from another register, stop and copy it first (payouts register copy --from OLD --to NEW)',
    );
  }
}

/**
 * Pass 3, whatever ended the run: the results file in sheet order, from what pass 1 read and
 * the rows' outcomes; then the run's record marked finished. The results are written first: a
 * register that fails now (or a stop past its grace) costs the record its outcome, not the
 * report.
 */
async function endRun({ options, read, signal }: RunContext, ended: Ended): Promise<RunReport> {
  const { judgement, run } = ended;
  const written = await writeResults(options, read, ended.spool, ended.stop, judgement?.judged);
  for (const [currency, minor] of judgement?.sendTotals ?? [])
    BatchSummary.add(written.summary.sendTotals, currency, minor);
  // A run that sent reads the signal now: a stop that came while the results were written counts.
  const interrupted = run === undefined ? ended.stop.interrupted : signal.aborted;
  if (run !== undefined) {
    const exitCode = options.exitCodeOf?.({
      sent: run.sentAnything,
      interrupted,
      unavailable: ended.stop.unavailable,
      rowsOk: written.summary.allOk,
    });
    await run
      .finish(written.summary, ended.rethrow === undefined ? exitCode : undefined)
      .catch((error: unknown) => {
        options.logger.warn({ err: error }, 'the run could not be marked finished in the register');
      });
  }
  if (ended.rethrow !== undefined) throw afterSending(ended.rethrow);
  return report(options, written, {
    interrupted,
    unavailable: ended.stop.unavailable,
    unavailableReason: ended.stop.unavailableReason,
    sent: run?.sentAnything ?? false,
    ...(run === undefined ? {} : { runId: run.self.runId }),
    digest: judgement?.digest ?? read.digest,
    sincePrevious: judgement?.sincePrevious ?? null,
    approvals: ended.approvals,
    policy: ended.policy ?? null,
  });
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
    policy: PolicyView | null;
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
    policy: how.policy,
  };
}
