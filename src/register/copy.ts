/**
 * `payouts register copy --from A --to B`: every scope, run, payout, payee, payee history, event,
 * approval and withdrawal, and every approval policy with its signatures and versions, of one
 * register into another (SQLite to PostgreSQL and back), so a team moving stores keeps its history. Idempotent: what the target holds already is left as it is; a record whose key the
 * target holds with other contents is a conflict, refused and listed, never written over.
 */
import type { Register, RegisterEntry } from './types.js';

/** Entries written per transaction of the target. */
const CHUNK = 500;

export interface CopyReport {
  /** Per entry type: how many were added, and how many the target held already. */
  added: Record<RegisterEntry['type'], number>;
  same: Record<RegisterEntry['type'], number>;
  /** Every conflict, in words: the key, and what differs. */
  conflicts: string[];
}

/** Copies every entry of `from` into `to`. */
export async function copyRegister(from: Register, to: Register): Promise<CopyReport> {
  const zero = () => ({
    origin: 0,
    scope: 0,
    run: 0,
    payout: 0,
    payee: 0,
    history: 0,
    event: 0,
    approval: 0,
    runApproval: 0,
    withdrawal: 0,
    policyProposal: 0,
    policySignature: 0,
    policy: 0,
  });
  const report: CopyReport = { added: zero(), same: zero(), conflicts: [] };
  let chunk: RegisterEntry[] = [];
  const flush = async () => {
    const held = await to.putAll(chunk);
    chunk.forEach((entry, i) => {
      const existing = held[i];
      if (existing === undefined) report.added[entry.type] += 1;
      else {
        const conflict = conflictOf(entry, existing);
        if (conflict === undefined) report.same[entry.type] += 1;
        else report.conflicts.push(conflict);
      }
    });
    chunk = [];
  };
  for await (const entry of from.entries()) {
    chunk.push(entry);
    // A scope goes in on its own: what follows it needs it in the target.
    if (entry.type === 'scope' || entry.type === 'origin' || chunk.length >= CHUNK) await flush();
  }
  if (chunk.length > 0) await flush();
  return report;
}

/**
 * What makes two entries under one key different records (undefined: the same one). A payout
 * is the same while its details, key and transaction agree; its state may have moved on since
 * (a settlement, which `reconcile` or a webhook records anew).
 */
export function conflictOf(entry: RegisterEntry, held: RegisterEntry): string | undefined {
  const differs = (what: string, a: unknown, b: unknown) =>
    JSON.stringify(a) === JSON.stringify(b)
      ? undefined
      : `${what}: ${JSON.stringify(a)} here, ${JSON.stringify(b)} there`;
  const scope = (e: RegisterEntry) => ('service' in e ? `${e.service} integrator ${e.integratorId}` : '');
  const first = (...checks: (string | undefined)[]) => checks.find((c) => c !== undefined);
  switch (entry.type) {
    case 'origin': {
      const other = held as typeof entry;
      const why = differs('declaration', entry.declaration, other.declaration);
      return why && `origin ${scope(entry)}: ${why}`;
    }
    case 'scope': {
      const other = held as typeof entry;
      return other.secret === entry.secret
        ? undefined
        : `scope ${scope(entry)}: the target has its own fingerprint secret (it was used on its own before), so the payee fingerprints of the two cannot be compared`;
    }
    case 'run': {
      const { run } = held as typeof entry;
      const why = first(
        differs('sheet', entry.run.sheet, run.sheet),
        differs('digest', entry.run.digest, run.digest),
        differs('started', entry.run.startedAt, run.startedAt),
      );
      return why && `run ${entry.run.id} of ${scope(entry)}: ${why}`;
    }
    case 'payout': {
      const { payout } = held as typeof entry;
      const why = first(
        differs('details', entry.payout.details, payout.details),
        differs('idempotency key', entry.payout.idempotencyKey, payout.idempotencyKey),
        entry.payout.transactionId && payout.transactionId
          ? differs('transaction', entry.payout.transactionId, payout.transactionId)
          : undefined,
      );
      return why && `payout ${JSON.stringify(entry.payout.reference)} of ${scope(entry)}: ${why}`;
    }
    case 'payee': {
      const other = held as typeof entry;
      const why = differs('id', entry.id, other.id);
      return why && `${entry.kind} ${entry.fingerprint} of ${scope(entry)}: ${why}`;
    }
    case 'history':
      // A payee's history only moves forward: the one the target holds stands, whatever it says.
      return undefined;
    case 'approval': {
      // One text signed by one key: the same approval, whichever signature bytes (ECDSA signs
      // anew each time) or principals its recording named; the one the target holds stands.
      return undefined;
    }
    case 'withdrawal':
    case 'policyProposal':
    case 'policySignature':
      // Named by what was signed (or proposed) and by whom: the same record, whichever signature bytes.
      return undefined;
    case 'policy': {
      // A version number is taken once: two registers that put different policies in force under
      // one number have each their own history, which a copy must not merge.
      const other = (held as typeof entry).policy;
      const why = differs('policy digest', entry.policy.digest, other.digest);
      return why && `policy version ${entry.policy.version} of ${entry.policy.service}: ${why}`;
    }
    case 'runApproval': {
      const { approval } = held as typeof entry;
      const why = differs('key', entry.approval.fingerprint, approval.fingerprint);
      return (
        why && `approval of ${entry.approval.principal} for run ${entry.runId} of ${scope(entry)}: ${why}`
      );
    }
    case 'event': {
      const { event } = held as typeof entry;
      const why = differs('payload', entry.event.payload, event.payload);
      return why && `event ${entry.event.operation} of ${entry.event.resourceId}: ${why}`;
    }
  }
}
