/**
 * The register in one SQLite file, through libsql (its N-API binaries ship inside registry
 * packages, so one `npm ci` serves Node 20 and Node 24 alike): its driver, its statements and
 * its clock; the register above it is store.ts.
 *
 * Durability as the per-sheet checkpoint it replaces had it: WAL, synchronous=FULL, so a write
 * is on disk when its promise resolves, and a transaction's intent is durable before its request
 * leaves. Every write joins the group commit (group-commit.ts): one fsync per group, not per
 * row. A busy timeout lets two processes share the file; the group's transactions are IMMEDIATE,
 * so two runs never both hold one reference.
 *
 * A file has no clock of its own: a lease is timed by the kernel's time since boot when the
 * reader runs on the boot that wrote it (one machine: no wall clock, faked or not, can cut a
 * live run's lease short), else by the wall clock (lease.ts leaseExpired).
 */
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { type Clock, systemClock, systemOutageClock } from '../clock.js';
import { errnoOf, RegisterError } from '../errors.js';
import { freeBytes, makeFolderSync } from '../folders.js';
import type { GroupCommit } from './group-commit.js';
import { historyRowId, historyRowIdSql } from './history-row.js';
import { type BootClock, LEASE, type StoreTime, systemBootClock } from './lease.js';
import { missingRegister, sizeOf } from './location.js';
import { Held, outageWait, untilFree } from './outage.js';
import { PAYOUT_COLUMNS, PAYOUT_FIELDS, type PayoutCells, payoutOf, type RunRow, runOf } from './records.js';
import {
  APPLICATION_ID,
  HISTORY_ROW_IDS_VERSION,
  MIGRATIONS,
  refuseNewer,
  SCHEMA_VERSION,
} from './schema.js';
import { compile, type Driver, type Sql, type Values, valuesOf } from './sql.js';
import { type StatementDialect, statementsFor } from './statements.js';
import { type BatchStatement, batchPayoutRows, type Dialect, PagePayout, SqlRegister } from './store.js';
import type { BatchPayout, OpenOptions, PayoutRecord, Register, RunRecord } from './types.js';

type Db = InstanceType<typeof Database>;
type Statement = Database.Statement<unknown[]>;

export interface OpenRegisterOptions
  extends Pick<
    OpenOptions,
    'maxOutageMs' | 'abandon' | 'onOutage' | 'keepTrying' | 'create' | 'from' | 'outageClock'
  > {
  /** Open an existing register for reading only (validate, status); never creates one. */
  readonly?: boolean;
  /** The wall clock; with one given (tests), leases are timed by it alone, not by the boot clock. */
  clock?: Clock;
  /** How long a run's lease lasts past its last heartbeat (ms). */
  leaseMs?: number;
}

/** Defaults in one object. */
export const REGISTER_DEFAULTS = {
  /**
   * While opening (before anything is sent), in all: long enough for another run's group commit
   * under load; short enough to report a stuck lock. Waited in steps of operationBusyMs with
   * asynchronous pauses between (openSqliteRegisterWaiting), so a signal is handled meanwhile.
   */
  busyTimeoutMs: 15_000,
  /**
   * Once open: how long one attempt waits for another process's lock, synchronously (libsql
   * blocks the event loop meanwhile); then the register retries asynchronously (outage.ts).
   */
  operationBusyMs: 50,
} as const;

/**
 * Opens the register at `path` as openSqliteRegister does, waiting for a lock another process
 * holds the way writes do once open: a moment per attempt (operationBusyMs: libsql's wait blocks
 * the event loop), then again after an asynchronous pause (outage.ts untilFree), so that a signal
 * or a deadline is handled meanwhile; for up to busyTimeoutMs in all, after which the last
 * attempt's error says the register is locked. A stop ends the wait at once: nothing was sent yet.
 */
export function openSqliteRegisterWaiting(
  path: string,
  options: OpenRegisterOptions & { stop?: AbortSignal | undefined } = {},
): Promise<Register> {
  const clock = options.outageClock ?? systemOutageClock;
  const attempt = () => {
    try {
      return openSqliteRegister(path, options, REGISTER_DEFAULTS.operationBusyMs);
    } catch (error) {
      if (isLocked(error instanceof RegisterError ? error.errno : errnoOf(error)))
        return new Held(error as Error);
      throw error;
    }
  };
  return untilFree(attempt, {
    budgetMs: REGISTER_DEFAULTS.busyTimeoutMs,
    wait: (n) => outageWait(n, clock),
    stop: options.stop,
    clock,
    stopped: `stopped while the register ${path} was locked by another process, before anything was sent`,
  });
}

