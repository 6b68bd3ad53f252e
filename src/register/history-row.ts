/**
 * Where a payee's history sits in a SQLite register: the row whose id is the first 48 bits of
 * its payee key. A payee key is the keyed hash of the payee in base64url (fingerprints.ts), so
 * its first eight characters are 48 random bits, and the id finds the history in one descent of
 * the table's B-tree where the key (scope, payee) took two: its index's, then the table's.
 * `validate` reads the history of every payee of a sheet, a third of a million for a million
 * rows, and the descents were most of the time SQLite spent on them.
 *
 * The id is a place to look first, never a proof: the table still holds (scope, payee) unique,
 * and a payee whose id another payee's history took first (two keys alike in 48 bits, or a key
 * of another form) is written under an id of SQLite's choosing and found by its key. Since
 * histories are never deleted, an id with no row means no history at all: a history is
 * written elsewhere only when its own id was already taken, and stays taken.
 */

/** The characters of base64url, each standing for its index. */
const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Characters of the key the id is made of: 6 bits each, 48 in all, exact in a double. */
const ID_CHARACTERS = 8;

/** The value of each character code that is a base64url digit; -1 for the rest. */
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < DIGITS.length; i++) VALUE[DIGITS.charCodeAt(i)] = i;

/** The row id a payee's history is written under when it is free; undefined for a key of another form. */
export function historyRowId(payee: string): number | undefined {
  if (payee.length < ID_CHARACTERS) return undefined;
  let id = 0;
  for (let i = 0; i < ID_CHARACTERS; i++) {
    const code = payee.charCodeAt(i);
    const value = code < 128 ? VALUE[code]! : -1;
    if (value < 0) return undefined;
    id = id * 64 + value;
  }
  return id;
}

/**
 * historyRowId in SQL, of the text `column` (NULL where it is undefined): what SQLite writes a
 * history under, in the statement that writes it and in the migration that gave the table ids.
 */
export function historyRowIdSql(column: string): string {
  const digit = '[A-Za-z0-9_-]';
  const terms = Array.from(
    { length: ID_CHARACTERS },
    (_, i) => `(instr('${DIGITS}', substr(${column}, ${i + 1}, 1)) - 1) * ${64 ** (ID_CHARACTERS - 1 - i)}`,
  );
  return `(CASE WHEN ${column} GLOB '${digit.repeat(ID_CHARACTERS)}*' THEN ${terms.join(' + ')} END)`;
}
