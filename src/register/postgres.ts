/**
 * The register in a PostgreSQL database, shared by many machines (README "Never pay twice: the
 * register"; docs/register.md "A PostgreSQL register"), through node-postgres (`pg`): its
 * driver and its statements; the register above it is store.ts.
 *
 * - Its tables live in their own schema, `payouts`, versioned in `payouts.schema_version` and
 *   migrated under an advisory lock, so two containers starting together do not race; a newer
 *   schema is refused.
 * - Durability: a write resolves once its transaction committed; a server whose
 *   `synchronous_commit` is `off` or `local` is refused, since a commit it acknowledges may be
 *   lost (a transaction's intent must be durable before its request leaves). A write atomic on
 *   its own goes out alone; the others share the group commit (group-commit.ts).
 * - Time is the database's: leases end at `now() + lease`, and the statements that read a lease
 *   read `now()` with it, which lease.ts judges it by.
 * - Claims: one transaction per batch of references, in sorted order, under a transaction-level
 *   advisory lock of the scope (the analogue of SQLite's BEGIN IMMEDIATE), retried on a deadlock
 *   or serialization failure.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { type OutageClock, systemClock, systemOutageClock } from '../clock.js';
import { InterruptedError, PayoutsError, RegisterError } from '../errors.js';
import { deadlineWithin } from '../outage-budget.js';
import type { GroupCommit } from './group-commit.js';
import { LEASE, type StoreTime } from './lease.js';
import { missingRegister } from './location.js';
import { Held, OUTAGE_DEFAULTS, untilFree } from './outage.js';
import { postgresConnection } from './pg-connection.js';
import { pgFailureOf } from './pg-errors.js';
import { pgpassWarningsAsProcessWarnings } from './pg-warnings.js';
import type { Fence } from './rules.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, refuseNewer } from './schema.js';
import { type Compiled, compile, type Driver, type Sql, type Values, valuesOf } from './sql.js';
import { type StatementDialect, statementsFor } from './statements.js';
import { type Dialect, SqlRegister } from './store.js';
import type { OpenOptions, Register } from './types.js';

pgpassWarningsAsProcessWarnings();

/** Defaults in one object. */
export const POSTGRES_DEFAULTS = {
  /** Connections per process: a run's writes are grouped per tick, its reads are few. */
  poolSize: 4,
  /** At most; a shorter register deadline (a short --max-outage) shortens it. */
  connectTimeoutMs: 10_000,
  /** Idle time before TCP keepalive probes a connection. */
  keepAliveMs: 10_000,
  /** How long a statement may wait for a lock (another run's claim) before it is reported. */
  lockTimeoutMs: 15_000,
  /** How long close() waits for the pool to end after cutting what was under way. */
  closeWaitMs: 1_000,
  /** Attempts of a claim that met a deadlock or serialization failure. */
  claimAttempts: 5,
  /**
   * A step of the schema's migration, and the wait for another process's: an index built over a
   * large register's payouts is work, not a stall, and may take far longer than a query.
   */
  migrationMs: 10 * 60_000,
  /** How often a process waiting for another's migration asks whether it is done. */
  migrationPollMs: 250,
} as const;

/** The advisory lock of the schema's migration: one number, the same in every payouts. */
export const MIGRATION_LOCK = 0x50594f54;

/** SQLSTATEs after which a transaction is simply tried again. */
const RETRYABLE = new Set(['40P01', '40001']);

export interface PostgresOpenOptions extends OpenOptions {
  /** With `readonly`: a database with no payouts schema yet gives undefined instead of an error. */
  missingOk?: boolean;
}

