/**
 * What crosses between `validate`'s two threads (src/batch/validate/worker-codec.ts): rows sent to the
 * worker, and the verdicts it sends back, each packed and read back as they were.
 */
import { describe, expect, it } from 'vitest';
import {
  describeError,
  digestedAt,
  packRows,
  rebuildError,
  unpackRows,
  VerdictPacker,
  verdictAt,
} from '../../src/batch/validate/worker-codec.js';
import { type RowVerdict, VALID, validNewPayee } from '../../src/batch/verdicts.js';
import { EXIT, RegisterError, SheetError, StorageError } from '../../src/errors.js';
import { EMPTY_CELL, type RawRow } from '../../src/sheet/types.js';

const verdicts: RowVerdict[] = [
  VALID,
  {
    status: 'invalid',
    errors: ['routingNumber must be 9 characters long', 'bankName must be provided'],
    errorColumns: [13, 14],
  },
  VALID,
  {
    status: 'skipped',
    errors: [
      'already paid: submitted on 2026-11-24T08:09:46Z from sheet april.csv as transaction tx-0, so it was not sent again',
    ],
    errorColumns: [],
    recipientId: 'rcp-1',
    transactionId: 'tx-0',
  },
  { status: 'valid', errors: [], errorColumns: [], beneficiaryId: 'ben-7', recipientId: 'rcp-7' },
  { status: 'invalid', errors: ['a message with; a semicolon\nand a line break'], errorColumns: [0] },
  // Any code units travel as they are, a lone surrogate too, and a long message.
  {
    status: 'failed',
    errors: ['\ud800 \u0000 \uffff', 'x'.repeat(70_000)],
    errorColumns: [70_000],
    transactionId: 'tx\u{1f600}',
  },
];

/**
 * Whether each verdict's row is in the batch digest: the second is invalid on the sheet, the
 * sixth refused by the register (paid with other details), whose row is hashed all the same.
 */
const digested = [true, false, true, true, true, true, true];

describe('the verdicts of a validate worker', () => {
  it('are read back from their packing as they were, VALID as the shared VALID', () => {
    const packer = new VerdictPacker(8);
    for (const [i, verdict] of verdicts.entries()) packer.add(i + 2, verdict, digested[i]!);
    expect(packer.notValid).toBe(5);
    expect(packer.full).toBe(false);
    const batch = structuredClone(packer.take());
    expect([...batch.rowNumbers]).toEqual([2, 3, 4, 5, 6, 7, 8]);
    const read = verdicts.map((_, i) => verdictAt(batch, i));
    expect(read).toEqual(verdicts);
    expect(read[0]).toBe(VALID);
    expect(read[2]).toBe(VALID);
    expect(verdicts.map((_, i) => digestedAt(batch, i))).toEqual(digested);
    // Absent ids stay absent: the results file writes '' for them either way, XLSX notes too.
    expect(Object.keys(read[1]!)).toEqual(['status', 'errors', 'errorColumns']);
    // The packer starts afresh after a batch is taken.
    expect(packer.rows).toBe(0);
    packer.add(9, verdicts[1]!, false);
    expect(verdictAt(packer.take(), 0)).toEqual(verdicts[1]);
  });

  it("say a new payee's valid row is in the digest, and refuse a valid row said not to be", () => {
    const packer = new VerdictPacker(4);
    packer.add(2, validNewPayee('Ana Souza'), true);
    const batch = packer.take();
    expect(verdictAt(batch, 0)).toEqual(validNewPayee('Ana Souza'));
    expect(digestedAt(batch, 0)).toBe(true);
    expect(() => packer.add(3, VALID, false)).toThrow('row 3 is valid yet not in the digest');
  });

  it('start afresh after a batch that was not full: a VALID row where a message was before', () => {
    const packer = new VerdictPacker(4);
    packer.add(2, verdicts[1]!, false);
    packer.add(3, verdicts[3]!, true);
    expect(verdictAt(packer.take(), 1)).toEqual(verdicts[3]);
    packer.add(4, VALID, true);
    packer.add(5, VALID, true);
    const batch = packer.take();
    expect([...batch.rowNumbers]).toEqual([4, 5]);
    expect(verdictAt(batch, 0)).toBe(VALID);
    expect(verdictAt(batch, 1)).toBe(VALID);
  });

  it('fill up at their capacity', () => {
    const packer = new VerdictPacker(2);
    packer.add(2, VALID, true);
    packer.add(3, VALID, true);
    expect(packer.full).toBe(true);
    const batch = packer.take();
    expect(batch.rowNumbers).toHaveLength(2);
    expect(batch.text).toBe('');
  });
});

