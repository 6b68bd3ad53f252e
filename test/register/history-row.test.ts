import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { historyRowId, historyRowIdSql } from '../../src/register/history-row.js';

describe('a payee history’s row id', () => {
  it('is the first 48 bits of a base64url key, the same in JavaScript and in SQLite, and none for a key of another form', () => {
    const db = new Database(':memory:');
    const inSql = db.prepare(`SELECT ${historyRowIdSql(':payee')} AS id`);
    const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // Keys as the register's fingerprints are: 32 digits, here drawn by a fixed sequence.
    let seed = 7;
    const keys = Array.from({ length: 500 }, () =>
      Array.from({ length: 32 }, () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return digits[seed % 64];
      }).join(''),
    );
    const cases = [
      ...keys,
      '________________',
      'AAAAAAAA',
      '--------x',
      'payee-a',
      'payee-ab',
      'payee.ab',
      'ÄBCDEFGHIJ',
      'abcdefg😀',
      'abc😀defghij',
      '',
    ];
    for (const payee of cases) {
      const { id } = inSql.get({ payee }) as { id: number | null };
      expect([payee, id ?? undefined]).toEqual([payee, historyRowId(payee)]);
    }
    expect(historyRowId('AAAAAAAAzzz')).toBe(0);
    expect(historyRowId('________')).toBe(2 ** 48 - 1);
    expect(historyRowId('BAAAAAAA')).toBe(64 ** 7);
    expect(historyRowId('payee-ab')).toBe(historyRowId('payee-abXYZ'));
    expect(historyRowId('payee-a')).toBeUndefined();
    expect(historyRowId('payee.ab')).toBeUndefined();
    expect(historyRowId('ÄBCDEFGHIJ')).toBeUndefined();
    db.close();
  });
});