/** Opens the register in the database at `url`. Throws RegisterError, never a driver error. */
export async function openPostgresRegister(
  url: string,
  options: PostgresOpenOptions & { missingOk: true },
): Promise<Register | undefined>;
export async function openPostgresRegister(url: string, options?: PostgresOpenOptions): Promise<Register>;
export async function openPostgresRegister(
  url: string,
  options: PostgresOpenOptions = {},
): Promise<Register | undefined> {
  const readonly = options.readonly ?? false;
  // Read once, by node-postgres' own parser; shown only without its password (pg-connection.ts).
  const connection = postgresConnection(url);
  for (const warning of connection.warnings) options.warn?.(warning);
  const deadlineMs = deadlineWithin(options.maxOutageMs ?? OUTAGE_DEFAULTS.maxOutageMs);
  const pool = new pg.Pool({
    ...connection.config,
    max: POSTGRES_DEFAULTS.poolSize,
    connectionTimeoutMillis: Math.min(POSTGRES_DEFAULTS.connectTimeoutMs, deadlineMs),
    // Keepalive finds a peer that is gone (a failover's old primary); a stall it cannot see (the
    // kernel still acknowledges), which the deadline on every query is for.
    keepAlive: true,
    keepAliveInitialDelayMillis: POSTGRES_DEFAULTS.keepAliveMs,
    application_name: 'payouts',
    // The server's side of the deadline: a statement or a transaction left open by a client
    // that went away ends there too, and frees its locks.
    statement_timeout: deadlineMs,
    idle_in_transaction_session_timeout: deadlineMs,
    options: `-c lock_timeout=${Math.min(POSTGRES_DEFAULTS.lockTimeoutMs, deadlineMs)}${readonly ? ' -c default_transaction_read_only=on' : ''}`,
  });
  // An idle connection that the server drops must not crash the process.
  pool.on('error', () => {});
  const dialect = new PostgresDialect(
    connection.shown,
    connection.sslmode,
    pool,
    readonly,
    options.leaseMs ?? LEASE.leaseMs,
    deadlineMs,
    options.outageClock ?? systemOutageClock,
  );
  // A stop past its grace cuts the opening too (a migration under way is rolled back).
  const cut = () => dialect.cut();
  options.abandon?.addEventListener('abort', cut, { once: true });
  try {
    const ready = readonly
      ? await dialect.checkReadable(options.missingOk ?? false)
      : await dialect.prepare(options.stop, options);
    if (!ready) {
      await dialect.close();
      return undefined;
    }
  } catch (error) {
    await dialect.close().catch(() => {});
    if (options.stop?.aborted || options.abandon?.aborted)
      throw new InterruptedError(
        `stopped while the register ${connection.shown} was being opened, before anything was sent`,
      );
    throw dialect.failure('cannot be opened', error);
  } finally {
    options.abandon?.removeEventListener('abort', cut);
  }
  return new SqlRegister(dialect, options);
}

/**
 * A statement's text compiled for pg (`$1`, `$2`), and the name it is prepared under: each
 * connection parses and plans it once, then only binds and executes it. A run sends the same few
 * statements thousands of times, and parsing them again was a fair part of the server's work.
 * The name is the text's hash, so one name never stands for two texts. A `SELECT *` stays
 * unprepared: a newer payouts adding a column while this run is connected would make its
 * prepared plan fail.
 */
interface PgStatement extends Compiled {
  name?: string;
}

const statements = new Map<string, PgStatement>();

function statementOf(text: string): PgStatement {
  let statement: PgStatement | undefined = statements.get(text);
  if (statement === undefined) {
    statement = compile(text, true);
    if (statement.names.length > 0 && !text.includes('*'))
      statement.name = `payouts_${createHash('sha256').update(statement.text).digest('hex').slice(0, 24)}`;
    statements.set(text, statement);
  }
  return statement;
}

/**
 * Closes a client's socket now. A query under way then fails at once; `pool.end()` would wait
 * for it, and on a stalled connection it never answers.
 */
function destroySocket(client: pg.ClientBase): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * A query past its deadline: the socket is closed (the query cannot be taken back from a
 * connection that does not answer), and the failure is an outage (pg-errors.ts).
 */
function withDeadline<T>(
  client: pg.ClientBase,
  query: Promise<T>,
  deadlineMs: number,
  clock: OutageClock,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.timers.once(deadlineMs, () => {
      reject(new Error(`Query read timeout: the database did not answer within ${deadlineMs / 1000} s`));
      destroySocket(client);
    });
    query.then(resolve, reject).finally(cancel);
  });
}

/** Statements in pg's own terms (`$1`), each under a deadline: the rows they give. */
type Ask = <R = Record<string, unknown>>(text: string, values?: unknown[], ms?: number) => Promise<R[]>;

