/**
 * The register in a PostgreSQL database, shared by many machines (PRODUCT.md "Many machines
 * share one register through PostgreSQL"), through node-postgres (`pg`).
 *
 * - Its tables live in their own schema, `payouts`, versioned in `payouts.schema_version` and
 *   migrated under an advisory lock, so two containers starting together do not race; a newer
 *   schema is refused.
 * - Durability: a write resolves once its transaction committed; a server whose
 *   `synchronous_commit` is `off` or `local` is refused, since a commit it acknowledges may be
 *   lost (a transaction's intent must be durable before its request leaves). The writes of one
 *   tick share one transaction, as on SQLite.
 * - Time is the database's: leases end at `now() + lease`, and "expired" is decided by `now()`.
 * - Claims: one transaction per batch of references, in sorted order, under a transaction-level
 *   advisory lock of the scope (the analogue of SQLite's BEGIN IMMEDIATE), retried on a deadlock
 *   or serialization failure.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { PayoutsError, RegisterError } from '../errors.js';
import { scrub } from '../redact.js';
import { isLoopbackHost } from '../webhooks/callback-url.js';
import { Fingerprints } from './fingerprints.js';
import type { ScopeIdentity } from './identity.js';
import { LEASE } from './lease.js';
import { withoutPassword } from './location.js';
import { type EventRow, eventOf, PAYOUT_FIELDS, payoutCells } from './records.js';
import {
  abandonedSendReason,
  CHANGE_FIELDS,
  claimedState,
  claimLost,
  IN_DOUBT,
  isAnswer,
  needsLease,
  SETTLEABLE,
  withPayment,
} from './rules.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from './schema.js';
import type {
  ClaimDecision,
  ClaimRequest,
  EventRecord,
  NewRun,
  OpenOptions,
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

type Client = pg.PoolClient;

/** Defaults in one object. */
export const POSTGRES_DEFAULTS = {
  /** Connections per process: a run's writes are grouped per tick, its reads are few. */
  poolSize: 4,
  connectTimeoutMs: 10_000,
  /** How long a statement may wait for a lock (another run's claim) before it is reported. */
  lockTimeoutMs: 15_000,
  /** Attempts of a claim that met a deadlock or serialization failure. */
  claimAttempts: 5,
} as const;

/** The advisory lock of the schema's migration: one number, the same in every payouts. */
const MIGRATION_LOCK = 0x50594f54;

/** SQLSTATEs after which a transaction is simply tried again. */
const RETRYABLE = new Set(['40P01', '40001']);

export interface PostgresOpenOptions extends OpenOptions {
  /** With `readonly`: a database with no payouts schema yet gives undefined instead of an error. */
  missingOk?: boolean;
}

/** Opens the register in the database at `url`. Throws RegisterError, never a driver error. */
/** Reads and replaces of one payee's history before giving up (other runs keep changing it). */
const HISTORY_ATTEMPTS = 100;

