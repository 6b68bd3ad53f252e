/**
 * The one write queue of both stores (group-commit.ts) and the statements it runs through
 * (sql.ts), against a driver that records every statement: which transaction each write lands
 * in, in what order, and what a failure undoes. contract.test.ts holds the stores to the same.
 */
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/register/group-commit.js';
import { compile, type Driver, type Sql, valuesOf } from '../../src/register/sql.js';

class DriverError extends Error {
  code = 'DRIVER';
}

/** A driver whose one connection writes each statement to `log`; `failing` statements throw. */
function recordingDriver(failing: string[] = []) {
  const log: string[] = [];
  const run = async (text: string) => {
    log.push(text);
    if (failing.includes(text)) throw new DriverError(`${text} failed`);
  };
  const sql: Sql = {
    rows: async (text) => {
      await run(text);
      return [];
    },
    changed: async (text) => {
      await run(text);
      return 1;
    },
    exec: run,
  };
  const driver: Driver = {
    begin: 'BEGIN',
    connection: (work) => work(sql),
    isDriverError: (error) => error instanceof DriverError,
    outage: () => undefined,
    failure: (what, error) =>
      error instanceof DriverError ? new Error(`the register ${what}`) : (error as Error),
    close: async () => {},
  };
  return { driver, log };
}

describe('GroupCommit', () => {
  it('commits the writes of one tick in one transaction, each in a savepoint, in order', async () => {
    const { driver, log } = recordingDriver();
    const writes = new GroupCommit(driver, 'test', false);
    const results = await Promise.all([
      writes.write(async (sql) => {
        await sql.changed('A');
        return 'a';
      }),
      writes.write(async (sql) => {
        await sql.changed('B');
        return 'b';
      }),
    ]);
    expect(results).toEqual(['a', 'b']);
    expect(log).toEqual([
      'BEGIN',
      'SAVEPOINT w',
      'A',
      'RELEASE SAVEPOINT w',
      'SAVEPOINT w',
      'B',
      'RELEASE SAVEPOINT w',
      'COMMIT',
    ]);
    // A later tick is a later transaction.
    log.length = 0;
    await writes.write((sql) => sql.changed('C'));
    expect(log).toEqual(['BEGIN', 'SAVEPOINT w', 'C', 'RELEASE SAVEPOINT w', 'COMMIT']);
  });

  it('undoes a write that fails on its own and commits the others; its error in words when the driver threw', async () => {
    const { driver, log } = recordingDriver(['BAD']);
    const writes = new GroupCommit(driver, 'test', false);
    const [ok, bug, bad] = await Promise.allSettled([
      writes.write((sql) => sql.changed('A')),
      writes.write(async () => {
        throw new TypeError('a bug');
      }),
      writes.write((sql) => sql.changed('BAD')),
    ]);
    expect(ok).toEqual({ status: 'fulfilled', value: 1 });
    expect(bug).toMatchObject({ status: 'rejected', reason: new TypeError('a bug') });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('the register cannot be written') });
    expect(log.filter((s) => s.startsWith('ROLLBACK'))).toEqual([
      'ROLLBACK TO SAVEPOINT w',
      'ROLLBACK TO SAVEPOINT w',
    ]);
    expect(log.at(-1)).toBe('COMMIT');
  });

  it('rejects every write of a group whose transaction fails', async () => {
    const { driver, log } = recordingDriver(['COMMIT']);
    const writes = new GroupCommit(driver, 'test', false);
    const outcomes = await Promise.allSettled([
      writes.write((sql) => sql.changed('A')),
      writes.write((sql) => sql.changed('B')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(log.at(-1)).toBe('ROLLBACK');
  });

  it('sends a write alone at once, outside any transaction, and waits for it on close', async () => {
    const { driver, log } = recordingDriver();
    const writes = new GroupCommit(driver, 'test', false);
    const alone = writes.write((sql) => sql.changed('ALONE'), { alone: true });
    const queued = writes.write((sql) => sql.changed('QUEUED'));
    expect(log).toEqual(['ALONE']);
    await writes.close();
    await expect(alone).resolves.toBe(1);
    await expect(queued).resolves.toBe(1);
    await expect(writes.write((sql) => sql.changed('LATE'))).rejects.toThrow('register test is closed');
    expect(log).not.toContain('LATE');
  });

  it('refuses every write of a register opened read-only', async () => {
    const { driver, log } = recordingDriver();
    const writes = new GroupCommit(driver, 'test', true);
    await expect(writes.write((sql) => sql.changed('A'))).rejects.toThrow('was opened read-only');
    await expect(writes.transaction((sql) => sql.changed('A'))).rejects.toThrow('was opened read-only');
    expect(log).toEqual([]);
  });
});

describe('compile', () => {
  const text = 'UPDATE t SET a = :a, b = :b::text WHERE a = :a AND c = ANY(:list::text[])';

  it('gives SQLite a `?` and a value per occurrence', () => {
    const compiled = compile(text, false);
    expect(compiled.text).toBe('UPDATE t SET a = ?, b = ?::text WHERE a = ? AND c = ANY(?::text[])');
    expect(valuesOf(compiled, { a: 1, b: undefined, list: ['x'] })).toEqual([1, null, 1, ['x']]);
  });

  it('gives PostgreSQL one numbered parameter per name, casts left as they are', () => {
    const compiled = compile(text, true);
    expect(compiled.text).toBe('UPDATE t SET a = $1, b = $2::text WHERE a = $1 AND c = ANY($3::text[])');
    expect(valuesOf(compiled, { a: 1, b: 'x', list: [], unused: 2 })).toEqual([1, 'x', []]);
  });

  it('refuses a statement missing a value (a bug, not a NULL)', () => {
    expect(() => valuesOf(compile('SELECT :missing', true), {})).toThrow('no value for :missing');
  });
});
