/**
 * The one seam between the register and a database: a store supplies a Driver (how to reach a
 * connection, and its errors in words) whose connections run statements through Sql. Everything
 * above it (the group commit, export and import, the scope's operations) is written once against
 * this seam: a deadline on every operation is each driver's, and waiting through an outage
 * (reconnecting after a lost connection) wraps any driver once (outage.ts).
 */

/** The values of a statement, by the `:name` that its text uses for each. */
export type Values = Readonly<Record<string, unknown>>;

/** Statements on one connection (or, inside `transaction`, one transaction). */
export interface Sql {
  /** The rows a statement gives, as objects named by column. */
  rows<R>(text: string, values?: Values): Promise<R[]>;
  /** How many rows a statement changed. */
  changed(text: string, values?: Values): Promise<number>;
  /** A statement without values or rows: BEGIN, COMMIT, SAVEPOINT. */
  exec(text: string): Promise<void>;
}

/** What a store gives the register to reach its database. */
export interface Driver {
  /** How a transaction that writes begins (SQLite: IMMEDIATE, taking the write lock at once). */
  readonly begin: string;
  /** Runs `work` on a connection outside any transaction: reads, and writes atomic on their own. */
  connection<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /** Whether an error is the driver's or the database's (then said in words), not ours. */
  isDriverError(error: unknown): boolean;
  /**
   * Such an error in words when it is an outage (it passes by itself: a restart, a cut, a stall,
   * a lock another process holds), which the register waits through (outage.ts); else undefined.
   */
  outage(error: unknown): string | undefined;
  /** Such an error as a RegisterError saying what could not be done: `cannot be read`. */
  failure(what: string, error: unknown): Error;
  /** Cuts the connections under way now (a stopped command past its grace); close() still follows. */
  cut?(): void;
  /** Ends the driver without waiting on a stalled connection. */
  close(): Promise<void>;
}

/** Runs `work` in one transaction of one connection: committed when it resolves, undone when it throws. */
export function transaction<T>(driver: Driver, work: (sql: Sql) => Promise<T>): Promise<T> {
  return driver.connection(async (sql) => {
    await sql.exec(driver.begin);
    try {
      const value = await work(sql);
      await sql.exec('COMMIT');
      return value;
    } catch (error) {
      await sql.exec('ROLLBACK').catch(() => {});
      throw error;
    }
  });
}

/** Inside a transaction: `work` in a savepoint, undone alone when it throws. */
export async function savepoint<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  await sql.exec('SAVEPOINT w');
  try {
    const value = await work();
    await sql.exec('RELEASE SAVEPOINT w');
    return value;
  } catch (error) {
    await sql.exec('ROLLBACK TO SAVEPOINT w');
    await sql.exec('RELEASE SAVEPOINT w');
    throw error;
  }
}

/** A statement's text with its `:name`s replaced by a driver's placeholders, and the names in order. */
export interface Compiled {
  text: string;
  names: string[];
}

/**
 * Compiles a `:name` text for a driver: each name as `?`, a value per occurrence (SQLite), or
 * `numbered`, as `$1`, `$2`, one value per distinct name (PostgreSQL). A `::type` cast is no name.
 */
export function compile(text: string, numbered: boolean): Compiled {
  const names: string[] = [];
  const out = text.replace(/(?<![:\w]):([A-Za-z_]\w*)/g, (_, name: string) => {
    if (!numbered) {
      names.push(name);
      return '?';
    }
    const at = names.indexOf(name);
    return `$${at >= 0 ? at + 1 : names.push(name)}`;
  });
  return { text: out, names };
}

/** The values of a compiled statement in its placeholders' order (undefined as NULL). */
export function valuesOf(compiled: Pick<Compiled, 'names'>, values: Values | undefined): unknown[] {
  return compiled.names.map((name) => {
    if (values === undefined || !(name in values)) throw new Error(`no value for :${name}`);
    return values[name] ?? null;
  });
}