/** Whether an error's code says another process holds the file's lock. */
function isLocked(errno: string | undefined): boolean {
  return errno === 'SQLITE_BUSY' || errno === 'SQLITE_LOCKED';
}

/**
 * Opens (creating when allowed) the register at `path`. Throws RegisterError, never a raw SQLite
 * error. `openingBusyMs` is how long one attempt waits for another process's lock while opening.
 */
export function openSqliteRegister(
  path: string,
  options: OpenRegisterOptions = {},
  openingBusyMs: number = REGISTER_DEFAULTS.busyTimeoutMs,
): Register {
  const readonly = options.readonly ?? false;
  // SQLite says only SQLITE_ERROR when it cannot make the -wal or -shm file of a full disk.
  const fail = (what: string, cause: unknown) =>
    new RegisterError(`the register ${path} ${what}`, {
      path,
      cause,
      ...(diskFull(dirname(path)) ? { errno: 'ENOSPC' } : {}),
    });
  // `run` opens to write: an existing register in a folder it cannot write is one it cannot write.
  const unopened = (cause: unknown) =>
    fail(!readonly && isReadonlyDirectory(cause) ? 'cannot be written' : 'cannot be opened', cause);
  // Made on purpose only (register init): a missing file or folder is a mistyped path or a
  // volume that was not mounted, never the place to start a second history.
  if (!readonly && !options.create) refuseMissing(path, options);
  if (!readonly) makeRegisterFile(path);
  /** The schema version as opened: a read-only open reads a register of an older one as it is. */
  let version = SCHEMA_VERSION;
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
      db.pragma(`busy_timeout = ${openingBusyMs}`);
      if (!readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        migrate(db, path, options);
        version = SCHEMA_VERSION;
      } else {
        version = checkVersion(db, path);
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
  const boot = options.clock === undefined ? systemBootClock() : undefined;
  const leaseMs = options.leaseMs ?? LEASE.leaseMs;
  // Opened: from now on a lock another process holds is waited for a moment only, then through
  // asynchronous retries (outage.ts), so that signals, deadlines and answers are handled meanwhile.
  db.pragma(`busy_timeout = ${REGISTER_DEFAULTS.operationBusyMs}`);
  return new SqlRegister(
    new SqliteDialect(path, db, readonly, options.clock ?? systemClock, boot, leaseMs, version),
    options,
  );
}

/** Whether the file system of `folder` has no block left for this user. */
function diskFull(folder: string): boolean {
  return freeBytes(folder) === 0;
}

/** The register's file and folder, private to this user (0600, 0700), made where missing. */
function makeRegisterFile(path: string): void {
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

/**
 * `payouts register init` for a file where there is none (or an empty file): the schema made in
 * one transaction, and the file closed at once, one file with no write-ahead log beside it.
 * Statements run through `exec` alone: libsql keeps a closed connection's file open until every
 * statement it prepared is collected, and a register made in a process that goes on (a test)
 * must be let go of when this returns.
 */
export function createSqliteRegister(path: string): void {
  makeRegisterFile(path);
  const cannot = (cause: unknown) =>
    new RegisterError(`the register ${path} cannot be created`, { path, cause });
  let db: Db;
  try {
    db = new Database(path);
  } catch (cause) {
    throw cannot(cause);
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${REGISTER_DEFAULTS.busyTimeoutMs}`);
    db.exec('BEGIN IMMEDIATE');
    try {
      applyMigrations(db, 0);
      db.exec('COMMIT');
    } catch (cause) {
      db.exec('ROLLBACK');
      throw cause;
    }
    db.exec('PRAGMA journal_mode = WAL');
  } catch (cause) {
    throw cannot(cause);
  } finally {
    db.close();
  }
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
  refuseNewer(path, version, SCHEMA_VERSION);
  return version;
}

/** No register file at `path`, or an empty one: refused unless creating. */
function refuseMissing(path: string, options: OpenRegisterOptions): void {
  let size: number | undefined;
  try {
    size = sizeOf(path);
  } catch {
    return; // opening says what else is wrong (a folder it may not read)
  }
  if (!size) throw missingRegister(path, options.from);
}

function migrate(db: Db, path: string, options: OpenRegisterOptions): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const version = checkVersion(db, path);
    if (version === 0 && !options.create) {
      throw missingRegister(path, options.from);
    }
    if (version < SCHEMA_VERSION) applyMigrations(db, version);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/** The migrations from `version` on, then the version and the id that say whose file it is. */
function applyMigrations(db: Db, version: number): void {
  for (const migration of MIGRATIONS.slice(version)) db.exec(migration);
  db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
}

/** Statements on the one connection of a file, prepared once each. */
class SqliteSql implements Sql {
  private readonly prepared = new Map<string, { statement: Statement; names: string[] }>();

  constructor(private readonly db: Db) {}

  private bound(text: string, values: Values | undefined): [Statement, unknown[]] {
    let entry = this.prepared.get(text);
    if (entry === undefined) {
      const compiled = compile(text, false);
      entry = { statement: this.db.prepare(compiled.text), names: compiled.names };
      this.prepared.set(text, entry);
    }
    // SQLite binds no lists or booleans: a list is JSON text (read with json_each), a boolean 0 or 1.
    const bound = valuesOf(entry, values).map((value) =>
      Array.isArray(value) ? JSON.stringify(value) : typeof value === 'boolean' ? Number(value) : value,
    );
    return [entry.statement, bound];
  }

  async rows<R>(text: string, values?: Values): Promise<R[]> {
    const [statement, bound] = this.bound(text, values);
    return statement.all(...bound) as R[];
  }

  async changed(text: string, values?: Values): Promise<number> {
    const [statement, bound] = this.bound(text, values);
    return statement.run(...bound).changes;
  }

  async exec(text: string): Promise<void> {
    this.db.exec(text);
  }
}

/** A list bound as JSON text (SqliteSql binds no list), read with json_each. */
const IN = (name: string) => `IN (SELECT value FROM json_each(:${name}))`;

/** What SQLite says its own way in the register's statements (statements.ts). */
const SQLITE_SQL: StatementDialect = {
  schema: '',
  now: ':now',
  inList: IN,
  time: (name) => `:${name}`,
  // A file has no clock: a lease holds the boot clock's reading too (lease.ts leaseExpired).
  leaseEnd: ':leaseEnd',
  leaseClock: [
    ['lease_boot', ':leaseBoot'],
    ['lease_uptime_ms', ':leaseUptime'],
  ],
  storeNow: '',
  // The index by run holds the primary key (scope, reference) after the run: given both, the
  // page is read in reference order from it, without a sort.
  runPageScoped: true,
  // A row at a time, each a statement of the one IMMEDIATE transaction.
  rows: (alias, columns) => `(SELECT ${columns.map((c) => `:${c} AS ${c}`).join(', ')}) AS ${alias}`,
  rowsAsLists: false,
  // Under the payee key's row id while it is free (history-row.ts), else one SQLite picks.
  addHistory: (table) => `INSERT INTO ${table} (id, scope_id, payee, history, updated_at)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM ${table} WHERE id = own.id) THEN NULL ELSE own.id END,
      :scope, :payee, :history, coalesce(:updatedAt, :now)
    FROM (SELECT ${historyRowIdSql(':payee')} AS id) AS own WHERE true ON CONFLICT DO NOTHING`,
};

const STATEMENTS = statementsFor(SQLITE_SQL);

/** Histories by their row ids (history-row.ts), with what tells whose each one is. */
const HISTORIES_BY_ID = `SELECT id, scope_id, payee, history FROM payee_history WHERE id ${IN('ids')}`;

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

/** How many references one lookup query takes. */
const LOOKUP_CHUNK = 500;

/**
 * The look-up of a chunk of references (`:references`): one text for all the rows, since libsql
 * makes a JavaScript value per column of a row, which costs more than SQLite writing the text and
 * V8 splitting it. LOOKUP_JSON reads the same records as JSON, for a chunk whose packed text did
 * not split cleanly.
 */
const LOOKUP = `SELECT count(*) AS n, ${PACKED_RECORDS} AS packed FROM payouts
  WHERE scope_id = :scope AND reference ${IN('references')}`;
/**
 * A page of a paid batch's payouts (the batchPayouts statement) as one text, the way LOOKUP
 * reads records: a million payouts of the previous batch read in 1.2 s, against 2.9 s as rows.
 * The text takes the rows in the order the statement gives them, by reference, which SQLite
 * does not promise of an aggregate: batchPage checks it. Sorting them again in the aggregate
 * (`ORDER BY reference`) made that reading 1.16 s against 0.81.
 */
const packedPage = (
  statement: string,
) => `SELECT count(*) AS n, group_concat(payee_key || char(31) || coalesce(payee_name, '')
  || char(31) || reference || char(31) || amount || char(31) || currency, char(30)) AS packed
  FROM (${statement})`;
const BATCH_PAGE_PACKED = {
  batchPayouts: packedPage(STATEMENTS.batchPayouts),
  runPayouts: packedPage(STATEMENTS.runPayouts),
};

/** Half of a character past U+FFFF, in a JavaScript text. */
const SURROGATE = /[\uD800-\uDFFF]/;

const LOOKUP_JSON = `SELECT json_group_array(json_array(${PAYOUT_COLUMNS})) AS json FROM payouts
  WHERE scope_id = :scope AND reference ${IN('references')}`;

/** The file's part of the register: its one connection, its statements, its clocks. */
class SqliteDialect implements Dialect, Driver {
  readonly sql = STATEMENTS;
  readonly driver = this;
  readonly begin = 'BEGIN IMMEDIATE';
  readonly writesAlone = false;
  readonly chunk = LOOKUP_CHUNK;
  private readonly connectionSql: SqliteSql;
  /**
   * Runs read by a read-only store (`validate`, `status`), kept as first read: a validate of a
   * million rows takes seconds, well inside the lease after which a silent run is dead.
   */
  private readonly runsSeen = new Map<string, RunRecord | undefined>();

  constructor(
    readonly location: string,
    private readonly db: Db,
    readonly readonly: boolean,
    private readonly clock: Clock,
    private readonly boot: BootClock | undefined,
    readonly leaseMs: number,
    /** The schema version the register had when opened. */
    private readonly version: number,
  ) {
    this.connectionSql = new SqliteSql(db);
  }

  /** A file has no clock: the wall clock, and the kernel's time since boot where there is one. */
  time(): StoreTime {
    return { now: this.clock.now(), boot: this.boot };
  }

  connection<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return work(this.connectionSql);
  }

  isDriverError(error: unknown): boolean {
    return errnoOf(error)?.startsWith('SQLITE') ?? false;
  }

  /** A lock another process holds passes by itself: waited through (outage.ts), off the event loop. */
  outage(error: unknown): string | undefined {
    const errno = errnoOf(error);
    return isLocked(errno) ? `it is locked by another process (${errno})` : undefined;
  }

  failure(what: string, error: unknown): Error {
    if (error instanceof RegisterError || !this.isDriverError(error)) return error as Error;
    return new RegisterError(`the register ${this.location} ${what}`, { path: this.location, cause: error });
  }

  async close(): Promise<void> {
    this.db.close();
  }

  claiming<T>(writes: GroupCommit, _scope: number, work: (sql: Sql) => Promise<T>): Promise<T> {
    // In the group commit's IMMEDIATE transaction: no other process can claim in between.
    return writes.write(work);
  }

  /**
   * A packed page is one text, which V8 keeps among its large objects past a few hundred
   * kilobytes: a million payouts read in 4,000-payout pages took 2.4 s and 88 MB more RSS, in
   * pages of 1,000 1.7 s and 34 MB (250: 2.0 s; 2,000: 1.9 s).
   */
  readonly batchPageRows = 1000;

  /**
   * A page of a paid batch's payouts, packed; as rows, which SQLite sorts, when a value held a
   * separator or the packed text is not in the order of the references.
   */
  async batchPage(sql: Sql, statement: BatchStatement, values: Values): Promise<BatchPayout[]> {
    const [{ n, packed }] = (await sql.rows(BATCH_PAGE_PACKED[statement], values)) as [
      { n: number; packed: string | null },
    ];
    if (packed === null) return [];
    const records = packed.split(RECORD);
    const payouts: BatchPayout[] = [];
    // JavaScript orders texts as SQLite does (by UTF-8 bytes) but for characters past U+FFFF.
    if (records.length === n && !SURROGATE.test(packed)) {
      let previous = values.after as string;
      for (const record of records) {
        const [payee, name, reference, amount, currency, more] = record.split(UNIT);
        if (currency === undefined || more !== undefined || !(reference! > previous)) break;
        previous = reference!;
        payouts.push(new PagePayout(payee!, name!, reference!, amount!, currency));
      }
    }
    return payouts.length === n ? payouts : batchPayoutRows(sql, STATEMENTS[statement], values);
  }

  /**
   * The histories of these payees, each looked for first under its key's row id (history-row.ts):
   * by the key only where the row there is another payee's, or the key has no row id.
   */
  async payeeHistories(
    sql: Sql,
    scope: number,
    payees: readonly string[],
  ): Promise<{ payee: string; history: string }[]> {
    const found: { payee: string; history: string }[] = [];
    const byKey: string[] = [];
    const byId = new Map<number, string>();
    // A register opened read-only at a version from before the row ids has them nowhere.
    const byIds = this.version >= HISTORY_ROW_IDS_VERSION;
    for (const payee of payees) {
      const id = byIds ? historyRowId(payee) : undefined;
      if (id === undefined || byId.has(id)) byKey.push(payee);
      else byId.set(id, payee);
    }
    if (byId.size > 0) {
      type Row = { id: number; scope_id: number; payee: string; history: string };
      const rows = await sql.rows<Row>(HISTORIES_BY_ID, { ids: [...byId.keys()] });
      for (const row of rows) {
        const payee = byId.get(row.id)!;
        if (row.scope_id === scope && row.payee === payee) found.push(row);
        else byKey.push(payee);
      }
    }
    if (byKey.length > 0)
      found.push(
        ...(await sql.rows<{ payee: string; history: string }>(STATEMENTS.payeeHistory, {
          scope,
          payees: byKey,
        })),
      );
    return found;
  }

  /**
   * The records of these references, a chunk at a time by the packed query (PACKED_RECORDS), with
   * the runs they name, each read once per look-up (a sheet's payouts share a few runs), or once
   * for all the look-ups of a read-only store.
   */
  async lookup(sql: Sql, scope: number, references: readonly string[]): Promise<Map<string, PayoutRecord>> {
    const found = new Map<string, PayoutRecord>();
    const runs = this.readonly ? this.runsSeen : new Map<string, RunRecord | undefined>();
    for (let i = 0; i < references.length; i += LOOKUP_CHUNK) {
      const values = { scope, references: references.slice(i, i + LOOKUP_CHUNK) };
      const [{ n, packed }] = (await sql.rows(LOOKUP, values)) as [{ n: number; packed: string | null }];
      if (packed === null) continue;
      // A value that held a separator: this chunk again, as JSON.
      const chunk =
        unpack(packed, n) ??
        (JSON.parse(((await sql.rows(LOOKUP_JSON, values)) as [{ json: string }])[0].json) as PayoutCells[]);
      for (const cells of chunk) {
        const runId = cells[13] as string;
        if (!runs.has(runId)) {
          const [row] = await sql.rows<RunRow>(STATEMENTS.held.run, { id: runId });
          runs.set(runId, row === undefined ? undefined : runOf(row, this.time()));
        }
        found.set(cells[0] as string, payoutOf(cells, runs.get(runId)));
      }
    }
    return found;
  }
}

/**
 * The `count` records of a packed look-up (PACKED_RECORDS); undefined when a value held a
 * separator. Then the text has more records than `count`, or a record more fields than
 * PAYOUT_FIELDS: exactly `count` records of exactly that many fields hold no separator but those
 * SQLite put between them.
 */
function unpack(packed: string, count: number): PayoutCells[] | undefined {
  const records = packed.split(RECORD);
  if (records.length !== count) return undefined;
  const read: PayoutCells[] = [];
  for (const record of records) {
    const cells: (string | null)[] = record.split(UNIT);
    if (cells.length !== PAYOUT_FIELDS.length) return undefined;
    for (let i = 0; i < cells.length; i++) if (cells[i] === '' && PAYOUT_FIELDS[i]![1]) cells[i] = null;
    read.push(cells);
  }
  return read;
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
