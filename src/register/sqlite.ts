/**
 * The register in one SQLite file, through libsql: its N-API binaries ship inside registry
 * packages, so one `npm ci` serves Node 20 and Node 24 alike.
 *
 * Durability as the per-sheet checkpoint it replaces had it: WAL, synchronous=FULL, so a write is on disk when its
 * promise resolves, and a transaction's intent is durable before its request leaves. Writes
 * made in the same tick share one transaction (group commit): one fsync per group, not per
 * row. A busy timeout lets two processes share the file; claims run in IMMEDIATE transactions
 * so two runs never both hold one reference.
 *
 * A file has no clock of its own: a lease is timed by the kernel's time since boot when the
 * reader runs on the boot that wrote it (one machine: no wall clock, faked or not, can cut a
 * live run's lease short), else by the wall clock.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { type Clock, systemClock } from '../clock.js';
import { errnoOf, RegisterError } from '../errors.js';
import { makeFolderSync } from '../folders.js';
import { scrub } from '../redact.js';
import type { PayoutDetails } from './details.js';
import { Fingerprints } from './fingerprints.js';
import type { ScopeIdentity } from './identity.js';
import { bootId, LEASE, uptimeMs } from './lease.js';
import { type EventRow, eventOf, PAYOUT_FIELDS, payoutCells } from './records.js';
import {
  abandonedSendReason,
  answerMayLand,
  CHANGE_FIELDS,
  claimedState,
  claimLost,
  needsLease,
  SETTLEABLE,
  withPayment,
} from './rules.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import type {
  ClaimDecision,
  ClaimRequest,
  EventRecord,
  NewRun,
  OriginDeclaration,
  PayeeHistory,
  PayeePayment,
  PayoutChange,
  PayoutRecord,
  PayoutState,
  Register,
  RegisterEntry,
  RunRecord,
  ScopeInfo,
  ScopeKey,
  ScopeStore,
  Settlement,
  UnknownResolved,
} from './types.js';

type Db = InstanceType<typeof Database>;
type Statement = Database.Statement<unknown[]>;

export interface OpenRegisterOptions {
  /** Open an existing register for reading only (validate, status); never creates one. */
  readonly?: boolean;
  /** How long a write waits for another process's transaction (ms). */
  busyTimeoutMs?: number;
  /** The wall clock; with one given (tests), leases are timed by it alone, not by the boot clock. */
  clock?: Clock;
  /** How long a run's lease lasts past its last heartbeat (ms). */
  leaseMs?: number;
}

/** The kernel's time since boot, where there is one: the time a file's leases are measured in. */
interface BootClock {
  id: string;
  uptimeMs(): number;
}

function systemBootClock(): BootClock | undefined {
  const id = bootId();
  if (id === undefined || uptimeMs() === undefined) return undefined;
  return { id, uptimeMs: () => uptimeMs()! };
}

/** Defaults in one object. */
export const REGISTER_DEFAULTS = {
  /** Long enough for another run's group commit under load; short enough to report a stuck lock. */
  busyTimeoutMs: 15_000,
} as const;

