import type Database from 'libsql';
import { IdFilter } from './id-filter.js';
import type { SandboxDb } from './store.js';

type Statement = Database.Statement<unknown[]>;
type Cell = string | number | null;

/** A kind of record as its table keeps it: the record as JSON, and columns the ledger queries. */
export interface TableSpec<T> {
  name: string;
  /** Columns beside `id` and `record`, each with its value for a record. */
  columns?: Readonly<Record<string, (record: T) => Cell>>;
  /** Columns to index, for lookups other than by id. */
  indexes?: readonly (readonly string[])[];
  /** Records held as objects per generation; RECENT_RECORDS unless said otherwise. */
  recent?: number;
}

/**
 * Records a request may still touch: the flows in flight make, read and change what they made a
 * moment ago. Two generations of this many, so a record is held at least this many writes.
 */
export const RECENT_RECORDS = 256;

/**
 * Records of one kind, by id, in the order they were first added (a Map's order, which the
 * ledger shows). The recent ones are objects in memory; the rest rows of the store, read back
 * when asked for, unless the filter of ids added says the id is unknown (the store's answer costs
 * more than a request's work). Writes reach the store in one transaction per generation, not one
 * per record.
 * A record taken from here is a copy once it has left memory: change it, then `replace` it.
 */
export class RecordTable<T> {
  private young = new Map<string, T>();
  private old = new Map<string, T>();
  /** Ids in `young` whose record the store does not have yet. */
  private readonly unwritten = new Set<string>();
  private readonly ids = new IdFilter();
  private count = 0;
  private readonly recent: number;
  private readonly columnNames: string[];
  private readonly columnValues: Array<(record: T) => Cell>;
  private readonly upsert: Statement;
  private readonly byId: Statement;

  constructor(
    private readonly db: SandboxDb,
    private readonly spec: TableSpec<T>,
  ) {
    this.recent = spec.recent ?? RECENT_RECORDS;
    const columns = Object.entries(spec.columns ?? {});
    this.columnNames = columns.map(([name]) => name);
    this.columnValues = columns.map(([, value]) => value);
    const extra = this.columnNames.map((name) => `, ${name}`).join('');
    db.exec(`CREATE TABLE ${spec.name} (id TEXT PRIMARY KEY, record TEXT NOT NULL${extra})`);
    for (const index of spec.indexes ?? []) {
      db.exec(`CREATE INDEX ${spec.name}_${index.join('_')} ON ${spec.name} (${index.join(', ')})`);
    }
    const names = ['id', 'record', ...this.columnNames];
    // An update keeps the row (and its rowid), so a replaced record keeps its place in the order.
    const updates = names.slice(1).map((name) => `${name} = excluded.${name}`);
    this.upsert = db.prepare(
      `INSERT INTO ${spec.name} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ` +
        `ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`,
    );
    this.byId = db.prepare(`SELECT record FROM ${spec.name} WHERE id = ?`);
  }

  /** How many records were added. */
  get size(): number {
    return this.count;
  }

  /** The record of `id`, or undefined. */
  get(id: string): T | undefined {
    const recent = this.young.get(id) ?? this.old.get(id);
    if (recent !== undefined) return recent;
    if (!this.ids.mayHave(id)) return undefined;
    const row = this.byId.get(id) as { record: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.record) as T);
  }

  /** Adds the record of a new id. */
  add(id: string, record: T): void {
    this.count += 1;
    this.ids.add(id);
    this.remember(id, record);
  }

  /** Replaces the record of an id added before; it keeps its place in the order. */
  replace(id: string, record: T): void {
    this.remember(id, record);
  }

  /** Every record, in the order they were added. */
  *values(): IterableIterator<T> {
    for (const record of this.rows('', [])) yield record;
  }

  /**
   * The records a condition on the columns selects (`where` is SQL over them, with `?` for
   * `params`), in the order they were added, or newest first.
   */
  *rows(where: string, params: readonly Cell[], newestFirst = false): IterableIterator<T> {
    this.write();
    const sql =
      `SELECT record FROM ${this.spec.name}${where === '' ? '' : ` WHERE ${where}`} ` +
      `ORDER BY rowid${newestFirst ? ' DESC' : ''}`;
    for (const row of this.db.prepare(sql).iterate(...params)) {
      yield JSON.parse((row as { record: string }).record) as T;
    }
  }

  /** Writes what the store does not have yet, so that SQL over the table sees every record. */
  write(): void {
    if (this.unwritten.size === 0) return;
    this.db.exec('BEGIN');
    try {
      for (const id of this.unwritten) {
        const record = this.young.get(id) as T;
        this.upsert.run(id, JSON.stringify(record), ...this.columnValues.map((value) => value(record)));
      }
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
    this.unwritten.clear();
  }

  private remember(id: string, record: T): void {
    if (this.young.size >= this.recent && !this.young.has(id)) {
      this.write();
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(id, record);
    this.unwritten.add(id);
  }
}