/** Statements on one connection of the pool, each under the register's deadline. */
class PgSql implements Sql {
  constructor(
    private readonly client: pg.ClientBase,
    private readonly deadlineMs: number,
    private readonly clock: OutageClock,
  ) {}

  private query(text: string, values: Values | undefined): Promise<pg.QueryResult> {
    const { name, text: compiled, ...statement } = statementOf(text);
    const config: pg.QueryConfig = { text: compiled, values: valuesOf(statement, values) };
    return withDeadline(
      this.client,
      this.client.query(name === undefined ? config : { ...config, name }),
      this.deadlineMs,
      this.clock,
    );
  }

  async rows<R>(text: string, values?: Values): Promise<R[]> {
    return (await this.query(text, values)).rows as R[];
  }

  async changed(text: string, values?: Values): Promise<number> {
    return (await this.query(text, values)).rowCount ?? 0;
  }

  async exec(text: string): Promise<void> {
    await withDeadline(this.client, this.client.query(text), this.deadlineMs, this.clock);
  }
}

/** What PostgreSQL says its own way in the register's statements (statements.ts). */
const POSTGRES_SQL: StatementDialect = {
  // Its own schema, beside whatever else the database holds.
  schema: 'payouts.',
  // Time is the database's, and a statement that reads a lease reads the time that judges it.
  now: 'now()',
  storeNow: ', now() AS store_now',
  inList: (name) => `= ANY(:${name})`,
  // A parameter's type is the server's guess from where it first stands: NULL says nothing.
  time: (name) => `:${name}::timestamptz`,
  // From the database's clock, to the millisecond: a JavaScript Date holds no finer time, and so
  // the lease a statement reads is judged (lease.ts) exactly as the database would.
  leaseEnd: `date_trunc('milliseconds', now() + make_interval(secs => :leaseSeconds))`,
  leaseClock: [],
  // Given the scope, the planner walked the primary key (every batch's payouts) rather than the
  // index by run and reference; a run is of one scope.
  runPageScoped: false,
  // A batch's rows in one statement, a list per column (one round trip for the batch).
  rows: (alias, columns) =>
    `unnest(${columns.map((c) => `:${c}::text[]`).join(', ')}) AS ${alias} (${columns.join(', ')})`,
  rowsAsLists: true,
};

const STATEMENTS = statementsFor(POSTGRES_SQL);

/** How many references one look-up query takes. */
const LOOKUP_CHUNK = 1000;

/** The database's part of the register: its pool, its statements, its clock. */
class PostgresDialect implements Dialect, Driver {
  readonly sql = STATEMENTS;
  readonly driver = this;
  readonly begin = 'BEGIN';
  readonly writesAlone = true;
  readonly chunk = LOOKUP_CHUNK;

  /** Clients checked out now: cut on a stop, and on close (a stalled one would hold `pool.end()`). */
  private readonly active = new Set<pg.PoolClient>();
  private ended: Promise<void> | undefined;

  constructor(
    readonly location: string,
    private readonly sslmode: string,
    private readonly pool: pg.Pool,
    readonly readonly: boolean,
    readonly leaseMs: number,
    private readonly deadlineMs: number,
    private readonly clock: OutageClock,
  ) {}

  /** The database's time, as the statement that read `row` had it (`store_now`). */
  time(row?: Record<string, unknown>): StoreTime {
    const at = row?.['store_now'];
    return { now: at instanceof Date ? at.getTime() : systemClock.now() };
  }