const text = (value: string) => ({ text: value, kind: 'string' as const });

describe('the rows a validate worker is sent', () => {
  it('are cut back into the cells they were, empty cells as the shared EMPTY_CELL', () => {
    const rows: RawRow[] = [
      { rowNumber: 2, cells: [text('REF-1'), EMPTY_CELL, text('10.00')], problems: [] },
      // Rows of other widths, with the reader's problems, and blank lines between row numbers.
      {
        rowNumber: 5,
        cells: [text('REF-2'), text('a "quoted", cell\r\nover lines'), EMPTY_CELL, text('extra')],
        problems: ['row has 4 fields but the header has 3'],
      },
      { rowNumber: 6, cells: [], problems: [] },
      // Any code units travel as they are; a cell longer than 0xffff units takes the long size.
      {
        rowNumber: 70_000,
        cells: [text('\u0000\u001f\u001e\uffff\ud800'), text('x'.repeat(70_000)), text('\u{1f600}')],
        problems: [],
      },
    ];
    const batch = structuredClone(packRows(rows));
    expect(batch.text).toHaveLength(5 + 5 + 5 + 28 + 5 + 5 + 70_000 + 2);
    const read = [...unpackRows(batch)];
    expect(read).toEqual(rows);
    expect(read[0]!.cells[1]).toBe(EMPTY_CELL);
    expect(read[1]!.cells[2]).toBe(EMPTY_CELL);
  });

  it('are CSV cells: text or empty, nothing the worker would read back as another kind', () => {
    const row: RawRow = { rowNumber: 2, cells: [{ text: '45000', kind: 'number' }], problems: [] };
    expect(() => packRows([row])).toThrow('a number cell cannot cross to the validation worker');
  });
});

describe('an error from the worker thread', () => {
  const crossed = (error: unknown) => rebuildError(structuredClone(describeError(error)));

  it('a register error keeps its class, words and exit code (2 before sending, 6 after)', () => {
    const error = new RegisterError('the register /data/register.db cannot be opened', {
      path: '/data/register.db',
      errno: 'SQLITE_BUSY',
    });
    const back = crossed(error);
    expect(back).toBeInstanceOf(RegisterError);
    expect(back.message).toBe(error.message);
    expect((back as RegisterError).errno).toBe('SQLITE_BUSY');
    expect((back as RegisterError).exitCode).toBe(EXIT.usage);
    expect((crossed(error.sent()) as RegisterError).exitCode).toBe(EXIT.unavailable);
  });

  it('a results file error stays a storage error, a sheet error names its file', () => {
    const storage = crossed(
      new StorageError('cannot write the results file out.csv', { path: 'out.csv', errno: 'ENOSPC' }),
    );
    expect(storage).toBeInstanceOf(StorageError);
    expect(storage).not.toBeInstanceOf(RegisterError);
    expect(storage.message).toBe(
      'cannot write the results file out.csv: no space left on the device (the disk is full) (ENOSPC)',
    );
    const sheet = crossed(new SheetError('payouts.csv', 'row 3: not UTF-8'));
    expect(sheet).toBeInstanceOf(SheetError);
    expect(sheet.message).toBe('payouts.csv: row 3: not UTF-8');
  });
});