export async function openPostgresRegister(
  url: string,
  options: PostgresOpenOptions & { missingOk: true },
): Promise<Register | undefined>;
export async function openPostgresRegister(url: string, options?: PostgresOpenOptions): Promise<Register>;
export async function openPostgresRegister(
  url: string,
  options: PostgresOpenOptions = {},
): Promise<Register | undefined> {
  const shown = withoutPassword(url);
  const readonly = options.readonly ?? false;
  const config = connectionConfig(url);
  const warning = plainTextWarning(url, process.env);
  if (warning !== undefined) options.warn?.(warning);
  const pool = new pg.Pool({
    ...config,
    max: POSTGRES_DEFAULTS.poolSize,
    connectionTimeoutMillis: POSTGRES_DEFAULTS.connectTimeoutMs,
    application_name: 'payouts',
    options: `-c lock_timeout=${POSTGRES_DEFAULTS.lockTimeoutMs}${readonly ? ' -c default_transaction_read_only=on' : ''}`,
  });
  // An idle connection that the server drops must not crash the process.
  pool.on('error', () => {});
  const register = new PostgresRegister(shown, pool, readonly, options.leaseMs ?? LEASE.leaseMs);
  try {
    const ready = readonly
      ? await register.checkReadable(options.missingOk ?? false)
      : await register.prepare();
    if (!ready) {
      await pool.end();
      return undefined;
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw register.failure('cannot be opened', error);
  }
  return register;
}

/** pg's connection settings: the URL's (libpq parameters such as sslmode included), or only the PG* environment for a bare `postgres://`. */
function connectionConfig(url: string): pg.PoolConfig {
  const rest = url.replace(/^postgres(?:ql)?:\/\//i, '');
  return rest === '' ? {} : { connectionString: url };
}

/**
 * Why the connection to the database could be read on the way: a host off this machine reached
 * without TLS (sslmode absent, disable, allow or prefer, which pg reads as no TLS). The URL's
 * own host and sslmode count, else the PG* environment.
 */
export function plainTextWarning(url: string, env: NodeJS.ProcessEnv): string | undefined {
  let host = env['PGHOST'] ?? 'localhost';
  let mode = env['PGSSLMODE'];
  if (url.replace(/^postgres(?:ql)?:\/\//i, '') !== '') {
    try {
      const parsed = new URL(url.replace(/^postgres(?:ql)?:/i, 'http:'));
      host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || host);
      mode =
        parsed.searchParams.get('sslmode') ?? (parsed.searchParams.get('ssl') === 'true' ? 'require' : mode);
    } catch {
      // pg refuses an unreadable URL itself, in its own words.
      return undefined;
    }
  }
  host = host.replace(/^\[|\]$/g, '');
  const tls = mode !== undefined && !['disable', 'allow', 'prefer'].includes(mode);
  if (tls || isLoopback(host)) return undefined;
  return `the register's database at ${host} is reached without TLS: its traffic (payouts, and the password) can be read on the way: add sslmode=verify-full to the URL`;
}

/** Loopback addresses and Unix sockets: no network to read the traffic on. */
export function isLoopback(host: string): boolean {
  return host.startsWith('/') || isLoopbackHost(host);
}

interface QueuedWrite {
  apply: (client: Client) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class PostgresRegister implements Register {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  private closed = false;
  private committing: Promise<void> = Promise.resolve();
  private readonly scopeStores = new Map<number, PostgresScope>();

  constructor(
    readonly location: string,
    readonly pool: pg.Pool,
    readonly readonly: boolean,
    readonly leaseMs: number,
  ) {}

  /** Creates or migrates the schema (under the migration lock) and checks durability. */
  async prepare(): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      const sync = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!
        .synchronous_commit;
      if (sync === 'off' || sync === 'local') {
        throw new RegisterError(
          `the register ${this.location} is on a server whose synchronous_commit is '${sync}': a commit it acknowledges can be lost in a crash, and payouts must know what it sent: set synchronous_commit to on (or remote_apply) for this database or its user`,
          { path: this.location },
        );
      }
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        const version = await schemaVersion(client);
        this.refuseNewer(version);
        for (let v = version; v < PG_SCHEMA_VERSION; v += 1) {
          await client.query('BEGIN');
          try {
            await client.query(PG_MIGRATIONS[v]!);
            await client.query('UPDATE payouts.schema_version SET version = $1', [v + 1]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
      return true;
    } finally {
      client.release();
    }
  }

  /** Whether there is a register to read; refuses one newer than this payouts. */
  async checkReadable(missingOk: boolean): Promise<boolean> {
    const version = await schemaVersion(await this.pool.query.bind(this.pool));
    if (version === 0) {
      if (missingOk) return false;
      throw new RegisterError(`there is no payouts register in ${this.location} yet`, {
        path: this.location,
      });
    }
    this.refuseNewer(version);
    return true;
  }

  private refuseNewer(version: number): void {
    if (version > PG_SCHEMA_VERSION) {
      throw new RegisterError(
        `the register ${this.location} was written by a newer payouts (schema version ${version}, this payouts knows ${PG_SCHEMA_VERSION}): upgrade payouts to use it`,
        { path: this.location },
      );
    }
  }

  /** Runs a read, turning the driver's errors into RegisterError. */
  async read<T>(fn: (query: Queryable) => Promise<T>): Promise<T> {
    try {
      return await fn((text, values) => this.pool.query(prepared(text, values)));
    } catch (error) {
      throw this.failure('cannot be read', error);
    }
  }

  /**
   * Queues a write; the writes of one tick commit in one transaction (group commit), each in a
   * savepoint so that one that fails alone does not undo the others. Resolves once committed.
   */
  write<T>(apply: (query: Queryable) => Promise<T>, { standalone = false } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`register ${this.location} is closed`));
    if (this.readonly) return Promise.reject(new Error(`register ${this.location} was opened read-only`));
    if (standalone) return this.direct(apply);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        apply: (client) => apply((text, values) => client.query(prepared(text, values))),
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.committing = this.committing.then(() => this.commit());
        });
      }
    });
  }

  /** Writes still under way outside the queue, which close() waits for. */
  private readonly running = new Set<Promise<unknown>>();

  /**
   * A write each of whose statements is atomic on its own (a fenced UPDATE, an upsert) runs at
   * once, each statement committed by itself: no BEGIN, COMMIT or savepoint around it. On this
   * store a round trip is what a write costs, and the server groups concurrent commits itself.
   */
  private direct<T>(apply: (query: Queryable) => Promise<T>): Promise<T> {
    const run = (async () => {
      try {
        return await apply((text, values) => this.pool.query(prepared(text, values)));
      } catch (error) {
        throw isDriverError(error) ? this.failure('cannot be written', error) : error;
      }
    })();
    this.running.add(run);
    const forget = () => this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  private async commit(): Promise<void> {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let client: Client | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      try {
        for (const write of group) {
          await client.query('SAVEPOINT w');
          try {
            results.push({ ok: true, value: await write.apply(client) });
            await client.query('RELEASE SAVEPOINT w');
          } catch (error) {
            await client.query('ROLLBACK TO SAVEPOINT w');
            await client.query('RELEASE SAVEPOINT w');
            results.push({ ok: false, error });
          }
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    } catch (error) {
      const failure = this.failure('cannot be written', error);
      for (const write of group) write.reject(failure);
      return;
    } finally {
      client?.release();
    }
    for (const [i, write] of group.entries()) this.settle(write, results[i]!);
  }

  /** Resolves or rejects a queued write with its result, a driver's error in our words. */
  private settle(
    write: QueuedWrite,
    result: { ok: true; value: unknown } | { ok: false; error: unknown },
  ): void {
    if (result.ok) write.resolve(result.value);
    else
      write.reject(
        isDriverError(result.error) ? this.failure('cannot be written', result.error) : result.error,
      );
  }

  /**
   * Runs `fn` in a transaction of its own under the scope's advisory lock, tried again on a
   * deadlock or serialization failure (claims).
   */
  async locked<T>(scopeId: number, fn: (query: Queryable) => Promise<T>): Promise<T> {
    if (this.readonly) throw new Error(`register ${this.location} was opened read-only`);
    for (let attempt = 1; ; attempt += 1) {
      let client: Client | undefined;
      try {
        client = await this.pool.connect();
        const c = client;
        await c.query('BEGIN');
        try {
          await c.query('SELECT pg_advisory_xact_lock($1, $2)', [MIGRATION_LOCK, scopeId]);
          const value = await fn((text, values) => c.query(prepared(text, values)));
          await c.query('COMMIT');
          return value;
        } catch (error) {
          await c.query('ROLLBACK').catch(() => {});
          throw error;
        }
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < POSTGRES_DEFAULTS.claimAttempts) continue;
        throw this.failure('cannot be written', error);
      } finally {
        client?.release();
      }
    }
  }

  failure(what: string, error: unknown): Error {
    if (error instanceof RegisterError) return error;
    if (!isDriverError(error)) return error as Error;
    return new RegisterError(`the register ${this.location} ${what}`, {
      path: this.location,
      cause: error,
      errno: driverCode(error),
    });
  }

  async openScope(identity: ScopeIdentity, login?: string): Promise<ScopeStore> {
    const row = await this.write(async (query) => {
      const result = await query(
        `INSERT INTO payouts.scopes (service, integrator_id, secret, login, created_at, last_used_at)
         VALUES ($1, $2, $3, $4, now(), now())
         ON CONFLICT (service, integrator_id) DO UPDATE SET last_used_at = now(),
           login = coalesce(excluded.login, scopes.login)
         RETURNING *`,
        [identity.service, identity.integratorId, randomBytes(32), login ?? null],
      );
      return result.rows[0] as ScopeRow;
    });
    return this.storeFor(row);
  }

  async scopes(): Promise<ScopeInfo[]> {
    return this.read(async (query) =>
      (
        (await query('SELECT * FROM payouts.scopes ORDER BY last_used_at DESC, id DESC')).rows as ScopeRow[]
      ).map(scopeInfo),
    );
  }

  async scopeStore(scope: ScopeInfo): Promise<ScopeStore> {
    const row = await this.read(
      async (query) =>
        (await query('SELECT * FROM payouts.scopes WHERE id = $1', [scope.id])).rows[0] as ScopeRow,
    );
    return this.storeFor(row);
  }

  private storeFor(row: ScopeRow): PostgresScope {
    let store = this.scopeStores.get(row.id);
    if (!store) {
      store = new PostgresScope(this, scopeInfo(row), Buffer.from(row.secret));
      this.scopeStores.set(row.id, store);
    }
    return store;
  }

  recordEvent(event: EventRecord, settles?: Settlement): Promise<boolean> {
    return this.write(async (query) => {
      if (settles) {
        await query(
          `UPDATE payouts.payouts SET state = $1, error = $2, updated_at = now() WHERE transaction_id = $3
           AND scope_id IN (SELECT id FROM payouts.scopes WHERE integrator_id = $4)
           AND state = ANY($5)`,
          [
            settles.state,
            settles.error === null ? null : scrub(settles.error),
            settles.transactionId,
            event.integratorId,
            SETTLEABLE,
          ],
        );
      }
      const inserted = await query(
        `INSERT INTO payouts.events (integrator_id, resource_id, operation, success, message, occurred_at, received_at, payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [
          event.integratorId,
          event.resourceId,
          event.operation,
          event.success,
          event.message === null ? null : scrub(event.message),
          event.occurredAt,
          event.receivedAt,
          scrub(event.payload),
        ],
      );
      return (inserted.rowCount ?? 0) > 0;
    });
  }

  async origin(key: ScopeKey): Promise<OriginDeclaration | undefined> {
    const row = await this.read(
      async (query) =>
        (
          await query('SELECT same_as FROM payouts.origins WHERE service = $1 AND integrator_id = $2', [
            key.service,
            key.integratorId,
          ])
        ).rows[0] as { same_as: string | null } | undefined,
    );
    return row === undefined
      ? undefined
      : row.same_as === null
        ? { separate: true }
        : { sameAs: row.same_as };
  }

  declareOrigin(key: ScopeKey, declaration: OriginDeclaration): Promise<void> {
    return this.write(
      async (query) => {
        await query(
          `INSERT INTO payouts.origins (service, integrator_id, same_as, declared_at) VALUES ($1, $2, $3, now())
           ON CONFLICT (service, integrator_id) DO UPDATE SET same_as = excluded.same_as, declared_at = now()`,
          [key.service, key.integratorId, 'sameAs' in declaration ? declaration.sameAs : null],
        );
      },
      { standalone: true },
    );
  }

  async *entries(): AsyncIterable<RegisterEntry> {
    const origins = await this.read(
      async (query) =>
        (await query('SELECT * FROM payouts.origins ORDER BY service, integrator_id')).rows as {
          service: string;
          integrator_id: string;
          same_as: string | null;
          declared_at: Date;
        }[],
    );
    for (const o of origins) {
      yield {
        type: 'origin',
        service: o.service,
        integratorId: o.integrator_id,
        declaration: o.same_as === null ? { separate: true } : { sameAs: o.same_as },
        declaredAt: iso(o.declared_at),
      };
    }
    const scopes = await this.read(
      async (query) => (await query('SELECT * FROM payouts.scopes ORDER BY id')).rows as ScopeRow[],
    );
    for (const row of scopes) {
      const key = { service: row.service, integratorId: row.integrator_id };
      yield {
        type: 'scope',
        ...key,
        secret: Buffer.from(row.secret).toString('base64'),
        ...(row.login ? { login: row.login } : {}),
        createdAt: iso(row.created_at),
        lastUsedAt: iso(row.last_used_at),
      };
      const runs = await this.read(
        async (query) =>
          (
            await query(
              'SELECT *, true AS lease_expired FROM payouts.runs WHERE scope_id = $1 ORDER BY started_at',
              [row.id],
            )
          ).rows as RunRow[],
      );
      for (const run of runs) {
        const { leaseExpired: _, ...stored } = runOf(run)!;
        yield { type: 'run', ...key, run: stored };
      }
      // A page at a time: a register can hold millions of payouts.
      for (let after = ''; ; ) {
        const page = await this.read(
          async (query) =>
            (
              await query(
                'SELECT * FROM payouts.payouts WHERE scope_id = $1 AND reference > $2 ORDER BY reference LIMIT 1000',
                [row.id, after],
              )
            ).rows as PayoutRow[],
        );
        if (page.length === 0) break;
        for (const payout of page) yield { type: 'payout', ...key, payout: payoutOf(payout) };
        after = page.at(-1)!.reference;
      }
      const payees = await this.read(
        async (query) =>
          (
            await query('SELECT * FROM payouts.payees WHERE scope_id = $1 ORDER BY kind, fingerprint', [
              row.id,
            ])
          ).rows as {
            kind: 'beneficiary' | 'recipient';
            fingerprint: string;
            id: string;
            created_at: Date;
          }[],
      );
      for (const p of payees) {
        yield {
          type: 'payee',
          ...key,
          kind: p.kind,
          fingerprint: p.fingerprint,
          id: p.id,
          createdAt: iso(p.created_at),
        };
      }
      const histories = await this.read(
        async (query) =>
          (
            await query(
              'SELECT payee, history FROM payouts.payee_history WHERE scope_id = $1 ORDER BY payee',
              [row.id],
            )
          ).rows as { payee: string; history: string }[],
      );
      for (const h of histories)
        yield { type: 'history', ...key, payee: h.payee, history: JSON.parse(h.history) };
    }
    const events = await this.read(
      async (query) => (await query('SELECT * FROM payouts.events ORDER BY occurred_at')).rows as EventRow[],
    );
    for (const event of events) yield { type: 'event', event: eventOf(event) };
  }

  putAll(entries: readonly RegisterEntry[]): Promise<(RegisterEntry | undefined)[]> {
    return this.write(async (query) => {
      const held: (RegisterEntry | undefined)[] = [];
      for (const entry of entries) held.push(await putEntry(query, entry));
      return held;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Writes queued for this tick still commit.
    if (this.queue.length > 0 && !this.scheduled) this.committing = this.committing.then(() => this.commit());
    await new Promise((resolve) => setImmediate(resolve));
    await this.committing;
    await Promise.allSettled([...this.running]);
    this.closed = true;
    await this.pool.end();
  }
}

type Queryable = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

const statementNames = new Map<string, string>();

/**
 * A statement with parameters as a named prepared statement: each connection parses and plans
 * it once, then only binds and executes it. A run sends the same few statements thousands of
 * times, and parsing them again was a fair part of the server's work. The name is the text's
 * hash, so one name never stands for two texts. A `SELECT *` stays unprepared: a newer payouts
 * adding a column while this run is connected would make its prepared plan fail.
 */
function prepared(text: string, values: unknown[] | undefined): pg.QueryConfig {
  if (values === undefined || values.length === 0 || text.includes('*')) return { text, values };
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `payouts_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/** Adds one entry unless its key is held; returns the entry held under it. */
async function putEntry(query: Queryable, entry: RegisterEntry): Promise<RegisterEntry | undefined> {
  if (entry.type === 'event') {
    const e = entry.event;
    const added = await query(
      `INSERT INTO payouts.events (integrator_id, resource_id, operation, success, message, occurred_at, received_at, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [
        e.integratorId,
        e.resourceId,
        e.operation,
        e.success,
        e.message,
        e.occurredAt,
        e.receivedAt,
        e.payload,
      ],
    );
    if ((added.rowCount ?? 0) > 0) return undefined;
    const row = (
      await query(
        'SELECT * FROM payouts.events WHERE integrator_id = $1 AND resource_id = $2 AND operation = $3',
        [e.integratorId, e.resourceId, e.operation],
      )
    ).rows[0] as EventRow;
    return { type: 'event', event: eventOf(row) };
  }
  const key = { service: entry.service, integratorId: entry.integratorId };
  if (entry.type === 'origin') {
    const sameAs = 'sameAs' in entry.declaration ? entry.declaration.sameAs : null;
    const added = await query(
      `INSERT INTO payouts.origins (service, integrator_id, same_as, declared_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING`,
      [entry.service, entry.integratorId, sameAs, entry.declaredAt],
    );
    if ((added.rowCount ?? 0) > 0) return undefined;
    const row = (
      await query(
        'SELECT same_as, declared_at FROM payouts.origins WHERE service = $1 AND integrator_id = $2',
        [entry.service, entry.integratorId],
      )
    ).rows[0] as { same_as: string | null; declared_at: Date };
    return {
      type: 'origin',
      ...key,
      declaration: row.same_as === null ? { separate: true } : { sameAs: row.same_as },
      declaredAt: iso(row.declared_at),
    };
  }
  if (entry.type === 'scope') {
    const added = await query(
      `INSERT INTO payouts.scopes (service, integrator_id, secret, login, created_at, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [
        entry.service,
        entry.integratorId,
        Buffer.from(entry.secret, 'base64'),
        entry.login ?? null,
        entry.createdAt,
        entry.lastUsedAt,
      ],
    );
    if ((added.rowCount ?? 0) > 0) return undefined;
    const row = (
      await query('SELECT * FROM payouts.scopes WHERE service = $1 AND integrator_id = $2', [
        entry.service,
        entry.integratorId,
      ])
    ).rows[0] as ScopeRow;
    return {
      type: 'scope',
      ...key,
      secret: Buffer.from(row.secret).toString('base64'),
      createdAt: iso(row.created_at),
      lastUsedAt: iso(row.last_used_at),
    };
  }
  const scopeId = (
    (
      await query('SELECT id FROM payouts.scopes WHERE service = $1 AND integrator_id = $2', [
        entry.service,
        entry.integratorId,
      ])
    ).rows[0] as { id: number }
  ).id;
  switch (entry.type) {
    case 'run': {
      const r = entry.run;
      const added = await query(
        `INSERT INTO payouts.runs (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at,
           heartbeat_at, lease_expires_at, finished_at, rows, statuses, exit_code)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING`,
        [
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
        ],
      );
      if ((added.rowCount ?? 0) > 0) return undefined;
      const row = (await query('SELECT *, true AS lease_expired FROM payouts.runs WHERE id = $1', [r.id]))
        .rows[0] as RunRow;
      const { leaseExpired: _, ...held } = runOf(row)!;
      return { type: 'run', ...key, run: held };
    }
    case 'payout': {
      const p = entry.payout;
      const added = await query(
        `INSERT INTO payouts.payouts (scope_id, ${PAYOUT_FIELDS.map(([column]) => column).join(', ')})
         VALUES ($1, ${PAYOUT_FIELDS.map((_, i) => `$${i + 2}`).join(', ')}) ON CONFLICT DO NOTHING`,
        [scopeId, ...payoutCells(p)],
      );
      if ((added.rowCount ?? 0) > 0) return undefined;
      const row = (
        await query('SELECT * FROM payouts.payouts WHERE scope_id = $1 AND reference = $2', [
          scopeId,
          p.reference,
        ])
      ).rows[0] as PayoutRow;
      return { type: 'payout', ...key, payout: payoutOf(row) };
    }
    case 'payee': {
      const added = await query(
        `INSERT INTO payouts.payees (scope_id, kind, fingerprint, id, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [scopeId, entry.kind, entry.fingerprint, entry.id, entry.createdAt],
      );
      if ((added.rowCount ?? 0) > 0) return undefined;
      const row = (
        await query('SELECT id FROM payouts.payees WHERE scope_id = $1 AND kind = $2 AND fingerprint = $3', [
          scopeId,
          entry.kind,
          entry.fingerprint,
        ])
      ).rows[0] as { id: string };
      return { ...entry, id: row.id };
    }
    case 'history': {
      const added = await query(
        `INSERT INTO payouts.payee_history (scope_id, payee, history, updated_at)
         VALUES ($1, $2, $3, COALESCE($4::timestamptz, now())) ON CONFLICT DO NOTHING`,
        [scopeId, entry.payee, JSON.stringify(entry.history), entry.history.accounts[0]?.paidAt ?? null],
      );
      if ((added.rowCount ?? 0) > 0) return undefined;
      const row = (
        await query('SELECT history FROM payouts.payee_history WHERE scope_id = $1 AND payee = $2', [
          scopeId,
          entry.payee,
        ])
      ).rows[0] as { history: string };
      return { ...entry, history: JSON.parse(row.history) };
    }
  }
}

async function schemaVersion(query: Queryable | Client): Promise<number> {
  const run: Queryable = typeof query === 'function' ? query : (text, values) => query.query(text, values);
  const exists = await run(`SELECT to_regclass('payouts.schema_version') IS NOT NULL AS present`);
  if (!exists.rows[0].present) return 0;
  const row = (await run('SELECT version FROM payouts.schema_version')).rows[0] as
    | { version: number }
    | undefined;
  return row?.version ?? 0;
}

interface ScopeRow {
  id: number;
  service: string;
  integrator_id: string;
  secret: Uint8Array;
  login: string | null;
  created_at: Date;
  last_used_at: Date;
}

function scopeInfo(row: ScopeRow): ScopeInfo {
  return {
    id: Number(row.id),
    service: row.service,
    integratorId: row.integrator_id,
    ...(row.login ? { login: row.login } : {}),
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : value;
}

/** A payout with its run's columns (prefixed `r_`) and whether the run's lease ran out, by now(). */
const PAYOUT_WITH_RUN = `p.*, r.id AS r_id, r.sheet AS r_sheet, r.digest AS r_digest, r.host AS r_host,
  r.pid AS r_pid, r.machine AS r_machine, r.process_start AS r_process_start, r.started_at AS r_started_at,
  r.heartbeat_at AS r_heartbeat_at, r.lease_expires_at AS r_lease_expires_at, r.finished_at AS r_finished_at,
  r.rows AS r_rows, r.statuses AS r_statuses, r.exit_code AS r_exit_code,
  r.lease_expires_at <= now() AS r_lease_expired
  FROM payouts.payouts p LEFT JOIN payouts.runs r ON r.id = p.run_id`;

/** How many references one look-up query takes. */
const LOOKUP_CHUNK = 1000;

class PostgresScope implements ScopeStore {
  private readonly fingerprints: Fingerprints;

  constructor(
    private readonly register: PostgresRegister,
    readonly scope: ScopeInfo,
    secret: Buffer,
  ) {
    this.fingerprints = new Fingerprints(secret);
  }

  fingerprint(canonical: string): string {
    return this.fingerprints.of(canonical);
  }

  async lookup(references: readonly string[]): Promise<Map<string, PayoutRecord>> {
    return this.register.read((query) => this.lookupWith(query, references));
  }

  private async lookupWith(
    query: Queryable,
    references: readonly string[],
  ): Promise<Map<string, PayoutRecord>> {
    const found = new Map<string, PayoutRecord>();
    for (let i = 0; i < references.length; i += LOOKUP_CHUNK) {
      const chunk = references.slice(i, i + LOOKUP_CHUNK);
      const result = await query(
        `SELECT ${PAYOUT_WITH_RUN} WHERE p.scope_id = $1 AND p.reference = ANY($2)`,
        [this.scope.id, chunk],
      );
      for (const row of result.rows as PayoutRow[]) found.set(row.reference, payoutOf(row));
    }
    return found;
  }

  async recentPayouts(limit: number): Promise<PayoutRecord[]> {
    return this.register.read(async (query) =>
      (
        (
          await query(`SELECT ${PAYOUT_WITH_RUN} WHERE p.scope_id = $1 ORDER BY p.updated_at DESC LIMIT $2`, [
            this.scope.id,
            limit,
          ])
        ).rows as PayoutRow[]
      ).map(payoutOf),
    );
  }

  async payees(
    kind: 'beneficiary' | 'recipient',
    fingerprints: readonly string[],
  ): Promise<Map<string, string>> {
    if (fingerprints.length === 0) return new Map();
    return this.register.read(async (query) => {
      const result = await query(
        'SELECT fingerprint, id FROM payouts.payees WHERE scope_id = $1 AND kind = $2 AND fingerprint = ANY($3)',
        [this.scope.id, kind, fingerprints],
      );
      return new Map(
        (result.rows as { fingerprint: string; id: string }[]).map((row) => [row.fingerprint, row.id]),
      );
    });
  }

  rememberPayee(kind: 'beneficiary' | 'recipient', fingerprint: string, id: string): Promise<void> {
    return this.register.write(
      async (query) => {
        await query(
          `INSERT INTO payouts.payees (scope_id, kind, fingerprint, id, created_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (scope_id, kind, fingerprint) DO UPDATE SET id = excluded.id`,
          [this.scope.id, kind, fingerprint, id],
        );
      },
      { standalone: true },
    );
  }

  async payeeHistory(payees: readonly string[]): Promise<Map<string, PayeeHistory>> {
    if (payees.length === 0) return new Map();
    return this.register.read(async (query) => {
      const result = await query(
        'SELECT payee, history FROM payouts.payee_history WHERE scope_id = $1 AND payee = ANY($2)',
        [this.scope.id, payees],
      );
      return new Map(
        (result.rows as { payee: string; history: string }[]).map((row) => [
          row.payee,
          JSON.parse(row.history),
        ]),
      );
    });
  }

  async hasPayeeHistory(): Promise<boolean> {
    return this.register.read(
      async (query) =>
        ((await query('SELECT 1 FROM payouts.payee_history WHERE scope_id = $1 LIMIT 1', [this.scope.id]))
          .rowCount ?? 0) > 0,
    );
  }

  recordPayment(payee: string, payment: PayeePayment, batch: string): Promise<void> {
    // Two runs paying one payee must both count. Without a transaction around it (a round trip
    // is what a write costs here): insert the first payment, or replace the history only if it
    // is still the one read (compare and set), reading again when another run got there first.
    // Each retry means another run's write landed, so the runs as a whole always progress.
    return this.register.write(
      async (query) => {
        const key = [this.scope.id, payee];
        const inserted = await query(
          `INSERT INTO payouts.payee_history (scope_id, payee, history, updated_at) VALUES ($1, $2, $3, now())
           ON CONFLICT DO NOTHING`,
          [...key, JSON.stringify(withPayment(undefined, payment, batch))],
        );
        if ((inserted.rowCount ?? 0) > 0) return;
        for (let attempt = 0; attempt < HISTORY_ATTEMPTS; attempt += 1) {
          const held = (
            await query('SELECT history FROM payouts.payee_history WHERE scope_id = $1 AND payee = $2', key)
          ).rows[0] as { history: string };
          const replaced = await query(
            `UPDATE payouts.payee_history SET history = $3, updated_at = now()
             WHERE scope_id = $1 AND payee = $2 AND history = $4`,
            [...key, JSON.stringify(withPayment(JSON.parse(held.history), payment, batch)), held.history],
          );
          if ((replaced.rowCount ?? 0) > 0) return;
        }
        throw new Error(
          `the payee history changed under ${HISTORY_ATTEMPTS} attempts in a row to record a payment`,
        );
      },
      { standalone: true },
    );
  }

  beginRun(run: NewRun): Promise<void> {
    return this.register.write(
      async (query) => {
        await query(
          `INSERT INTO payouts.runs (id, scope_id, sheet, digest, host, pid, machine, process_start, started_at,
           heartbeat_at, lease_expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now() + make_interval(secs => $10))`,
          [
            run.id,
            this.scope.id,
            run.sheet,
            run.digest,
            run.host,
            run.pid,
            run.machine ?? null,
            run.processStart ?? null,
            run.startedAt,
            this.register.leaseMs / 1000,
          ],
        );
      },
      { standalone: true },
    );
  }

  heartbeat(runId: string): Promise<{ liveRuns: number }> {
    return this.register.write(
      async (query) => {
        await query(
          `UPDATE payouts.runs SET heartbeat_at = now(), lease_expires_at = now() + make_interval(secs => $2)
         WHERE id = $1 AND finished_at IS NULL`,
          [runId, this.register.leaseMs / 1000],
        );
        const live = await query(
          `SELECT count(*)::int AS n FROM payouts.runs
         WHERE scope_id = $1 AND finished_at IS NULL AND lease_expires_at > now()`,
          [this.scope.id],
        );
        return { liveRuns: Math.max(1, (live.rows[0] as { n: number }).n) };
      },
      { standalone: true },
    );
  }

  finishRun(runId: string, outcome: Pick<RunRecord, 'rows' | 'statuses' | 'exitCode'>): Promise<void> {
    return this.register.write(
      async (query) => {
        await query(
          'UPDATE payouts.runs SET finished_at = now(), rows = $2, statuses = $3, exit_code = $4 WHERE id = $1',
          [
            runId,
            outcome.rows ?? null,
            outcome.statuses ? JSON.stringify(outcome.statuses) : null,
            outcome.exitCode ?? null,
          ],
        );
      },
      { standalone: true },
    );
  }

  async runs(limit: number): Promise<RunRecord[]> {
    return this.register.read(async (query) =>
      (
        (
          await query(
            `SELECT *, lease_expires_at <= now() AS lease_expired FROM payouts.runs
             WHERE scope_id = $1 ORDER BY started_at DESC LIMIT $2`,
            [this.scope.id, limit],
          )
        ).rows as RunRow[]
      ).map((row) => runOf(row)!),
    );
  }

  claim(
    runId: string,
    requests: readonly ClaimRequest[],
    decide: (request: ClaimRequest, record: PayoutRecord | undefined) => ClaimDecision,
  ): Promise<Map<string, PayoutRecord | undefined>> {
    // Sorted: two claims over the same references lock them in the same order.
    const sorted = [...requests].sort((a, b) =>
      a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0,
    );
    return this.register.locked(this.scope.id, async (query) => {
      const records = await this.lookupWith(
        query,
        sorted.map((r) => r.reference),
      );
      const outcome = new Map<string, PayoutRecord | undefined>();
      const claims: unknown[][] = [];
      const unknowns: [string, string][] = [];
      for (const request of sorted) {
        const record = records.get(request.reference);
        const decision = decide(request, record);
        if (decision === 'claim') {
          const d = request.details;
          const claimed = claimedState(record);
          claims.push([
            request.reference,
            d.amount,
            d.currency,
            d.rail,
            d.payee,
            d.payeeHint,
            claimed.state,
            request.idempotencyKey,
            claimed.simulationId ?? null,
            claimed.transactionId ?? null,
          ]);
        } else if (decision === 'mark-unknown' && record) {
          const why = abandonedSendReason(record.sheet);
          unknowns.push([request.reference, why]);
          record.state = 'unknown';
          record.error = why;
        }
        outcome.set(request.reference, record);
      }
      if (claims.length > 0) {
        const column = (i: number) => claims.map((c) => c[i]);
        await query(
          `INSERT INTO payouts.payouts (scope_id, reference, amount, currency, rail, payee, payee_hint, state,
             idempotency_key, simulation_id, transaction_id, run_id, sheet, updated_at)
           SELECT $1, c.*, $12, (SELECT sheet FROM payouts.runs WHERE id = $12), now()
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
             $9::text[], $10::text[], $11::text[]) AS c
           ON CONFLICT (scope_id, reference) DO UPDATE SET amount = excluded.amount,
             currency = excluded.currency, rail = excluded.rail, payee = excluded.payee,
             payee_hint = excluded.payee_hint, state = excluded.state,
             idempotency_key = excluded.idempotency_key, run_id = excluded.run_id, sheet = excluded.sheet,
             error = NULL, updated_at = excluded.updated_at, simulation_id = excluded.simulation_id,
             transaction_id = excluded.transaction_id`,
          [this.scope.id, ...Array.from({ length: 10 }, (_, i) => column(i)), runId],
        );
      }
      if (unknowns.length > 0) {
        await query(
          `UPDATE payouts.payouts p SET state = 'unknown', error = u.why, updated_at = now()
           FROM unnest($2::text[], $3::text[]) AS u (reference, why)
           WHERE p.scope_id = $1 AND p.reference = u.reference`,
          [this.scope.id, unknowns.map((u) => u[0]), unknowns.map((u) => u[1])],
        );
      }
      return outcome;
    });
  }

  update(runId: string, reference: string, change: PayoutChange): Promise<void> {
    return this.register.write(
      async (query) => {
        const sets: string[] = ['updated_at = now()'];
        const values: unknown[] = [this.scope.id, reference];
        for (const [key, name] of Object.entries(CHANGE_FIELDS) as [keyof PayoutChange, string][]) {
          const value = change[key];
          if (value === undefined) continue;
          values.push(key === 'error' && typeof value === 'string' ? scrub(value) : value);
          sets.push(`${name} = $${values.length}`);
        }
        if (change.transactionId !== undefined) sets.push('paid_at = coalesce(paid_at, now())');
        const set = `UPDATE payouts.payouts SET ${sets.join(', ')} WHERE scope_id = $1 AND reference = $2`;
        const lease = needsLease(change)
          ? ` AND EXISTS (SELECT 1 FROM payouts.runs WHERE id = $${values.length + 1}
             AND finished_at IS NULL AND lease_expires_at > now())`
          : '';
        const fenced = await query(`${set} AND run_id = $${values.length + 1}${lease}`, [...values, runId]);
        if ((fenced.rowCount ?? 0) > 0) return;
        // The answer to a request that left lands while the payout is still in doubt
        // (rules.ts answerMayLand), decided in the statement itself.
        if (isAnswer(change)) {
          const landed = await query(`${set} AND state = ANY($${values.length + 1})`, [...values, IN_DOUBT]);
          if ((landed.rowCount ?? 0) > 0) return;
        }
        throw claimLost(reference, runId, (await this.lookupWith(query, [reference])).get(reference));
      },
      { standalone: true },
    );
  }

  settle(
    reference: string,
    transactionId: string,
    state: 'completed' | 'failed',
    error?: string,
  ): Promise<void> {
    return this.register.write(
      async (query) => {
        await query(
          `UPDATE payouts.payouts SET state = $1, error = $2, updated_at = now()
         WHERE scope_id = $3 AND reference = $4 AND transaction_id = $5 AND state = ANY($6)`,
          [
            state,
            error === undefined ? null : scrub(error),
            this.scope.id,
            reference,
            transactionId,
            SETTLEABLE,
          ],
        );
      },
      { standalone: true },
    );
  }

  async payoutsIn(query: {
    states: readonly PayoutState[];
    since?: string;
    after?: string;
    limit: number;
  }): Promise<PayoutRecord[]> {
    return this.register.read(async (run) =>
      (
        (
          await run(
            `SELECT ${PAYOUT_WITH_RUN} WHERE p.scope_id = $1 AND p.state = ANY($2) AND p.reference > $3
               AND ($4::timestamptz IS NULL OR COALESCE(p.paid_at, p.updated_at) >= $4::timestamptz)
             ORDER BY p.reference LIMIT $5`,
            [this.scope.id, query.states, query.after ?? '', query.since ?? null, query.limit],
          )
        ).rows as PayoutRow[]
      ).map(payoutOf),
    );
  }

  resolveUnknown(reference: string, found: UnknownResolved): Promise<boolean> {
    return this.register.write(
      async (query) => {
        const changed =
          'absent' in found
            ? await query(
                `UPDATE payouts.payouts SET state = 'refused', error = $1, updated_at = now()
                 WHERE scope_id = $2 AND reference = $3 AND state = 'unknown'`,
                [scrub(found.reason), this.scope.id, reference],
              )
            : await query(
                `UPDATE payouts.payouts SET state = $1, transaction_id = $2, error = $3,
                   paid_at = COALESCE(paid_at, now()), updated_at = now()
                 WHERE scope_id = $4 AND reference = $5 AND state = 'unknown'`,
                [
                  found.state,
                  found.transactionId,
                  found.error === undefined ? null : scrub(found.error),
                  this.scope.id,
                  reference,
                ],
              );
        return (changed.rowCount ?? 0) > 0;
      },
      { standalone: true },
    );
  }

  release(runId: string): Promise<void> {
    return this.register.write(
      async (query) => {
        // A claim that sent nothing is simply forgotten; one that reached a refusal keeps it.
        await query(`DELETE FROM payouts.payouts WHERE scope_id = $1 AND run_id = $2 AND state = 'claimed'`, [
          this.scope.id,
          runId,
        ]);
      },
      { standalone: true },
    );
  }

  async settledEvents(transactionIds: readonly string[]): Promise<Map<string, EventRecord>> {
    const found = new Map<string, EventRecord>();
    if (transactionIds.length === 0) return found;
    await this.register.read(async (query) => {
      for (let i = 0; i < transactionIds.length; i += LOOKUP_CHUNK) {
        const result = await query(
          `SELECT * FROM payouts.events WHERE integrator_id = $1 AND resource_id = ANY($2)
           AND operation IN ('TRANSACTION_COMPLETED', 'TRANSACTION_FAILED') ORDER BY occurred_at`,
          [this.scope.integratorId, transactionIds.slice(i, i + LOOKUP_CHUNK)],
        );
        // Ordered by occurrence: the last settling event wins.
        for (const row of result.rows as EventRow[]) found.set(row.resource_id, eventOf(row));
      }
    });
    return found;
  }
}

interface RunRow {
  id: string;
  sheet: string;
  digest: string;
  host: string;
  pid: number;
  machine: string | null;
  process_start: string | null;
  started_at: string;
  heartbeat_at: Date;
  lease_expires_at: Date;
  lease_expired: boolean;
  finished_at: Date | null;
  rows: number | null;
  statuses: string | null;
  exit_code: number | null;
}

interface PayoutRow {
  reference: string;
  amount: string;
  currency: string;
  rail: string;
  payee: string;
  payee_hint: string;
  state: string;
  idempotency_key: string;
  beneficiary_id: string | null;
  recipient_id: string | null;
  simulation_id: string | null;
  transaction_id: string | null;
  error: string | null;
  run_id: string;
  sheet: string;
  paid_at: Date | null;
  updated_at: Date;
  [run: `r_${string}`]: unknown;
}

function runOf(row: RunRow): RunRecord | undefined {
  if (row.id === null || row.id === undefined) return undefined;
  const run: RunRecord = {
    id: row.id,
    sheet: row.sheet,
    digest: row.digest,
    host: row.host,
    pid: Number(row.pid),
    startedAt: row.started_at,
    heartbeatAt: iso(row.heartbeat_at),
    leaseExpiresAt: iso(row.lease_expires_at),
    leaseExpired: row.lease_expired,
  };
  if (row.machine !== null) run.machine = row.machine;
  if (row.process_start !== null) run.processStart = row.process_start;
  if (row.finished_at !== null) run.finishedAt = iso(row.finished_at);
  if (row.rows !== null) run.rows = row.rows;
  if (row.statuses !== null) run.statuses = JSON.parse(row.statuses) as Record<string, number>;
  if (row.exit_code !== null) run.exitCode = row.exit_code;
  return run;
}

function payoutOf(row: PayoutRow): PayoutRecord {
  const record: PayoutRecord = {
    reference: row.reference,
    details: {
      amount: row.amount,
      currency: row.currency,
      rail: row.rail,
      payee: row.payee,
      payeeHint: row.payee_hint,
    },
    state: row.state as PayoutState,
    idempotencyKey: row.idempotency_key,
    runId: row.run_id,
    sheet: row.sheet,
    updatedAt: iso(row.updated_at),
  };
  if (row.beneficiary_id !== null) record.beneficiaryId = row.beneficiary_id;
  if (row.recipient_id !== null) record.recipientId = row.recipient_id;
  if (row.simulation_id !== null) record.simulationId = row.simulation_id;
  if (row.transaction_id !== null) record.transactionId = row.transaction_id;
  if (row.error !== null) record.error = row.error;
  if (row.paid_at !== null) record.paidAt = iso(row.paid_at);
  const run = runOf(
    Object.fromEntries(
      Object.entries(row)
        .filter(([key]) => key.startsWith('r_'))
        .map(([key, value]) => [key.slice(2), value]),
    ) as unknown as RunRow,
  );
  if (run !== undefined) record.run = run;
  return record;
}

/** An error of the driver or the server (a SQLSTATE or a socket error), not one of ours. */
function isDriverError(error: unknown): boolean {
  if (error instanceof PayoutsError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' || (error instanceof Error && /connect|terminat|timeout/i.test(error.message))
  );
}

function driverCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  // A SQLSTATE is five characters; a socket error's code (ECONNREFUSED) is longer.
  return /^[0-9A-Z]{5}$/.test(code) ? `PG_${code}` : code;
}
