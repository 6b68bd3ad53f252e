/**
 * The register's records as both stores' rows hold them: a payout's columns in one order, a
 * run's, a scope's and an event's row. The stores differ in how they query, never in what a
 * record is: a file keeps times as ISO text, PostgreSQL gives a Date; both read the same here.
 */
import { leaseExpired, type StoredLease, type StoreTime } from './lease.js';
import type {
  EventRecord,
  NewRun,
  PayoutRecord,
  PayoutState,
  RunRecord,
  ScopeInfo,
  StoredPayout,
} from './types.js';

/**
 * A payout as the register's queries read it: an array of these columns, in this order (raw
 * mode, or the packed look-up), and whether each may be NULL. Named rows cost libsql an object
 * with a key per column for each row, most of the time of a look-up of a whole sheet.
 */
export const PAYOUT_FIELDS = [
  ['reference', false],
  ['amount', false],
  ['currency', false],
  ['rail', false],
  ['payee', false],
  ['payee_hint', false],
  ['state', false],
  ['idempotency_key', false],
  ['beneficiary_id', true],
  ['recipient_id', true],
  ['simulation_id', true],
  ['transaction_id', true],
  ['error', true],
  ['run_id', false],
  ['sheet', false],
  ['paid_at', true],
  ['updated_at', false],
  ['payee_key', true],
  ['payee_name', true],
  ['warnings', true],
] as const;

/** A stored payout as the cells of PAYOUT_FIELDS, in their order. */
export function payoutCells(p: StoredPayout): (string | null)[] {
  return [
    p.reference,
    p.details.amount,
    p.details.currency,
    p.details.rail,
    p.details.payee,
    p.details.payeeHint,
    p.state,
    p.idempotencyKey,
    p.beneficiaryId ?? null,
    p.recipientId ?? null,
    p.simulationId ?? null,
    p.transactionId ?? null,
    p.error ?? null,
    p.runId,
    p.sheet,
    p.paidAt ?? null,
    p.updatedAt,
    p.payeeKey ?? null,
    p.payeeName ?? null,
    p.warnings ?? null,
  ];
}

/** An event as both stores' rows hold it (SQLite keeps `success` as 0 or 1). */
export interface EventRow {
  integrator_id: string;
  resource_id: string;
  operation: string;
  success: number | boolean;
  message: string | null;
  occurred_at: string;
  received_at: string;
  payload: string;
}

export function eventOf(row: EventRow): EventRecord {
  return {
    integratorId: row.integrator_id,
    resourceId: row.resource_id,
    operation: row.operation,
    success: row.success === true || row.success === 1,
    message: row.message,
    occurredAt: row.occurred_at,
    receivedAt: row.received_at,
    payload: row.payload,
  };
}

/** A time as the register shows it: ISO 8601 text. */
export function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : value;
}

/** The payout columns, in PAYOUT_FIELDS order, for a statement's text. */
export const PAYOUT_COLUMNS = PAYOUT_FIELDS.map(([column]) => column).join(', ');

/** A payout's cells in PAYOUT_FIELDS order (a raw row, or a named one through cellsOf). */
export type PayoutCells = readonly (string | null)[];

/** The record of a payout's cells, with its run when the reader has it. */
export function payoutOf(cells: PayoutCells, run: RunRecord | undefined): PayoutRecord {
  const text = (i: number) => cells[i] as string;
  const record: PayoutRecord = {
    reference: text(0),
    details: { amount: text(1), currency: text(2), rail: text(3), payee: text(4), payeeHint: text(5) },
    state: text(6) as PayoutState,
    idempotencyKey: text(7),
    runId: text(13),
    sheet: text(14),
    updatedAt: text(16),
  };
  if (cells[8] != null) record.beneficiaryId = cells[8];
  if (cells[9] != null) record.recipientId = cells[9];
  if (cells[10] != null) record.simulationId = cells[10];
  if (cells[11] != null) record.transactionId = cells[11];
  if (cells[12] != null) record.error = cells[12];
  if (cells[15] != null) record.paidAt = cells[15];
  if (cells[17] != null) record.payeeKey = cells[17];
  if (cells[18] != null) record.payeeName = cells[18];
  if (cells[19] != null) record.warnings = cells[19];
  if (run !== undefined) record.run = run;
  return record;
}

