/**
 * `payouts status` (docs/register.md "`payouts status`"): what the register knows, read-only and
 * offline. Per reference: its state, amount, transaction, when and from which sheet; without
 * references, the recent runs (batches). Returns data; the CLI formats it.
 */
import { chooseScope, type ScopeHint } from './choose.js';
import { holderAlive, newSelf } from './lease.js';
import { type RegisterSource, shownLocation } from './location.js';
import { openNamedRegister } from './open.js';
import { abandonedSendReason } from './rules.js';
import type { PayoutRecord, RunApproval, RunRecord, ScopeInfo } from './types.js';

export interface StatusOptions extends ScopeHint {
  /** Where the register lives: a file path or a PostgreSQL URL. */
  register: string;
  /** Which of --register, PAYOUTS_REGISTER and the default named it. */
  registerFrom?: RegisterSource;
  references: readonly string[];
  /** How many recent runs to list without references. */
  limit: number;
}

/** One reference as the register knows it (`state: 'not-found'` when it does not). */
export interface ReferenceStatus {
  reference: string;
  state: PayoutRecord['state'] | 'not-found';
  amount?: string;
  currency?: string;
  rail?: string;
  payee?: string;
  transactionId?: string;
  simulationId?: string;
  /** When the transaction was created, else when the record last changed. */
  when?: string;
  sheet?: string;
  error?: string;
  service?: string;
  integratorId?: string;
}

/** One run (a batch) as the register knows it. */
export interface RunStatus {
  runId: string;
  sheet: string;
  digest: string;
  startedAt: string;
  finishedAt?: string;
  /** running, finished, or died (a run that ended without finishing: killed, crashed). */
  state: 'running' | 'finished' | 'died';
  rows?: number;
  statuses?: Record<string, number>;
  exitCode?: number;
  host: string;
  pid: number;
  service: string;
  integratorId: string;
  /** The signed approvals the run relied on (`run --require-approvals`). */
  approvals: RunApproval[];
}

export type StatusReport =
  | { kind: 'references'; register: string; references: ReferenceStatus[]; note?: string }
  | { kind: 'runs'; register: string; runs: RunStatus[]; note?: string };

/**
 * Reads the register. A missing one is an error (exit 2): a mistyped location must not read as
 * a register that never paid anything.
 */
export async function registerStatus(options: StatusOptions): Promise<StatusReport> {
  const shown = shownLocation(options.register);
  const byReferences = options.references.length > 0;
  const empty = (note: string): StatusReport =>
    byReferences
      ? {
          kind: 'references',
          register: shown,
          references: options.references.map((reference) => ({ reference, state: 'not-found' as const })),
          note,
        }
      : { kind: 'runs', register: shown, runs: [], note };
  const register = await openNamedRegister(options.register, options.registerFrom);
  try {
    const all = await register.scopes();
    // Without a hint every scope is shown, each row naming its service and integrator.
    const scopes: ScopeInfo[] =
      options.service === undefined && options.login === undefined
        ? all
        : (() => {
            const chosen = chooseScope(all, options);
            return chosen.scope ? [chosen.scope] : [];
          })();
    if (scopes.length === 0) return empty('the register has no scope for this service');
    if (byReferences) {
      const self = newSelf();
      const found = new Map<string, ReferenceStatus>();
      for (const scope of scopes) {
        const store = await register.scopeStore(scope);
        for (const record of (await store.lookup(options.references)).values()) {
          if (!found.has(record.reference))
            found.set(record.reference, referenceStatus(record, scope, holderAlive(record.run, self)));
        }
      }
      return {
        kind: 'references',
        register: shown,
        references: options.references.map(
          (reference) => found.get(reference) ?? { reference, state: 'not-found' },
        ),
      };
    }
    const self = newSelf();
    const runs: RunStatus[] = [];
    for (const scope of scopes) {
      const store = await register.scopeStore(scope);
      const recent = await store.runs(options.limit);
      // A register an older payouts wrote, read without migrating it, has no approvals to show.
      const approvals = await store
        .runApprovals(recent.map((run) => run.id))
        .catch(() => new Map<string, RunApproval[]>());
      for (const run of recent)
        runs.push(runStatus(run, scope, holderAlive(run, self), approvals.get(run.id) ?? []));
    }
    runs.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
    return { kind: 'runs', register: shown, runs: runs.slice(0, options.limit) };
  } finally {
    await register.close();
  }
}

/**
 * A reference as the register holds it, but for one whose run stopped while its transaction
 * request was being sent: `unknown`, as the next run or reconcile records it, not `sending`.
 */
function referenceStatus(record: PayoutRecord, scope: ScopeInfo, alive: boolean): ReferenceStatus {
  const abandoned = record.state === 'sending' && !alive;
  const error = abandoned ? abandonedSendReason(record.sheet) : record.error;
  return {
    reference: record.reference,
    state: abandoned ? 'unknown' : record.state,
    amount: record.details.amount,
    currency: record.details.currency,
    rail: record.details.rail,
    payee: record.details.payeeHint,
    ...(record.transactionId ? { transactionId: record.transactionId } : {}),
    ...(record.simulationId ? { simulationId: record.simulationId } : {}),
    when: record.paidAt ?? record.updatedAt,
    sheet: record.sheet,
    ...(error ? { error } : {}),
    service: scope.service,
    integratorId: scope.integratorId,
  };
}

function runStatus(run: RunRecord, scope: ScopeInfo, alive: boolean, approvals: RunApproval[]): RunStatus {
  return {
    runId: run.id,
    sheet: run.sheet,
    digest: run.digest,
    startedAt: run.startedAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    state: run.finishedAt ? 'finished' : alive ? 'running' : 'died',
    ...(run.rows !== undefined ? { rows: run.rows } : {}),
    ...(run.statuses ? { statuses: run.statuses } : {}),
    ...(run.exitCode !== undefined ? { exitCode: run.exitCode } : {}),
    host: run.host,
    pid: run.pid,
    service: scope.service,
    integratorId: scope.integratorId,
    approvals,
  };
}