/** Opens (creating when allowed) the register at `path`. Throws RegisterError, never a raw SQLite error. */
export function openSqliteRegister(path: string, options: OpenRegisterOptions = {}): Register {
  const readonly = options.readonly ?? false;
  const fail = (what: string, cause: unknown) =>
    new RegisterError(`the register ${path} ${what}`, { path, cause });
  // `run` opens to write: an existing register in a folder it cannot write is one it cannot write.
  const unopened = (cause: unknown) =>
    fail(!readonly && isReadonlyDirectory(cause) ? 'cannot be written' : 'cannot be opened', cause);
  if (!readonly) {
    try {
      makeFolderSync(dirname(path), 0o700);
      // Created here first so that it is private (0600); SQLite gives its -wal and -shm the same mode.
      closeSync(openSync(path, 'a', 0o600));
    } catch (cause) {
      // mkdir says EEXIST when a part of the path is a file: say what that means.
      const errno = (cause as NodeJS.ErrnoException).code === 'EEXIST' ? 'ENOTDIR' : undefined;
      // An existing register this user cannot write is not one that cannot be created.
      const what = existsSync(path) ? 'cannot be written' : 'cannot be created';
      throw new RegisterError(`the register ${path} ${what}`, { path, cause, errno });
    }
  }
  const connect = (location: string): Db => {
    let db: Db;
    try {
      // libsql does not honour fileMustExist: a read-only open must not create an empty file.
      if (readonly) statSync(path);
      db = new Database(location, readonly ? { readonly: true, fileMustExist: true } : {});
    } catch (cause) {
      throw unopened(cause);
    }
    try {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? REGISTER_DEFAULTS.busyTimeoutMs}`);
      if (!readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        migrate(db, path);
      } else {
        checkVersion(db, path);
      }
    } catch (cause) {
      db.close();
      throw cause instanceof RegisterError ? cause : unopened(cause);
    }
    return db;
  };
  let db: Db;
  try {
    db = connect(path);
  } catch (error) {
    // A register in a folder this user cannot write (SQLITE_READONLY_DIRECTORY): SQLite cannot
    // make the shared-memory file that reading a WAL database takes. Reading it as an immutable
    // file needs none; `validate` and `status` only read, and show what it held when opened.
    if (!readonly || !isReadonlyDirectory(error)) throw error;
    db = connect(`file:${encodeURI(path)}?immutable=1`);
  }
  return new SqliteRegister(path, db, readonly, {
    clock: options.clock ?? systemClock,
    boot: options.clock === undefined ? systemBootClock() : undefined,
    leaseMs: options.leaseMs ?? LEASE.leaseMs,
  });
}

function pragmaNumber(db: Db, name: string): number {
  return Number(scalar(db.prepare(`PRAGMA ${name}`).get()) ?? 0);
}

/**
 * The single column of a row. libsql's `pluck()` does not pluck (it returns the row), and its
 * rows carry a `_metadata` property beside the columns.
 */
function scalar(row: unknown): unknown {
  if (row === undefined || row === null) return undefined;
  const key = Object.keys(row).find((k) => k !== '_metadata');
  return key === undefined ? undefined : (row as Record<string, unknown>)[key];
}

function checkVersion(db: Db, path: string): number {
  const version = pragmaNumber(db, 'user_version');
  const appId = pragmaNumber(db, 'application_id');
  const tables = Number(scalar(db.prepare('SELECT count(*) FROM sqlite_master').get()));
  if (appId !== APPLICATION_ID && (appId !== 0 || tables > 0)) {
    throw new RegisterError(
      `${path} is not a payouts register (another SQLite database): pass --register with another path`,
      { path },
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new RegisterError(
      `the register ${path} was written by a newer payouts (schema version ${version}, this payouts knows ${SCHEMA_VERSION}): upgrade payouts to use it`,
      { path },
    );
  }
  return version;
}

function migrate(db: Db, path: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const version = checkVersion(db, path);
    for (let v = version; v < SCHEMA_VERSION; v += 1) db.exec(MIGRATIONS[v]!);
    if (version < SCHEMA_VERSION) {
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      db.pragma(`application_id = ${APPLICATION_ID}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

interface QueuedWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class SqliteRegister implements Register {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  private closed = false;
  private readonly scopeStores = new Map<number, SqliteScope>();

  constructor(
    readonly location: string,
    readonly db: Db,
    readonly readonly: boolean,
    readonly time: { clock: Clock; boot: BootClock | undefined; leaseMs: number },
  ) {}

  now(): string {
    return new Date(this.time.clock.now()).toISOString();
  }

  /** A new lease from now: its end by the wall clock, and by the boot clock where there is one. */
  lease(): { expiresAt: string; boot: string | null; uptimeMs: number | null } {
    const { clock, boot, leaseMs } = this.time;
    return {
      expiresAt: new Date(clock.now() + leaseMs).toISOString(),
      boot: boot?.id ?? null,
      uptimeMs: boot === undefined ? null : boot.uptimeMs() + leaseMs,
    };
  }

  /** Whether a lease has run out: by the boot clock when it was written on this boot, else by the wall clock. */
  leaseExpired(row: Pick<RunRow, 'lease_expires_at' | 'lease_boot' | 'lease_uptime_ms'>): boolean {
    const { clock, boot } = this.time;
    if (boot !== undefined && row.lease_boot === boot.id && row.lease_uptime_ms !== null)
      return boot.uptimeMs() >= row.lease_uptime_ms;
    return clock.now() >= Date.parse(row.lease_expires_at);
  }

  runOf(row: RunRow): RunRecord {
    return runOf(row, this.leaseExpired(row));
  }

  /** Runs `fn` now, turning SQLite's errors into RegisterError. */
  read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw this.failure('cannot be read', error);
    }
  }

  /**
   * Queues a write; the writes of one tick commit together (group commit). Resolves with
   * `apply`'s result once the transaction is durable.
   */
  write<T>(apply: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`register ${this.location} is closed`));
    if (this.readonly) return Promise.reject(new Error(`register ${this.location} was opened read-only`));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commit());
      }
    });
  }

  private commit(): void {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        for (const write of group) {
          // A write that fails on its own (a bug, a constraint) must not undo the others.
          this.db.exec('SAVEPOINT w');
          try {
            results.push({ ok: true, value: write.apply() });
            this.db.exec('RELEASE w');
          } catch (error) {
            this.db.exec('ROLLBACK TO w');
            this.db.exec('RELEASE w');
            results.push({ ok: false, error });
          }
        }
        this.db.exec('COMMIT');
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    } catch (error) {
      const failure = this.failure('cannot be written', error);
      for (const write of group) write.reject(failure);
      return;
    }
    group.forEach((write, i) => {
      const result = results[i]!;
      if (result.ok) write.resolve(result.value);
      else
        write.reject(
          isSqliteError(result.error) ? this.failure('cannot be written', result.error) : result.error,
        );
    });
  }

  failure(what: string, error: unknown): Error {
    if (error instanceof RegisterError) return error;
    if (!isSqliteError(error)) return error as Error;
    return new RegisterError(`the register ${this.location} ${what}`, { path: this.location, cause: error });
  }

  async openScope(identity: ScopeIdentity, login?: string): Promise<ScopeStore> {
    const info = await this.write(() => {
      const now = this.now();
      this.db
        .prepare(
          `INSERT INTO scopes (service, integrator_id, secret, login, created_at, last_used_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (service, integrator_id) DO UPDATE SET last_used_at = excluded.last_used_at,
             login = coalesce(excluded.login, scopes.login)`,
        )
        .run(identity.service, identity.integratorId, randomBytes(32), login ?? null, now, now);
      return this.db
        .prepare('SELECT * FROM scopes WHERE service = ? AND integrator_id = ?')
        .get(identity.service, identity.integratorId) as ScopeRow;
    });
    return this.storeFor(info);
  }

  async scopes(): Promise<ScopeInfo[]> {
    return this.read(() =>
      (this.db.prepare('SELECT * FROM scopes ORDER BY last_used_at DESC, id DESC').all() as ScopeRow[]).map(
        scopeInfo,
      ),
    );
  }

  async scopeStore(scope: ScopeInfo): Promise<ScopeStore> {
    const row = this.read(
      () => this.db.prepare('SELECT * FROM scopes WHERE id = ?').get(scope.id) as ScopeRow,
    );
    return this.storeFor(row);
  }

  private storeFor(row: ScopeRow): SqliteScope {
    let store = this.scopeStores.get(row.id);
    if (!store) {
      store = new SqliteScope(this, scopeInfo(row), Buffer.from(row.secret));
      this.scopeStores.set(row.id, store);
    }
    return store;
  }

  recordEvent(event: EventRecord, settles?: Settlement): Promise<boolean> {
    return this.write(() => {
      if (settles) {
        // Whichever scope of this integrator paid it; only a transaction that exists settles.
        this.db
          .prepare(
            `UPDATE payouts SET state = ?, error = ?, updated_at = ? WHERE transaction_id = ?
             AND scope_id IN (SELECT id FROM scopes WHERE integrator_id = ?)
             AND state IN (${SETTLEABLE.map((state) => `'${state}'`).join(', ')})`,
          )
          .run(
            settles.state,
            settles.error === null ? null : scrub(settles.error),
            this.now(),
            settles.transactionId,
            event.integratorId,
          );
      }
      const inserted = this.db
        .prepare(
          `INSERT INTO events (integrator_id, resource_id, operation, success, message, occurred_at, received_at, payload)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(
          event.integratorId,
          event.resourceId,
          event.operation,
          event.success ? 1 : 0,
          event.message === null ? null : scrub(event.message),
          event.occurredAt,
          event.receivedAt,
          scrub(event.payload),
        );
      return inserted.changes > 0;
    });
  }

  async origin(key: ScopeKey): Promise<OriginDeclaration | undefined> {
    const row = this.read(
      () =>
        this.db
          .prepare('SELECT same_as FROM origins WHERE service = ? AND integrator_id = ?')
          .get(key.service, key.integratorId) as { same_as: string | null } | undefined,
    );
    return row === undefined
      ? undefined
      : row.same_as === null
        ? { separate: true }
        : { sameAs: row.same_as };
  }

  declareOrigin(key: ScopeKey, declaration: OriginDeclaration): Promise<void> {
    return this.write(() => {
      this.db
        .prepare(
          `INSERT INTO origins (service, integrator_id, same_as, declared_at) VALUES (?, ?, ?, ?)
           ON CONFLICT DO UPDATE SET same_as = excluded.same_as, declared_at = excluded.declared_at`,
        )
        .run(key.service, key.integratorId, 'sameAs' in declaration ? declaration.sameAs : null, this.now());
    });
  }

  async *entries(): AsyncIterable<RegisterEntry> {
    const origins = this.read(
      () =>
        this.db.prepare('SELECT * FROM origins ORDER BY service, integrator_id').all() as {
          service: string;
          integrator_id: string;
          same_as: string | null;
          declared_at: string;
        }[],
    );
    for (const o of origins) {
      yield {
        type: 'origin',
        service: o.service,
        integratorId: o.integrator_id,
        declaration: o.same_as === null ? { separate: true } : { sameAs: o.same_as },
        declaredAt: o.declared_at,
      };
    }
    const scopes = this.read(() => this.db.prepare('SELECT * FROM scopes ORDER BY id').all() as ScopeRow[]);
    for (const row of scopes) {
      const key = { service: row.service, integratorId: row.integrator_id };
      yield {
        type: 'scope',
        ...key,
        secret: Buffer.from(row.secret).toString('base64'),
        ...(row.login ? { login: row.login } : {}),
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
      };
      const runs = this.read(
        () =>
          this.db
            .prepare('SELECT * FROM runs WHERE scope_id = ? ORDER BY started_at')
            .all(row.id) as RunRow[],
      );
      for (const run of runs) {
        const { leaseExpired: _, ...stored } = runOf(run, true);
        yield { type: 'run', ...key, run: stored };
      }
      // A page at a time: a register can hold millions of payouts.
      const page = this.db.prepare(
        `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE scope_id = ? AND reference > ? ORDER BY reference LIMIT 1000`,
      );
      page.raw(true);
      for (let after = ''; ; ) {
        const cells = this.read(() => page.all(row.id, after) as PayoutCells[]);
        if (cells.length === 0) break;
        for (const payout of cells)
          yield { type: 'payout', ...key, payout: payoutOf(payout, () => undefined) };
        after = cells.at(-1)![0] as string;
      }
      const payees = this.read(
        () =>
          this.db
            .prepare('SELECT * FROM payees WHERE scope_id = ? ORDER BY kind, fingerprint')
            .all(row.id) as {
            kind: 'beneficiary' | 'recipient';
            fingerprint: string;
            id: string;
            created_at: string;
          }[],
      );
      for (const payee of payees) {
        yield {
          type: 'payee',
          ...key,
          kind: payee.kind,
          fingerprint: payee.fingerprint,
          id: payee.id,
          createdAt: payee.created_at,
        };
      }
      const histories = this.read(
        () =>
          this.db
            .prepare('SELECT payee, history FROM payee_history WHERE scope_id = ? ORDER BY payee')
            .all(row.id) as { payee: string; history: string }[],
      );
      for (const h of histories)
        yield { type: 'history', ...key, payee: h.payee, history: JSON.parse(h.history) };
    }
    const events = this.read(
      () => this.db.prepare('SELECT * FROM events ORDER BY occurred_at').all() as EventRow[],
    );
    for (const event of events) yield { type: 'event', event: eventOf(event) };
  }

  putAll(entries: readonly RegisterEntry[]): Promise<(RegisterEntry | undefined)[]> {
    return this.write(() => entries.map((entry) => this.put(entry)));
  }

  /** Adds one entry unless its key is held; returns the entry held under it. */
  private put(entry: RegisterEntry): RegisterEntry | undefined {
    const db = this.db;
    if (entry.type === 'event') {
      const e = entry.event;
      const added = db
        .prepare(
          `INSERT INTO events (integrator_id, resource_id, operation, success, message, occurred_at, received_at, payload)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(
          e.integratorId,
          e.resourceId,
          e.operation,
          e.success ? 1 : 0,
          e.message,
          e.occurredAt,
          e.receivedAt,
          e.payload,
        );
      if (added.changes > 0) return undefined;
      const row = db
        .prepare('SELECT * FROM events WHERE integrator_id = ? AND resource_id = ? AND operation = ?')
        .get(e.integratorId, e.resourceId, e.operation) as EventRow;
      return { type: 'event', event: eventOf(row) };
    }
    const key = { service: entry.service, integratorId: entry.integratorId };
    if (entry.type === 'origin') {
      const sameAs = 'sameAs' in entry.declaration ? entry.declaration.sameAs : null;
      const added = db
        .prepare(
          'INSERT INTO origins (service, integrator_id, same_as, declared_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
        )
        .run(entry.service, entry.integratorId, sameAs, entry.declaredAt);
      if (added.changes > 0) return undefined;
      const row = db
        .prepare('SELECT same_as, declared_at FROM origins WHERE service = ? AND integrator_id = ?')
        .get(entry.service, entry.integratorId) as { same_as: string | null; declared_at: string };
      return {
        type: 'origin',
        ...key,
        declaration: row.same_as === null ? { separate: true } : { sameAs: row.same_as },
        declaredAt: row.declared_at,
      };
    }
    if (entry.type === 'scope') {
      const added = db
        .prepare(
          `INSERT INTO scopes (service, integrator_id, secret, login, created_at, last_used_at)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(
          entry.service,
          entry.integratorId,
          Buffer.from(entry.secret, 'base64'),
          entry.login ?? null,
          entry.createdAt,
          entry.lastUsedAt,
        );
      if (added.changes > 0) return undefined;
      const row = db
        .prepare('SELECT * FROM scopes WHERE service = ? AND integrator_id = ?')
        .get(entry.service, entry.integratorId) as ScopeRow;
      return {
        type: 'scope',
        ...key,
        secret: Buffer.from(row.secret).toString('base64'),
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
      };
    }
    const scopeId = scalar(
      db
        .prepare('SELECT id FROM scopes WHERE service = ? AND integrator_id = ?')
        .get(entry.service, entry.integratorId),
    ) as number;
    switch (entry.type) {
      case 'run': {
        const r = entry.run;
        const added = db
          .prepare(
            `INSERT INTO runs (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at, heartbeat_at,
               lease_expires_at, finished_at, rows, statuses, exit_code)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          )
          .run(
            r.id,
            scopeId,
            r.sheet,
            r.digest,
            r.host,
            r.pid,
            r.machine ?? null,
            r.processStart ?? null,
            r.startedAt,
            r.heartbeatAt,
            r.leaseExpiresAt,
            r.finishedAt ?? null,
            r.rows ?? null,
            r.statuses ? JSON.stringify(r.statuses) : null,
            r.exitCode ?? null,
          );
        if (added.changes > 0) return undefined;
        const { leaseExpired: _, ...held } = runOf(
          db.prepare('SELECT * FROM runs WHERE id = ?').get(r.id) as RunRow,
          true,
        );
        return { type: 'run', ...key, run: held };
      }
      case 'payout': {
        const p = entry.payout;
        const added = db
          .prepare(
            `INSERT INTO payouts (scope_id, ${PAYOUT_COLUMNS}) VALUES (?, ${PAYOUT_FIELDS.map(() => '?').join(', ')})
             ON CONFLICT DO NOTHING`,
          )
          .run(scopeId, ...payoutCells(p));
        if (added.changes > 0) return undefined;
        const page = db.prepare(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE scope_id = ? AND reference = ?`);
        page.raw(true);
        return {
          type: 'payout',
          ...key,
          payout: payoutOf(page.get(scopeId, p.reference) as PayoutCells, () => undefined),
        };
      }
      case 'payee': {
        const added = db
          .prepare(
            'INSERT INTO payees (scope_id, kind, fingerprint, id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
          )
          .run(scopeId, entry.kind, entry.fingerprint, entry.id, entry.createdAt);
        if (added.changes > 0) return undefined;
        const id = scalar(
          db
            .prepare('SELECT id FROM payees WHERE scope_id = ? AND kind = ? AND fingerprint = ?')
            .get(scopeId, entry.kind, entry.fingerprint),
        ) as string;
        return { ...entry, id };
      }
      case 'history': {
        const added = db
          .prepare(
            'INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
          )
          .run(
            scopeId,
            entry.payee,
            JSON.stringify(entry.history),
            entry.history.accounts[0]?.paidAt ?? new Date(systemClock.now()).toISOString(),
          );
        if (added.changes > 0) return undefined;
        const held = scalar(
          db
            .prepare('SELECT history FROM payee_history WHERE scope_id = ? AND payee = ?')
            .get(scopeId, entry.payee),
        ) as string;
        return { ...entry, history: JSON.parse(held) };
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Writes queued for this tick still commit.
    if (this.queue.length > 0) this.commit();
    this.closed = true;
    this.db.close();
  }
}

interface ScopeRow {
  id: number;
  service: string;
  integrator_id: string;
  secret: Uint8Array;
  login: string | null;
  created_at: string;
  last_used_at: string;
}

function scopeInfo(row: ScopeRow): ScopeInfo {
  return {
    id: row.id,
    service: row.service,
    integratorId: row.integrator_id,
    ...(row.login ? { login: row.login } : {}),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

type PayoutCells = readonly (string | null)[];

const PAYOUT_COLUMNS = PAYOUT_FIELDS.map(([column]) => column).join(', ');

/**
 * Field and record separators of the packed look-up (ASCII unit and record separator). A value
 * that holds one of them gives the text more records, or a record more fields, than the query
 * counted, and that chunk is read again as JSON: the packing is slow for strange text, never wrong.
 */
const UNIT = '\x1f';
const RECORD = '\x1e';

/**
 * The records of one chunk of references as one text: each record's fields joined by UNIT (NULL
 * as '', which is how format's %s writes it), records joined by RECORD. V8 splits that in a
 * fraction of the time it takes to parse the same records as JSON, which was most of the time
 * of `validate` against a register that knows every row (the register case of `npm run bench -- sheet`).
 */
const PACKED_RECORDS = `group_concat(format(${PAYOUT_FIELDS.map(() => "'%s'").join(' || char(31) || ')},
  ${PAYOUT_COLUMNS}), char(30))`;

interface RunRow {
  id: string;
  sheet: string;
  digest: string;
  host: string;
  pid: number;
  machine: string | null;
  process_start: string | null;
  started_at: string;
  heartbeat_at: string;
  lease_expires_at: string;
  lease_boot: string | null;
  lease_uptime_ms: number | null;
  finished_at: string | null;
  rows: number | null;
  statuses: string | null;
  exit_code: number | null;
}

/** How many references one lookup query takes. */
const LOOKUP_CHUNK = 500;

/** The queries a scope reads payouts with (payouts as PAYOUT_FIELDS, runs as named rows). */
const READS = {
  // One text for all the rows: libsql makes a JavaScript value per column of a row, which
  // costs more than SQLite writing the text and V8 splitting it.
  lookup: `SELECT count(*), ${PACKED_RECORDS} FROM payouts
    WHERE scope_id = ? AND reference IN (SELECT value FROM json_each(?))`,
  // The same records as JSON, for a chunk whose packed text did not split cleanly.
  lookupJson: `SELECT json_group_array(json_array(${PAYOUT_COLUMNS})) FROM payouts
    WHERE scope_id = ? AND reference IN (SELECT value FROM json_each(?))`,
  recent: `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE scope_id = ? ORDER BY updated_at DESC LIMIT ?`,
  run: 'SELECT * FROM runs WHERE id = ?',
} as const;

class SqliteScope implements ScopeStore {
  constructor(
    private readonly register: SqliteRegister,
    readonly scope: ScopeInfo,
    secret: Buffer,
  ) {
    this.fingerprints = new Fingerprints(secret);
  }

  private readonly statements = new Map<keyof typeof READS, Statement>();

  private get db(): Db {
    return this.register.db;
  }

  private readonly fingerprints: Fingerprints;

  fingerprint(canonical: string): string {
    return this.fingerprints.of(canonical);
  }

  async lookup(references: readonly string[]): Promise<Map<string, PayoutRecord>> {
    return this.lookupNow(references);
  }

  /** The records of these references, a chunk at a time by the packed query (PACKED_RECORDS). */
  private lookupNow(references: readonly string[]): Map<string, PayoutRecord> {
    const found = new Map<string, PayoutRecord>();
    if (references.length === 0) return found;
    return this.register.read(() => {
      const runs = this.runReader();
      for (let i = 0; i < references.length; i += LOOKUP_CHUNK) {
        const chunk = JSON.stringify(references.slice(i, i + LOOKUP_CHUNK));
        const [count, packed] = this.statement('lookup').get(this.scope.id, chunk) as [number, string | null];
        if (packed === null || unpack(packed, count, runs, found)) continue;
        // A value held a separator: this chunk again, as JSON.
        const [json] = this.statement('lookupJson').get(this.scope.id, chunk) as [string];
        for (const cells of JSON.parse(json) as PayoutCells[]) {
          const record = payoutOf(cells, runs);
          found.set(record.reference, record);
        }
      }
      return found;
    });
  }

  async recentPayouts(limit: number): Promise<PayoutRecord[]> {
    return this.register.read(() => {
      const runs = this.runReader();
      return (this.statement('recent').all(this.scope.id, limit) as PayoutCells[]).map((cells) =>
        payoutOf(cells, runs),
      );
    });
  }

  /**
   * Runs read by a read-only store (`validate`, `status`), kept as first read: a validate of a
   * million rows takes seconds, well inside the lease after which a silent run is dead.
   */
  private readonly runsSeen = new Map<string, RunRecord | undefined>();

  /**
   * The runs payouts name, each read once per look-up (a sheet's payouts share a few runs), or
   * once for all the look-ups of a read-only store.
   */
  private runReader(): (id: string) => RunRecord | undefined {
    const seen = this.register.readonly ? this.runsSeen : new Map<string, RunRecord | undefined>();
    return (id) => {
      if (seen.has(id)) return seen.get(id);
      const row = this.statement('run').get(id) as RunRow | undefined;
      const run = row === undefined ? undefined : this.register.runOf(row);
      seen.set(id, run);
      return run;
    };
  }

  /** The scope's read statements, prepared once: a look-up of a big sheet runs them thousands of times. */
  private statement(name: keyof typeof READS): Statement {
    let statement = this.statements.get(name);
    if (statement === undefined) {
      statement = this.db.prepare(READS[name]);
      if (name !== 'run') statement.raw(true);
      this.statements.set(name, statement);
    }
    return statement;
  }

  async payees(
    kind: 'beneficiary' | 'recipient',
    fingerprints: readonly string[],
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const query = this.db.prepare(
      'SELECT fingerprint, id FROM payees WHERE scope_id = ? AND kind = ? AND fingerprint IN (SELECT value FROM json_each(?))',
    );
    this.register.read(() => {
      for (let i = 0; i < fingerprints.length; i += LOOKUP_CHUNK) {
        const chunk = JSON.stringify(fingerprints.slice(i, i + LOOKUP_CHUNK));
        for (const row of query.all(this.scope.id, kind, chunk) as { fingerprint: string; id: string }[])
          found.set(row.fingerprint, row.id);
      }
    });
    return found;
  }

  rememberPayee(kind: 'beneficiary' | 'recipient', fingerprint: string, id: string): Promise<void> {
    return this.register.write(() => {
      this.db
        .prepare(
          `INSERT INTO payees (scope_id, kind, fingerprint, id, created_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT DO UPDATE SET id = excluded.id`,
        )
        .run(this.scope.id, kind, fingerprint, id, this.register.now());
    });
  }

  async payeeHistory(payees: readonly string[]): Promise<Map<string, PayeeHistory>> {
    const found = new Map<string, PayeeHistory>();
    if (payees.length === 0) return found;
    const query = this.db.prepare(
      'SELECT payee, history FROM payee_history WHERE scope_id = ? AND payee IN (SELECT value FROM json_each(?))',
    );
    this.register.read(() => {
      for (let i = 0; i < payees.length; i += LOOKUP_CHUNK) {
        const chunk = JSON.stringify(payees.slice(i, i + LOOKUP_CHUNK));
        for (const row of query.all(this.scope.id, chunk) as { payee: string; history: string }[])
          found.set(row.payee, JSON.parse(row.history));
      }
    });
    return found;
  }

  async hasPayeeHistory(): Promise<boolean> {
    return this.register.read(
      () =>
        this.db.prepare('SELECT 1 FROM payee_history WHERE scope_id = ? LIMIT 1').get(this.scope.id) !==
        undefined,
    );
  }

  recordPayment(payee: string, payment: PayeePayment, batch: string): Promise<void> {
    return this.register.write(() => {
      const held = this.db
        .prepare('SELECT history FROM payee_history WHERE scope_id = ? AND payee = ?')
        .get(this.scope.id, payee) as { history: string } | undefined;
      const history = withPayment(held && JSON.parse(held.history), payment, batch);
      this.db
        .prepare(
          `INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT DO UPDATE SET history = excluded.history, updated_at = excluded.updated_at`,
        )
        .run(this.scope.id, payee, JSON.stringify(history), this.register.now());
    });
  }

  beginRun(run: NewRun): Promise<void> {
    return this.register.write(() => {
      const lease = this.register.lease();
      this.db
        .prepare(
          `INSERT INTO runs (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at,
             heartbeat_at, lease_expires_at, lease_boot, lease_uptime_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          run.id,
          this.scope.id,
          run.sheet,
          run.digest,
          run.host,
          run.pid,
          run.machine ?? null,
          run.processStart ?? null,
          run.startedAt,
          this.register.now(),
          lease.expiresAt,
          lease.boot,
          lease.uptimeMs,
        );
    });
  }

  heartbeat(runId: string): Promise<{ liveRuns: number }> {
    return this.register.write(() => {
      const lease = this.register.lease();
      this.db
        .prepare(
          `UPDATE runs SET heartbeat_at = ?, lease_expires_at = ?, lease_boot = ?, lease_uptime_ms = ?
           WHERE id = ? AND finished_at IS NULL`,
        )
        .run(this.register.now(), lease.expiresAt, lease.boot, lease.uptimeMs, runId);
      const open = this.db
        .prepare('SELECT * FROM runs WHERE scope_id = ? AND finished_at IS NULL')
        .all(this.scope.id) as RunRow[];
      return { liveRuns: Math.max(1, open.filter((row) => !this.register.leaseExpired(row)).length) };
    });
  }

  finishRun(runId: string, outcome: Pick<RunRecord, 'rows' | 'statuses' | 'exitCode'>): Promise<void> {
    return this.register.write(() => {
      this.db
        .prepare('UPDATE runs SET finished_at = ?, rows = ?, statuses = ?, exit_code = ? WHERE id = ?')
        .run(
          this.register.now(),
          outcome.rows ?? null,
          outcome.statuses ? JSON.stringify(outcome.statuses) : null,
          outcome.exitCode ?? null,
          runId,
        );
    });
  }

  async runs(limit: number): Promise<RunRecord[]> {
    return this.register.read(() =>
      (
        this.db
          .prepare('SELECT * FROM runs WHERE scope_id = ? ORDER BY started_at DESC LIMIT ?')
          .all(this.scope.id, limit) as RunRow[]
      ).map((row) => this.register.runOf(row)),
    );
  }

  claim(
    runId: string,
    requests: readonly ClaimRequest[],
    decide: (request: ClaimRequest, record: PayoutRecord | undefined) => ClaimDecision,
  ): Promise<Map<string, PayoutRecord | undefined>> {
    return this.register.write(() => {
      // Read and written in one IMMEDIATE transaction: no other run can claim in between.
      const records = this.lookupNow(requests.map((r) => r.reference));
      const sheet = scalar(this.db.prepare('SELECT sheet FROM runs WHERE id = ?').get(runId)) as string;
      const now = this.register.now();
      const upsert = this.db.prepare(
        `INSERT INTO payouts (scope_id, reference, amount, currency, rail, payee, payee_hint, state,
           idempotency_key, run_id, sheet, updated_at, simulation_id, transaction_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (scope_id, reference) DO UPDATE SET amount = excluded.amount,
           currency = excluded.currency, rail = excluded.rail, payee = excluded.payee,
           payee_hint = excluded.payee_hint, state = excluded.state,
           idempotency_key = excluded.idempotency_key, run_id = excluded.run_id,
           sheet = excluded.sheet, error = NULL, updated_at = excluded.updated_at,
           transaction_id = excluded.transaction_id, simulation_id = excluded.simulation_id`,
      );
      const markUnknown = this.db.prepare(
        `UPDATE payouts SET state = 'unknown', error = ?, updated_at = ? WHERE scope_id = ? AND reference = ?`,
      );
      const outcome = new Map<string, PayoutRecord | undefined>();
      for (const request of requests) {
        const record = records.get(request.reference);
        const decision = decide(request, record);
        if (decision === 'claim') {
          const d: PayoutDetails = request.details;
          const claimed = claimedState(record);
          upsert.run(
            this.scope.id,
            request.reference,
            d.amount,
            d.currency,
            d.rail,
            d.payee,
            d.payeeHint,
            claimed.state,
            request.idempotencyKey,
            runId,
            sheet,
            now,
            claimed.simulationId ?? null,
            claimed.transactionId ?? null,
          );
        } else if (decision === 'mark-unknown' && record) {
          const why = abandonedSendReason(record.sheet);
          markUnknown.run(why, now, this.scope.id, request.reference);
          record.state = 'unknown';
          record.error = why;
        }
        outcome.set(request.reference, record);
      }
      return outcome;
    });
  }

  update(runId: string, reference: string, change: PayoutChange): Promise<void> {
    return this.register.write(() => {
      const sets: string[] = ['updated_at = ?'];
      const now = this.register.now();
      const values: unknown[] = [now];
      for (const [key, name] of Object.entries(CHANGE_FIELDS) as [keyof PayoutChange, string][]) {
        const value = change[key];
        if (value === undefined) continue;
        sets.push(`${name} = ?`);
        values.push(key === 'error' && typeof value === 'string' ? scrub(value) : value);
      }
      if (change.transactionId !== undefined) sets.push(`paid_at = coalesce(paid_at, '${now}')`);
      const holder = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(runId) as RunRow | undefined;
      const leaseHeld =
        holder !== undefined && holder.finished_at === null && !this.register.leaseExpired(holder);
      const set = `UPDATE payouts SET ${sets.join(', ')} WHERE scope_id = ? AND reference = ?`;
      if (leaseHeld || !needsLease(change)) {
        const result = this.db
          .prepare(`${set} AND run_id = ?`)
          .run(...values, this.scope.id, reference, runId);
        if (result.changes > 0) return;
      }
      const current = this.lookupNow([reference]).get(reference);
      if (current !== undefined && answerMayLand(change, current)) {
        this.db.prepare(set).run(...values, this.scope.id, reference);
        return;
      }
      throw claimLost(reference, runId, current);
    });
  }

  settle(
    reference: string,
    transactionId: string,
    state: 'completed' | 'failed',
    error?: string,
  ): Promise<void> {
    return this.register.write(() => {
      this.db
        .prepare(
          `UPDATE payouts SET state = ?, error = ?, updated_at = ?
           WHERE scope_id = ? AND reference = ? AND transaction_id = ?
             AND state IN (${SETTLEABLE.map((state) => `'${state}'`).join(', ')})`,
        )
        .run(
          state,
          error === undefined ? null : scrub(error),
          this.register.now(),
          this.scope.id,
          reference,
          transactionId,
        );
    });
  }

  async payoutsIn(query: {
    states: readonly PayoutState[];
    since?: string;
    after?: string;
    limit: number;
  }): Promise<PayoutRecord[]> {
    const page = this.db.prepare(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE scope_id = ? AND state IN (SELECT value FROM json_each(?))
         AND reference > ? AND COALESCE(paid_at, updated_at) >= ? ORDER BY reference LIMIT ?`,
    );
    page.raw(true);
    return this.register.read(() => {
      const runs = this.runReader();
      const cells = page.all(
        this.scope.id,
        JSON.stringify(query.states),
        query.after ?? '',
        query.since ?? '',
        query.limit,
      ) as PayoutCells[];
      return cells.map((c) => payoutOf(c, runs));
    });
  }

  resolveUnknown(reference: string, found: UnknownResolved): Promise<boolean> {
    return this.register.write(() => {
      const now = this.register.now();
      const changed =
        'absent' in found
          ? this.db
              .prepare(
                `UPDATE payouts SET state = 'refused', error = ?, updated_at = ?
                 WHERE scope_id = ? AND reference = ? AND state = 'unknown'`,
              )
              .run(scrub(found.reason), now, this.scope.id, reference)
          : this.db
              .prepare(
                `UPDATE payouts SET state = ?, transaction_id = ?, error = ?, paid_at = COALESCE(paid_at, ?), updated_at = ?
                 WHERE scope_id = ? AND reference = ? AND state = 'unknown'`,
              )
              .run(
                found.state,
                found.transactionId,
                found.error === undefined ? null : scrub(found.error),
                now,
                now,
                this.scope.id,
                reference,
              );
      return changed.changes > 0;
    });
  }

  release(runId: string): Promise<void> {
    return this.register.write(() => {
      // A claim that sent nothing is simply forgotten; one that reached a refusal keeps it.
      this.db
        .prepare(`DELETE FROM payouts WHERE scope_id = ? AND run_id = ? AND state = 'claimed'`)
        .run(this.scope.id, runId);
    });
  }

  async settledEvents(transactionIds: readonly string[]): Promise<Map<string, EventRecord>> {
    const found = new Map<string, EventRecord>();
    if (transactionIds.length === 0) return found;
    const query = this.db.prepare(
      `SELECT * FROM events WHERE integrator_id = ? AND resource_id IN (SELECT value FROM json_each(?))
       AND operation IN ('TRANSACTION_COMPLETED', 'TRANSACTION_FAILED') ORDER BY occurred_at`,
    );
    this.register.read(() => {
      for (let i = 0; i < transactionIds.length; i += LOOKUP_CHUNK) {
        const chunk = JSON.stringify(transactionIds.slice(i, i + LOOKUP_CHUNK));
        for (const row of query.all(this.scope.integratorId, chunk) as EventRow[]) {
          // Ordered by occurrence: the last settling event wins (reconcile.ts).
          found.set(row.resource_id, eventOf(row));
        }
      }
    });
    return found;
  }
}

/**
 * Adds the `count` records of a packed look-up (PACKED_RECORDS) to `found`; false, with `found`
 * as it was, when a value held a separator. Then the text has more records than `count`, or a
 * record more fields than PAYOUT_FIELDS: exactly `count` records of exactly that many fields
 * hold no separator but those SQLite put between them.
 */
function unpack(
  packed: string,
  count: number,
  runOf: (id: string) => RunRecord | undefined,
  found: Map<string, PayoutRecord>,
): boolean {
  const records = packed.split(RECORD);
  if (records.length !== count) return false;
  const read: PayoutRecord[] = [];
  for (const record of records) {
    const cells: (string | null)[] = record.split(UNIT);
    if (cells.length !== PAYOUT_FIELDS.length) return false;
    for (let i = 0; i < cells.length; i++) if (cells[i] === '' && PAYOUT_FIELDS[i]![1]) cells[i] = null;
    read.push(payoutOf(cells, runOf));
  }
  for (const record of read) found.set(record.reference, record);
  return true;
}

/** The record of a row of PAYOUT_FIELDS. */
function payoutOf(cells: PayoutCells, runOf: (id: string) => RunRecord | undefined): PayoutRecord {
  const text = (i: number) => cells[i] as string;
  const runId = text(13);
  const record: PayoutRecord = {
    reference: text(0),
    details: { amount: text(1), currency: text(2), rail: text(3), payee: text(4), payeeHint: text(5) },
    state: text(6) as PayoutState,
    idempotencyKey: text(7),
    runId,
    sheet: text(14),
    updatedAt: text(16),
  };
  if (cells[8] != null) record.beneficiaryId = cells[8];
  if (cells[9] != null) record.recipientId = cells[9];
  if (cells[10] != null) record.simulationId = cells[10];
  if (cells[11] != null) record.transactionId = cells[11];
  if (cells[12] != null) record.error = cells[12];
  if (cells[15] != null) record.paidAt = cells[15];
  const run = runOf(runId);
  if (run !== undefined) record.run = run;
  return record;
}

function runOf(row: RunRow, leaseExpired: boolean): RunRecord {
  const run: RunRecord = {
    id: row.id,
    sheet: row.sheet,
    digest: row.digest,
    host: row.host,
    pid: row.pid,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    leaseExpiresAt: row.lease_expires_at,
    leaseExpired,
  };
  if (row.machine !== null) run.machine = row.machine;
  if (row.process_start !== null) run.processStart = row.process_start;
  if (row.finished_at !== null) run.finishedAt = row.finished_at;
  if (row.rows !== null) run.rows = row.rows;
  if (row.statuses !== null) run.statuses = JSON.parse(row.statuses) as Record<string, number>;
  if (row.exit_code !== null) run.exitCode = row.exit_code;
  return run;
}

/**
 * An existing register that cannot be read where it lies because nothing may be written beside
 * it: a folder read-only for this user (SQLITE_READONLY_DIRECTORY, 1544, which libsql reports
 * by its number) or a read-only file system (SQLITE_CANTOPEN).
 */
function isReadonlyDirectory(error: unknown): boolean {
  const code = errnoOf(error instanceof RegisterError ? error.cause : error) ?? '';
  return ['SQLITE_READONLY_DIRECTORY', 'UNKNOWN_SQLITE_ERROR_1544', 'SQLITE_CANTOPEN'].includes(code);
}

function isSqliteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE');
}