/** The cells of a payout's named row. */
export function cellsOf(row: Record<string, unknown>): PayoutCells {
  return PAYOUT_FIELDS.map(([column]) => {
    const value = row[column] as string | Date | null;
    return value === null || value === undefined ? null : iso(value);
  });
}

/** A run's columns in both stores (a file adds its boot clock's, `lease_boot` and `lease_uptime_ms`). */
export const RUN_COLUMNS = [
  'id',
  'sheet',
  'digest',
  'host',
  'pid',
  'machine',
  'process_start',
  'started_at',
  'heartbeat_at',
  'lease_expires_at',
  'finished_at',
  'rows',
  'statuses',
  'exit_code',
] as const;

/** A run's row in either store (the boot columns are a file's). */
export interface RunRow {
  id: string;
  sheet: string;
  digest: string;
  host: string;
  pid: number | string;
  machine: string | null;
  process_start: string | null;
  started_at: string;
  heartbeat_at: string | Date;
  lease_expires_at: string | Date;
  lease_boot?: string | null;
  lease_uptime_ms?: number | string | null;
  finished_at: string | Date | null;
  rows: number | null;
  statuses: string | null;
  exit_code: number | null;
}

/** The values a run is written with, in either store (its lease and outcome aside). */
export function runValues(run: NewRun): Record<string, unknown> {
  return {
    id: run.id,
    sheet: run.sheet,
    digest: run.digest,
    host: run.host,
    pid: run.pid,
    machine: run.machine ?? null,
    processStart: run.processStart ?? null,
    startedAt: run.startedAt,
  };
}

/** The lease a run's row holds. */
export function leaseOf(row: RunRow): StoredLease {
  return {
    expiresAt: row.lease_expires_at,
    boot: row.lease_boot ?? null,
    uptimeMs: row.lease_uptime_ms ?? null,
  };
}

/** The record of a run's row; whether its lease ran out is judged at `time` (undefined: taken as out). */
export function runOf(row: RunRow, time: StoreTime | undefined): RunRecord {
  const run: RunRecord = {
    id: row.id,
    sheet: row.sheet,
    digest: row.digest,
    host: row.host,
    pid: Number(row.pid),
    startedAt: row.started_at,
    heartbeatAt: iso(row.heartbeat_at),
    leaseExpiresAt: iso(row.lease_expires_at),
    leaseExpired: time === undefined || leaseExpired(leaseOf(row), time),
  };
  if (row.machine !== null) run.machine = row.machine;
  if (row.process_start !== null) run.processStart = row.process_start;
  if (row.finished_at !== null) run.finishedAt = iso(row.finished_at);
  if (row.rows !== null) run.rows = row.rows;
  if (row.statuses !== null) run.statuses = JSON.parse(row.statuses) as Record<string, number>;
  if (row.exit_code !== null) run.exitCode = row.exit_code;
  return run;
}

/** The run of a payout's row joined with its run's columns, prefixed `r_` (none: no such run). */
export function joinedRunOf(row: Record<string, unknown>, time: StoreTime): RunRecord | undefined {
  if (row['r_id'] === null || row['r_id'] === undefined) return undefined;
  const run: Record<string, unknown> = {};
  for (const key in row) if (key.startsWith('r_')) run[key.slice(2)] = row[key];
  return runOf(run as unknown as RunRow, time);
}

/** A scope's row in either store. */
export interface ScopeRow {
  id: number | string;
  service: string;
  integrator_id: string;
  secret: Uint8Array;
  login: string | null;
  created_at: string | Date;
  last_used_at: string | Date;
}

export function scopeInfo(row: ScopeRow): ScopeInfo {
  return {
    id: Number(row.id),
    service: row.service,
    integratorId: row.integrator_id,
    ...(row.login ? { login: row.login } : {}),
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  };
}
