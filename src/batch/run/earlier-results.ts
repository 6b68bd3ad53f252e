/**
 * The results file an earlier run of the same sheet left where this run writes its own: read in
 * step with the rows when this run stops before reaching some of them, so that a row an earlier
 * run paid keeps its status and transaction id instead of reading "not sent" (the results file
 * never reports less than was known). Only a file of the same columns is read, and a row only
 * where its row number and reference are those of the row now; anything else is left unsaid.
 */
import { existsSync } from 'node:fs';
import type { ColumnIndex } from '../../columns/columns.js';
import { openSheet } from '../../sheet/open.js';
import { RESULT_COLUMNS, resultsLayout } from '../../sheet/results.js';
import type { RawRow } from '../../sheet/types.js';
import type { RowResult } from '../summary.js';
import type { SentRow } from './result-spool.js';

/** Earlier outcomes worth keeping: a transaction exists or may exist for the row. */
const KEPT: ReadonlySet<string> = new Set(['submitted', 'completed', 'unknown']);

export class EarlierResults {
  private next: IteratorResult<RawRow> | undefined;

  private constructor(
    private readonly rows: AsyncIterator<RawRow>,
    private readonly at: { reference: number; result: Record<(typeof RESULT_COLUMNS)[number], number> },
    private readonly close: () => Promise<void>,
  ) {}

  /**
   * The earlier results at `file` for a sheet of `headers`, or undefined when there is none of
   * that shape (none yet, another sheet's, unreadable: nothing is said of any row then).
   */
  static async open(
    file: string,
    headers: readonly string[],
    index: ColumnIndex,
  ): Promise<EarlierResults | undefined> {
    const reference = index.get('reference');
    if (!existsSync(file) || reference === undefined) return undefined;
    const layout = resultsLayout(headers);
    try {
      const sheet = await openSheet(file);
      if (sheet.headers.join('\u0000') !== layout.headers.join('\u0000')) {
        await sheet.close?.();
        return undefined;
      }
      const result = Object.fromEntries(
        RESULT_COLUMNS.map((name) => [name, layout.headers.indexOf(name)]),
      ) as Record<(typeof RESULT_COLUMNS)[number], number>;
      return new EarlierResults(
        sheet.rows[Symbol.asyncIterator](),
        { reference: layout.outputOf[reference]!, result },
        async () => {
          await sheet.close?.();
        },
      );
    } catch {
      return undefined;
    }
  }

  /**
   * What the earlier run said of sheet row `rowNumber` with `reference`, when it paid it or may
   * have (submitted, completed, unknown, or any status with a transaction id); rows are asked in
   * increasing row number.
   */
  async outcomeOf(rowNumber: number, reference: string): Promise<SentRow | undefined> {
    for (;;) {
      this.next ??= await this.rows
        .next()
        .catch((): IteratorResult<RawRow> => ({ done: true, value: undefined }));
      if (this.next.done) return undefined;
      const row = this.next.value;
      const earlier = Number(this.cell(row, 'result.row'));
      if (!Number.isSafeInteger(earlier) || earlier < rowNumber) {
        this.next = undefined;
        continue;
      }
      if (earlier > rowNumber || row.cells[this.at.reference]?.text !== reference) return undefined;
      this.next = undefined;
      return this.outcome(row, rowNumber);
    }
  }

  /** Stops reading. */
  async dispose(): Promise<void> {
    await this.rows.return?.(undefined).catch(() => {});
    await this.close().catch(() => {});
  }

  private outcome(row: RawRow, rowNumber: number): SentRow | undefined {
    const status = this.cell(row, 'result.status') as RowResult['status'];
    const transactionId = this.cell(row, 'result.transactionId');
    if (!KEPT.has(status) && transactionId === '') return undefined;
    const errors = this.cell(row, 'result.errors');
    const kept: SentRow = {
      status,
      errors: errors === '' ? [] : errors.split('; '),
      rowNumber,
      // Decided before this run, as the register decides a paid row: no warnings of this run.
      fromRegister: true,
    };
    for (const [field, column] of [
      ['beneficiaryId', 'result.beneficiaryId'],
      ['recipientId', 'result.recipientId'],
      ['simulationId', 'result.simulationId'],
      ['transactionId', 'result.transactionId'],
    ] as const) {
      const value = this.cell(row, column);
      if (value !== '') kept[field] = value;
    }
    return kept;
  }

  private cell(row: RawRow, column: (typeof RESULT_COLUMNS)[number]): string {
    return row.cells[this.at.result[column]]?.text ?? '';
  }
}