  connection<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    // A connection that failed as in an outage is not trusted again: destroyed, not pooled.
    return this.withClient(
      (client) => work(new PgSql(client, this.deadlineMs, this.clock)),
      (error) => this.isDriverError(error) && this.outage(error) !== undefined,
    );
  }

  /**
   * `work` on a client of the pool, given back when done; destroyed instead when it failed as
   * `broken` says, or when `work` marked it (a session left in a state not to pool).
   */
  private async withClient<T>(
    work: (client: pg.PoolClient, markBroken: (error: unknown) => void) => Promise<T>,
    broken: (error: unknown) => boolean,
  ): Promise<T> {
    const client = await this.checkOut();
    let failed: Error | undefined;
    const markBroken = (error: unknown) => {
      failed ??= error instanceof Error ? error : new Error(String(error));
    };
    try {
      return await work(client, markBroken);
    } catch (error) {
      if (broken(error)) markBroken(error);
      throw error;
    } finally {
      this.active.delete(client);
      client.release(failed);
    }
  }

  private async checkOut(): Promise<pg.PoolClient> {
    const client = await this.pool.connect();
    // A checked-out client has no listener of the pool's: a socket error between queries must
    // not crash the process (the next query fails instead).
    if (client.listenerCount('error') === 0) client.on('error', () => {});
    this.active.add(client);
    return client;
  }

  /** An error of the driver or the server (a SQLSTATE or a socket error), not one of ours. */
  isDriverError(error: unknown): boolean {
    if (error instanceof PayoutsError) return false;
    const code = (error as { code?: unknown } | null)?.code;
    return (
      typeof code === 'string' || (error instanceof Error && /connect|terminat|timeout/i.test(error.message))
    );
  }

  outage(error: unknown): string | undefined {
    const failure = pgFailureOf(error, this.sslmode);
    return failure.outage ? failure.words : undefined;
  }

  /** In words, with the code in parentheses (pg-errors.ts): never a bare SQLSTATE. */
  failure(what: string, error: unknown): Error {
    if (error instanceof RegisterError || !this.isDriverError(error)) return error as Error;
    return new RegisterError(
      `the register ${this.location} ${what}: ${pgFailureOf(error, this.sslmode).words}`,
      {
        path: this.location,
        cause: error,
        // No errno: the words above already name the code.
        errno: '',
      },
    );
  }

  cut(): void {
    for (const client of this.active) destroySocket(client);
  }

  /**
   * Ends the pool; every connection's socket is closed first, checked out or idle, since ending
   * an idle connection waits for the server to answer its goodbye, which a stall never does.
   */
  close(): Promise<void> {
    this.cut();
    const idle = (this.pool as unknown as { _clients?: pg.ClientBase[] })._clients ?? [];
    for (const client of idle) destroySocket(client);
    this.ended ??= Promise.race([
      this.pool.end().catch(() => {}),
      new Promise<void>((resolve) =>
        this.clock.timers.once(POSTGRES_DEFAULTS.closeWaitMs, resolve, { unref: true }),
      ),
    ]);
    return this.ended;
  }

  /** The rows of statements on `client`, each under the register's deadline or `ms`. */
  private asker(client: pg.ClientBase): Ask {
    return (text, values, ms = this.deadlineMs) =>
      withDeadline(client, client.query(text, values), ms, this.clock).then((result) => result.rows as never);
  }

  /**
   * Checks durability, then creates or migrates the schema under the migration lock. Every
   * statement has the register's deadline but the migration's own steps, which have
   * `migrationMs`: a register already at this version takes no lock at all, and one that
   * another process is migrating is waited for (a stop ends the wait at once).
   */
  prepare(stop?: AbortSignal, opening: Pick<OpenOptions, 'create' | 'from'> = {}): Promise<boolean> {
    return this.withClient(
      async (client, markBroken) => {
        const ask = this.asker(client);
        const sync = (await ask('SHOW synchronous_commit'))[0]!['synchronous_commit'];
        if (sync === 'off' || sync === 'local') {
          throw new RegisterError(
            `the register ${this.location} is on a server whose synchronous_commit is '${sync}': a commit it acknowledges can be lost in a crash, and payouts must know what it sent: set synchronous_commit to on (or remote_apply) for this database or its user`,
            { path: this.location },
          );
        }
        const found = await this.schemaVersion(ask);
        if (found === PG_SCHEMA_VERSION) return true;
        // Made on purpose only (register init): a database without the schema is a mistyped URL,
        // never the place to start a second history.
        if (found === 0 && !opening.create)
          throw missingRegister(this.location, opening.from, 'the database holds no payouts schema');
        await this.migrationLock(ask, stop);
        try {
          // Read again under the lock: the process that held it may have migrated already.
          for (let v = await this.schemaVersion(ask); v < PG_SCHEMA_VERSION; v += 1) {
            await ask('BEGIN');
            try {
              await ask(`SET LOCAL statement_timeout = ${POSTGRES_DEFAULTS.migrationMs}`);
              await ask(PG_MIGRATIONS[v]!, [], POSTGRES_DEFAULTS.migrationMs);
              await ask('UPDATE payouts.schema_version SET version = $1', [v + 1]);
              await ask('COMMIT');
            } catch (error) {
              await ask('ROLLBACK').catch(() => {});
              throw error;
            }
          }
        } finally {
          // A session that cannot say it is done ends with its connection, and the lock with it.
          await ask('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(markBroken);
        }
        return true;
      },
      () => true,
    );
  }

  /**
   * Takes the migration lock, waiting while another process migrates (for up to `migrationMs`):
   * asked again every `migrationPollMs`, so that a stop ends the wait at once.
   */
  private migrationLock(ask: Ask, stop: AbortSignal | undefined): Promise<true> {
    const minutes = POSTGRES_DEFAULTS.migrationMs / 60_000;
    const late = `the register ${this.location} has been migrated by another payouts process for more than ${minutes} minutes: run again once it is done`;
    const attempt = async () =>
      (await ask('SELECT pg_try_advisory_lock($1) AS taken', [MIGRATION_LOCK]))[0]?.['taken']
        ? (true as const)
        : new Held(new RegisterError(late, { path: this.location }));
    return untilFree(attempt, {
      budgetMs: POSTGRES_DEFAULTS.migrationMs,
      wait: () => POSTGRES_DEFAULTS.migrationPollMs,
      stop,
      clock: this.clock,
      stopped: 'stopped while waiting for another process to migrate the register',
    });
  }

  /** Whether there is a register to read. */
  checkReadable(missingOk: boolean): Promise<boolean> {
    return this.withClient(
      async (client) => {
        if ((await this.schemaVersion(this.asker(client))) > 0) return true;
        if (missingOk) return false;
        throw new RegisterError(`there is no payouts register in ${this.location} yet`, {
          path: this.location,
        });
      },
      () => true,
    );
  }

  /** The schema's version (0: none yet); one newer than this payouts is refused. */
  private async schemaVersion(ask: Ask): Promise<number> {
    const [schema] = await ask<{ present: boolean }>(
      `SELECT to_regclass('payouts.schema_version') IS NOT NULL AS present`,
    );
    const [row] = schema?.present
      ? await ask<{ version: number }>('SELECT version FROM payouts.schema_version')
      : [];
    const version = row?.version ?? 0;
    refuseNewer(this.location, version, PG_SCHEMA_VERSION);
    return version;
  }

  /**
   * A transaction of its own under the scope's advisory lock, tried again on a deadlock or
   * serialization failure.
   */
  async claiming<T>(writes: GroupCommit, scope: number, work: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await writes.transaction(async (sql) => {
          await sql.rows('SELECT pg_advisory_xact_lock(:lock, :scope)', { lock: MIGRATION_LOCK, scope });
          return work(sql);
        });
      } catch (error) {
        const cause = error instanceof RegisterError ? error.cause : error;
        const code = (cause as { code?: string } | undefined)?.code;
        if (code === undefined || !RETRYABLE.has(code) || attempt >= POSTGRES_DEFAULTS.claimAttempts)
          throw error;
      }
    }
  }

  /**
   * The fence (rules.ts fenceOf) applied by the database in the write itself: a write atomic on
   * its own goes out without a transaction (one round trip), so the lease is judged at the moment
   * of writing, by the database's clock that also read it elsewhere (lease.ts).
   */
  fenced(sql: Sql, set: string, values: Values, fence: Fence): Promise<number> {
    const lease = fence.lease
      ? ` AND EXISTS (SELECT 1 FROM payouts.runs WHERE id = :fenceRun AND finished_at IS NULL
          AND lease_expires_at > now())`
      : '';
    const orIn = fence.orIn.length > 0 ? ' OR state = ANY(:fenceStates)' : '';
    return sql.changed(`${set} AND (run_id = :fenceRun${lease}${orIn})`, values);
  }
}
